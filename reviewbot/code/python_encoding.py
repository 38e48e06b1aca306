"""What Python reads from a source file's bytes, next to what reviewbot read.

reviewbot reads every file as UTF-8 (a bad byte becomes U+FFFD). Python honours a byte-order
mark and a PEP 263 coding declaration (`# -*- coding: latin-1 -*-`) in the first two lines.
For a codec that keeps ASCII as it is (latin-1, cp1252, the ISO 8859 family) only the
non-ASCII characters differ, and a file parses once they are read as letters again. A codec
that does not (UTF-7, UTF-16, ...) makes Python read other code than any reader sees: a UTF-7
comment can hold a whole statement.
"""

from __future__ import annotations

import codecs
import re
from functools import lru_cache

from reviewbot.lazy_re import lazy_re

# PEP 263's own pattern, on one of the first two lines.
_COOKIE = lazy_re(r"^[ \t\f]*#.*?coding[:=][ \t]*(?P<name>[-\w.]+)", re.MULTILINE)
# Every ASCII byte, and what UTF-7 would read as "a" (`+AGEA-`): a codec that keeps this
# as it is shows Python's code to a reader as it is.
_ASCII = bytes(range(128)) + b"+AGEA-"


def declared_codec(text: str) -> str | None:
    """The codec a Python file declares in its first two lines, or None."""
    head = "\n".join(text.split("\n", 2)[:2])
    match = _COOKIE.search(head)
    return match.group("name") if match else None


@lru_cache(maxsize=64)
def keeps_ascii(name: str) -> bool:
    """Whether a codec reads ASCII as ASCII (an unknown codec is no codec: Python refuses
    the file, and so nothing hides in it)."""
    try:
        codec = codecs.lookup(name).name
    except LookupError:
        return True
    try:
        return _ASCII.decode(codec) == _ASCII.decode("ascii")
    except UnicodeDecodeError:
        return False


def python_source(text: str) -> str:
    """The text as Python would parse it, as far as reviewbot's UTF-8 reading allows: no
    byte-order mark, and a non-UTF-8 file's unreadable bytes (inside names, too) as letters,
    so a latin-1 module with an accented name still parses. Lines and columns stay."""
    text = text.removeprefix("\ufeff")
    codec = declared_codec(text) if "\ufffd" in text else None
    if codec is not None and keeps_ascii(codec):
        return text.replace("\ufffd", "_")
    return text
