"""Text that comes from outside (a server, the reviewed repository's file names) made safe
to print on a terminal."""

from __future__ import annotations

from reviewbot.lazy_re import lazy_re

_CONTROL = lazy_re(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]+")


def printable(text: str) -> str:
    """Control characters and bidi overrides become one space, so no escape sequence runs
    and no forged line ("all checks passed") starts."""
    return _CONTROL.sub(" ", text).strip()


# Every control character but the line break and the tab, and the bidi overrides.
_HIDDEN = lazy_re(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """Text from a model or the reviewed repository for any output (Markdown, a comment, a
    job summary): line breaks and tabs kept, every other control character and bidi override
    replaced by U+FFFD, so no escape sequence runs and no line is reordered."""
    return _HIDDEN.sub("\ufffd", text)
