"""Every case of the peer bench, in the order a run takes them: the first eleven first (what
an earlier model half found on them is checked case by case)."""

from __future__ import annotations

from ..case import Case
from .original import ORIGINAL

CASES: tuple[Case, ...] = ORIGINAL
