"""Text that comes from outside (a server, the reviewed repository's file names) made safe
to print on a terminal."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]+")


def printable(text: str) -> str:
    """Control characters and bidi overrides become one space, so no escape sequence runs
    and no forged line ("all checks passed") starts."""
    return _CONTROL.sub(" ", text).strip()
