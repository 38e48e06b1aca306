"""Patterns searched over whole files: RE2 (google-re2), which answers a pattern in one pass
over the text whatever its alternatives. Python's `re` tries every alternative at most
positions of the text, so an alternation of forty words over a new module of 800 lines
costs it forty scans.

RE2 has no backreferences or lookarounds (a pattern using them fails at import, in every
test), and its `\\b`, `\\w`, `\\d` and `\\s` are ASCII: a word next to a non-ASCII letter
still starts at the letter's edge. A search that outgrows RE2's fast matcher falls back to
its slower one; it never gives a wrong answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol, cast

import re2


class WholeTextMatch(Protocol):
    def start(self) -> int: ...
    def end(self) -> int: ...
    def group(self, index: int = 0) -> bytes: ...


class WholeTextPattern(Protocol):
    """Searched in UTF-8 (`text.encode()`, once for all the patterns that look at a text):
    positions are byte offsets."""

    def search(self, text: bytes, pos: int = 0) -> WholeTextMatch | None: ...
    def finditer(self, text: bytes) -> Iterator[WholeTextMatch]: ...


def compile_whole_text(pattern: str) -> WholeTextPattern:
    """A pattern for RE2."""
    options = re2.Options()
    options.never_capture = True
    options.log_errors = False
    return cast(WholeTextPattern, re2.compile(pattern, options))
