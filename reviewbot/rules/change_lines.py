"""The code lines every file of one change adds, for a rule that asks whether a line a file
lost was added somewhere else (moved, not deleted: a check that went into a base class's new
module).

Only code counts as the line come back: in a file of the same language, not on a comment
line, not inside a string (a Python docstring). A guard's lines pasted into a Markdown page,
a comment or a docstring are text about the guard, not the guard.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Callable
from functools import cached_property
from typing import NamedTuple

from reviewbot.code.lexical import comment_flags
from reviewbot.lazy_re import lazy_re
from reviewbot.schema.units import ReviewUnit

ReadText = Callable[[str], str | None]
_PYTHON_DEF = lazy_re(r"(?:async )?def (\w+)\s*\(")


def normal_line(text: str) -> str:
    return " ".join(text.split())


def _no_text(path: str) -> str | None:
    return None


class _Added(NamedTuple):
    language: str
    path: str
    number: int
    text: str
    # The next non-blank line of the new side in its hunk ("" at the hunk's end).
    following: str


class ChangeLines:
    """Built on the first question, so a change nobody asks about pays nothing; forked
    workers inherit it unbuilt. `read_new` reads a changed file (to tell a Python line inside
    a string); without it no line is taken for a string's."""

    def __init__(self, units: tuple[ReviewUnit, ...] = (),
                 read_new: ReadText = _no_text) -> None:
        self._units = units
        self._read_new = read_new
        self._strings: dict[str, frozenset[int]] = {}

    @cached_property
    def _added(self) -> dict[str, list[_Added]]:
        """normal text -> where each added code line like it is."""
        found: dict[str, list[_Added]] = {}
        for unit in self._units:
            if unit.hunk is None:
                continue
            lines = [line for line in unit.hunk.lines if line.kind != "del"]
            flags = comment_flags([line.text for line in lines], unit.language)
            for at, (line, comment) in enumerate(zip(lines, flags, strict=True)):
                if line.kind == "add" and not comment and line.new_lineno is not None:
                    following = next((after.text for after in lines[at + 1:]
                                      if after.text.strip()), "")
                    found.setdefault(normal_line(line.text), []).append(_Added(
                        unit.language, unit.file_path, line.new_lineno, line.text, following))
        return found

    def added(self, text: str, language: str,
              also: Callable[[str, str], bool] = lambda line, following: True) -> bool:
        """Whether a line like this one (spacing aside) is added as code of `language`
        anywhere in the change; `also` asks more of it, with the line after it."""
        return any(where.language == language and also(where.text, where.following)
                   and not self._in_string(where.path, where.number)
                   for where in self._added.get(normal_line(text), ()))

    def defines(self, name: str, language: str = "python") -> bool:
        """Whether an added code line anywhere in the change defines a Python function of
        this name (a function moved or rewritten, not deleted)."""
        return any(match.group(1) == name and self.added(text, language)
                   for text in self._added if (match := _PYTHON_DEF.match(text)))

    def _in_string(self, path: str, number: int) -> bool:
        if not path.endswith((".py", ".pyi")) and not self._python(path):
            return False
        if path not in self._strings:
            self._strings[path] = _string_lines(self._read_new(path) or "")
        return number in self._strings[path]

    def _python(self, path: str) -> bool:
        return any(unit.file_path == path and unit.language == "python"
                   for unit in self._units)


def _string_lines(text: str) -> frozenset[int]:
    """The lines of Python source that lie inside a string spanning lines (a docstring)."""
    lines: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.STRING and token.end[0] > token.start[0]:
                lines.update(range(token.start[0], token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # what tokenised up to the error is known
    return frozenset(lines)
