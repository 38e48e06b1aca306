"""Which lines of a Python file are docstrings: prose, whatever words it uses.

Rules use it to tell a documentation-only change from code; the context stage uses it so a
docstring that mentions `pay(amount)` is not taken for a call of `pay`.
"""

from __future__ import annotations

import ast

from reviewbot.code.python_parse import parse_python
from reviewbot.code.python_walk import STATEMENT_BODIES


def docstring_lines(tree: ast.Module | None) -> frozenset[int]:
    """Lines of the module's, classes' and functions' docstrings."""
    if tree is None:
        return frozenset()
    lines: set[int] = set()
    # Only definitions hold docstrings: follow statement bodies, never expressions.
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if (isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                and isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)):
            lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
        for name in STATEMENT_BODIES:
            pending += [s for s in getattr(node, name, None) or () if isinstance(s, ast.AST)]
    return frozenset(lines)


def python_docstring_lines(text: str) -> frozenset[int]:
    """docstring_lines of Python source; empty when it does not parse."""
    tree = parse_python(text)[0]
    return frozenset() if tree is None else docstring_lines(tree)
