"""Where git and a language disagree about where a line ends.

git ends a line at `\n` only, and a diff's line numbers count those. Python's tokenizer (and
JavaScript's) also ends one at a bare `\r`, so a file written with old Mac line endings is one
line to git and many to the parser: the syntax tree's line numbers would point past the one
line the diff added, and every finding in the file would be dropped as "not on the change".
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right

from reviewbot.lazy_re import lazy_re

_BARE_CR = lazy_re(r"\r(?!\n)")
# Python's own line ends (str.splitlines also splits at \v, \f, U+2028 and others).
_PYTHON_BREAK = lazy_re(r"\r\n|\r|\n")


def has_bare_cr(text: str) -> bool:
    return "\r" in text and _BARE_CR.search(text) is not None


def to_git_lines(tree: ast.Module, text: str) -> None:
    """Renumber a tree parsed from `text` in git's lines (in place): a node's line is the
    git line its parser line starts on."""
    starts = [0, *(m.end() for m in _PYTHON_BREAK.finditer(text))]
    newlines = [m.start() for m in re.finditer("\n", text)]
    git_line = [0, *(bisect_right(newlines, start - 1) + 1 for start in starts)]
    last = len(git_line) - 1
    for node in ast.walk(tree):
        for field in ("lineno", "end_lineno"):
            number = getattr(node, field, None)
            if isinstance(number, int):
                setattr(node, field, git_line[min(number, last)])

