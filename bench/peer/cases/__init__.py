"""Every case of the peer bench, in the order a run takes them: the first eleven first (what
an earlier model half found on them is checked case by case), then the others, languages
and shapes interleaved so that a run stopped halfway has measured some of each."""

from __future__ import annotations

from itertools import chain, zip_longest

from ..case import Case
from .go import GO
from .javascript import JAVASCRIPT
from .original import ORIGINAL
from .python import PYTHON


def _spread(cases: tuple[Case, ...]) -> list[Case]:
    """Defects and clean changes taken in turn, in proportion."""
    defects = [c for c in cases if not c.clean]
    clean = [c for c in cases if c.clean]
    return sorted(defects + clean, key=lambda c: (
        (defects.index(c) + 0.5) / len(defects) if not c.clean
        else (clean.index(c) + 0.5) / len(clean)))


def _interleave(*groups: tuple[Case, ...]) -> tuple[Case, ...]:
    turns = zip_longest(*(_spread(group) for group in groups))
    return tuple(c for c in chain.from_iterable(turns) if c is not None)


CASES: tuple[Case, ...] = ORIGINAL + _interleave(PYTHON, JAVASCRIPT, GO)
