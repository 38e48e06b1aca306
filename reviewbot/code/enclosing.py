"""The definitions around lines of Python: what a change inside a function is about.

A hunk deep inside `def login(...)` shows neither the `def` line (git's hunk header names
the top-level class, not the method) nor any word that says "auth"; the definition's first
line does.
"""

from __future__ import annotations

import ast

import msgspec

from reviewbot.code.python_walk import STATEMENT_BODIES


class Header(msgspec.Struct, frozen=True):
    """A function or class: its lines, and its first line (`def as_sql(self, compiler, ...`)."""

    start: int
    end: int
    text: str


def definition_headers(tree: ast.Module | None, text: str | None) -> tuple[Header, ...]:
    """Every function and class of the module, outermost first."""
    if tree is None or text is None:
        return ()
    lines = text.splitlines()
    headers: list[Header] = []
    # Definitions live in statement bodies only: expressions are never walked.
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and node.lineno <= len(lines)):
            headers.append(Header(node.lineno, node.end_lineno or node.lineno,
                                  lines[node.lineno - 1].strip()))
        for name in STATEMENT_BODIES:
            pending += [s for s in getattr(node, name, None) or () if isinstance(s, ast.AST)]
    return tuple(sorted(headers, key=lambda h: (h.start, -h.end)))


def enclosing_headers(headers: tuple[Header, ...], first: int, last: int) -> list[str]:
    """The first lines of the definitions that hold any of the lines first..last."""
    return [h.text for h in headers if h.start <= last and h.end >= first]
