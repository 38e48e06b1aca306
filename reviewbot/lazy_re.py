"""Module-level patterns compiled when first used.

Python's `re` compiles in Python: the hook's modules hold about 150 patterns, most of which a
given change never asks (the JavaScript ones on a Python change, the guard patterns on a new
file), and compiling them all at import was a tenth of the hook's time on a small change.
A lazy pattern compiles on its first use; from then on its methods are the compiled
pattern's own, looked up as plain attributes.

Use a lazy pattern through its methods (`PATTERN.search(text)`); `re.search(PATTERN, ...)`
wants a compiled pattern, and it is no `re.Pattern` to isinstance. It pickles and copies as
its source.
"""

from __future__ import annotations

import re
from typing import Any, cast

# What is copied onto the pattern once compiled: every public attribute of re.Pattern.
_ATTRIBUTES = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split",
               "scanner", "pattern", "flags", "groups", "groupindex")


class _Lazy:
    def __init__(self, pattern: str, flags: int) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        # Only the pattern's own names compile it: pickle and copy look up others (such as
        # `__setstate__`) on an instance that has no `_source` yet.
        if name not in _ATTRIBUTES:
            raise AttributeError(name)
        compiled = re.compile(*self._source)
        self.__dict__.update((attribute, getattr(compiled, attribute))
                             for attribute in _ATTRIBUTES)
        return getattr(compiled, name)

    def __reduce__(self) -> tuple[type[_Lazy], tuple[str, int]]:
        """Pickled and copied as its source (a worker's results come back by pickle)."""
        return _Lazy, self._source

    def __repr__(self) -> str:
        return f"lazy_re({self._source[0]!r})"


def lazy_re(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(pattern, flags)`, done when the pattern is first used."""
    return cast("re.Pattern[str]", _Lazy(pattern, flags))
