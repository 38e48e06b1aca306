"""One scorer for every tool: a finding names a labelled defect when it is on the defect's
file, within SLACK lines of its lines, and (for "place and reason") its text holds one of the
defect's words. Precision counts every finding (a remark on a clean change is a false
positive), recall every defect."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from .case import Case, Defect

SLACK = 2


@dataclass(frozen=True)
class Remark:
    """A finding as any tool gave it: where, and everything it says (title and text)."""

    path: str
    start: int
    end: int
    text: str

    def to_data(self) -> dict[str, object]:
        return {"path": self.path, "start": self.start, "end": self.end, "text": self.text}

    @classmethod
    def from_data(cls, data: Mapping[str, object]) -> Remark:
        start = int(str(data["start"]))
        return cls(path=str(data["path"]), start=start,
                   end=max(start, int(str(data.get("end") or start))),
                   text=str(data.get("text") or ""))


@cache
def _pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    # At the start of a word, open at its end: "leak" names "leaks", not "bleak".
    return re.compile("|".join(rf"(?<![A-Za-z0-9_]){re.escape(w)}" for w in words),
                      re.IGNORECASE)


def names(text: str, defect: Defect) -> bool:
    return bool(defect.words) and _pattern(defect.words).search(text) is not None


def at_place(remark: Remark, defect: Defect) -> bool:
    return (remark.path == defect.path and remark.start - SLACK <= defect.last
            and defect.line <= remark.end + SLACK)


def hits(remark: Remark, defect: Defect, reason: bool) -> bool:
    return at_place(remark, defect) and (not reason or names(remark.text, defect))


def found(case: Case, remarks: Sequence[Remark], reason: bool) -> tuple[Defect, ...]:
    """The case's defects some remark names."""
    return tuple(d for d in case.defects if any(hits(r, d, reason) for r in remarks))


@dataclass(frozen=True)
class Tally:
    """Defects found (tp) and missed (fn), findings that name no defect (fp), and the
    findings on clean changes among them."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    clean_remarks: int = 0

    def __add__(self, other: Tally) -> Tally:
        return Tally(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn,
                     self.clean_remarks + other.clean_remarks)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def tally(case: Case, remarks: Sequence[Remark], reason: bool) -> Tally:
    hit = found(case, remarks, reason)
    stray = sum(1 for r in remarks if not any(hits(r, d, reason) for d in case.defects))
    return Tally(tp=len(hit), fp=stray, fn=len(case.defects) - len(hit),
                 clean_remarks=len(remarks) if case.clean else 0)


def score(results: Iterable[tuple[Case, Sequence[Remark]]], reason: bool) -> Tally:
    total = Tally()
    for case, remarks in results:
        total += tally(case, remarks, reason)
    return total
