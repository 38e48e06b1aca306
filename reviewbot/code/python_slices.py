"""A Python module's functions read one at a time, without parsing the whole module.

A module too large to parse for every call into it (a file padded with megabytes of data
costs seconds) still holds the function a call names. Its definitions are found by their
`def` line, each function's lines end where tokenize closes its block, and only those lines
are parsed, at their own line numbers. A module-level function starts at the first column;
a method is indented. The module's imports are read the same way, one statement at a time.
"""

from __future__ import annotations

import ast
import re
import tokenize
from bisect import bisect_right
from collections.abc import Iterator

from reviewbot.lazy_re import lazy_re

Function = ast.FunctionDef | ast.AsyncFunctionDef
# Bounds on what one name costs: a `def` line inside a string is read too (tokenize cannot
# know it is in a string without reading the module from its start), so each candidate is
# read at most this far, and at most this many candidates a name.
MAX_STATEMENT_CHARS = 256_000
MAX_CANDIDATES = 16
_IMPORT = lazy_re(r"(?m)^([ \t]*)(?:import|from)[ \t]+[\w.]+")


class ModuleSlices:
    """The functions and imports of a module's text, each parsed when first asked for."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
        self._functions: dict[str, list[Function]] = {}
        self._methods: dict[str, list[Function]] = {}

    def functions(self, name: str) -> list[Function]:
        """Every module-level definition of the name (the last runs, but a `def` line in a
        string cannot be told from one in code here: any of them may be the function)."""
        if name not in self._functions:
            self._functions[name] = [f for f, indent in self._definitions(name) if not indent]
        return self._functions[name]

    def methods(self, name: str) -> list[Function]:
        if name not in self._methods:
            self._methods[name] = [f for f, indent in self._definitions(name) if indent]
        return self._methods[name]

    def imports(self) -> list[ast.stmt]:
        """The module's import statements, wherever they are (`try: import x`)."""
        found: list[ast.stmt] = []
        for match in _IMPORT.finditer(self._text):
            line = bisect_right(self._starts, match.start()) - 1
            statement = self._parsed(line, match.group(1))
            if statement is not None:
                found.append(statement)
        return found

    def _definitions(self, name: str) -> Iterator[tuple[Function, str]]:
        pattern = re.compile(rf"(?m)^([ \t]*)(?:async[ \t]+)?def[ \t]+{re.escape(name)}\b")
        for count, match in enumerate(pattern.finditer(self._text)):
            if count >= MAX_CANDIDATES:
                return
            line = bisect_right(self._starts, match.start()) - 1
            statement = self._parsed(line, match.group(1))
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef) \
                    and statement.name == name:
                yield statement, match.group(1)

    def _parsed(self, line: int, indent: str) -> ast.stmt | None:
        """The statement starting at a line (0-based) with this indent, parsed alone at its
        own line number."""
        lines = self._statement_lines(line)
        if not lines:
            return None
        body = "".join(text[len(indent):] if text.startswith(indent) else text
                       for text in lines)
        try:
            tree = ast.parse("\n" * line + body)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return None
        return tree.body[0] if tree.body else None

    def _statement_lines(self, line: int) -> list[str]:
        """The lines of the statement starting at a line: up to the end of its logical line,
        and for a compound statement up to the end of its indented block."""
        lines: list[str] = []

        def readline() -> str:
            at = line + len(lines)
            if at >= len(self._starts) or self._starts[at] - self._starts[line] \
                    > MAX_STATEMENT_CHARS:
                return ""
            end = self._starts[at + 1] if at + 1 < len(self._starts) else len(self._text)
            lines.append(self._text[self._starts[at]:end])
            return lines[-1]

        try:
            end = _end(tokenize.generate_tokens(readline))
        except (tokenize.TokenError, IndentationError, SyntaxError):
            end = None
        return lines if end is None else lines[:end]


def _end(tokens: Iterator[tokenize.TokenInfo]) -> int | None:
    """How many lines the first statement of the tokens takes (None: all that were read)."""
    depth, base = 0, 0
    header: int | None = None  # the line where the first logical line ends
    for token in tokens:
        kind, row = token.type, token.start[0]
        if header is None:
            depth += kind == tokenize.INDENT
            if kind == tokenize.NEWLINE:
                header, base = row, depth
        elif kind == tokenize.INDENT:
            depth += 1
        elif kind == tokenize.DEDENT:
            depth -= 1
            if depth <= base:
                return row - 1
        elif kind not in (tokenize.NL, tokenize.COMMENT) and depth <= base:
            return header  # no block followed: one logical line
    return None
