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

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from functools import lru_cache
from itertools import accumulate
from typing import Protocol, cast

import msgspec
import re2


class WholeTextMatch(Protocol):
    def start(self) -> int: ...
    def end(self) -> int: ...
    def group(self, index: int = 0) -> bytes: ...


class WholeTextPattern(Protocol):
    """Searched in UTF-8 (`text.encode()`, once for all the patterns that look at a text):
    positions are byte offsets."""

    def search(self, text: bytes, pos: int = 0) -> WholeTextMatch | None: ...
    def fullmatch(self, text: bytes) -> WholeTextMatch | None: ...
    def finditer(self, text: bytes) -> Iterator[WholeTextMatch]: ...


# What `re`'s `\s` matches in text, in RE2's syntax (RE2's own `\s` is ASCII): written for
# `\s` in a pattern whose RE2 search must find at least what its `re` twin finds.
UNICODE_SPACE = (r"[\t-\r\x1c-\x20\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}"
                 r"\x{202f}\x{205f}\x{3000}]")


# Text this long is searched by RE2 over its bytes and what is found in it remembered (a
# minified line); shorter text by `re`, whose cost a call is lower.
LONG_TEXT = 4096


@lru_cache(maxsize=4)
def utf8(text: str) -> bytes:
    """A long text's UTF-8 bytes, for RE2, encoded once for every pattern that reads them (a
    minified bundle's line is megabytes, and the rules, the redaction of the run's records
    and the report each read it). A lone surrogate (a decoded `\\ud800`) is kept as the
    three bytes UTF-8 would give it: no pattern matches them."""
    return text.encode("utf-8", "surrogatepass")


def compile_whole_text(pattern: str) -> WholeTextPattern:
    """A pattern for RE2."""
    options = re2.Options()
    options.never_capture = True
    options.log_errors = False
    return cast(WholeTextPattern, re2.compile(pattern, options))


class JoinedTexts(msgspec.Struct, frozen=True):
    """Texts joined by newlines and encoded once, for one search over all of them: which
    text a match's offset falls in."""

    data: bytes
    starts: tuple[int, ...]

    @classmethod
    def of(cls, texts: Sequence[str]) -> JoinedTexts:
        joined = "\n".join(texts)
        # A lone surrogate (a decoded `\ud800`) is kept as the three bytes UTF-8 would give
        # it: no pattern matches them, and no text can stop the search.
        data = joined.encode(errors="surrogatepass")
        # ASCII text (most code) has its offsets in characters; other text is encoded text
        # by text to know where each begins.
        lengths = ((len(text) for text in texts) if len(data) == len(joined)
                   else (len(text.encode(errors="surrogatepass")) for text in texts))
        return cls(data, tuple(accumulate((length + 1 for length in lengths), initial=0)))

    def index_at(self, offset: int) -> int:
        """The index of the text an offset of `data` falls in."""
        return bisect_right(self.starts, offset) - 1
