"""Step 8: every model finding checked against the change (seed 003's verifier).

A finding passes when its file is in the change and its `evidence` really occurs at its
lines. When the model was a few lines off, the finding is re-anchored to the nearest lines
where the evidence is, and that is recorded. Lines of a changed file outside its hunks keep
the finding with `in_diff: false` (a summary item, never an inline comment). A finding whose
quote is not in the file but whose lines are lines the change adds, and which names code of
those lines (every name it quotes is on them), is kept where the model numbered it: the
model was shown those lines numbered, and a small model misquotes code it read rightly;
its evidence becomes the code really there. What fails is dropped and counted (the agent
tells the model at once, in the answer to `record_finding`). So is a finding whose own words
say the code is fine ("does not affect", "no issue"), or whose title is about what no review
reports (a docstring, naming, formatting): a small model asked for defects files its reading
of a clean change as one.

Then duplicates merge: two model findings at the same place with the same meaning, or a
model finding that restates a rule finding (the rule finding stays).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from reviewbot.diff.lines import DiffIndex
from reviewbot.lazy_re import lazy_re
from reviewbot.levels import SEVERITY_RANK
from reviewbot.schema.findings import Finding
from reviewbot.schema.reviews import Dropped, Reanchored, RecordedFinding

# How far (in lines) a finding may be moved to where its evidence is.
MAX_SHIFT = 8
ReadText = Callable[[str], str | None]


@dataclass(frozen=True)
class Verdict:
    finding: RecordedFinding
    ok: bool
    reason: str = ""
    start: int = 0
    end: int = 0
    in_diff: bool = True

    # Kept by the lines the model numbered, its quote not being in the file.
    by_line: bool = False
    # The code at the kept lines when it is not the model's quote (kept by its lines).
    evidence: str = ""

    @property
    def moved(self) -> bool:
        return self.ok and (self.start, self.end) != (self.finding.start_line,
                                                     self.finding.end_line)


# What a finding says when it says the code is fine: a remark, never a defect. Whole phrases
# only, so "does not close the file" or "no check on the path" stay defects.
_DISMISSES = lazy_re(
    r"\b(?:does(?: not|n't) affect|has no (?:effect|impact) on|no (?:impact|effect) on"
    r"|(?:is|are) not an? (?:issue|problem|bug|defect)|there is no (?:issue|problem|bug)"
    r"|no (?:changes?|action) (?:is |are )?(?:needed|required|necessary)"
    r"|nothing (?:needs|to) (?:be )?(?:changed?|fix(?:ed)?)|looks (?:good|correct|fine)"
    r"|works as (?:expected|intended))\b", re.IGNORECASE)


# What a finding's title names when it is about what the prompts exclude (a docstring,
# naming, formatting): no defect, whatever the text goes on to claim ("missing docstring ...
# which is a security hole").
# ("Formatting" alone is no such word: "SQL built by string formatting" is a defect.)
_OFF_TOPIC = lazy_re(r"\b(?:docstrings?|documentation|type hints?|naming|code formatting"
                        r"|readability|code style|typos?)\b", re.IGNORECASE)


def dismisses(finding: RecordedFinding) -> bool:
    """Whether a finding's own title or text says the code it names is fine, or its title
    is about what no review reports."""
    return bool(_DISMISSES.search(f"{finding.title}\n{finding.message}")
                or _OFF_TOPIC.search(finding.title))


def check(finding: RecordedFinding, index: DiffIndex, read: ReadText) -> Verdict:
    """Whether a finding stands, where it stands, and if not, a reason the model can act on."""
    path = finding.file_path
    if dismisses(finding):
        return Verdict(finding, False, "the finding names no defect (it says the code is "
                                       "fine, or it is about docstrings, naming or style); "
                                       "record defects only, and none when there are none")
    if not index.has_file(path):
        changed = ", ".join(index.files()[:20])
        return Verdict(finding, False, f"{path} is not part of this change; findings must be "
                                       f"about the changed files ({changed})")
    if finding.end_line < finding.start_line:
        return Verdict(finding, False, "end_line is before start_line")
    text = read(path)
    if text is None:
        return Verdict(finding, False, f"{path} cannot be read on the change's new side (a "
                                       "deleted or binary file): point at added lines")
    lines = text.split("\n")
    found = locate(finding.evidence, lines, finding.start_line, finding.end_line)
    if found is not None:
        start, end = found
        return Verdict(finding, True, start=start, end=end,
                       in_diff=index.covers(path, start, end))
    if by_line(finding, index, lines):
        start, end = finding.start_line, finding.end_line
        return Verdict(finding, True, start=start, end=end, in_diff=index.covers(
            path, start, end), by_line=True, evidence="\n".join(lines[start - 1:end]))
    return Verdict(finding, False, _not_found(finding, lines))


# A quote that shares no word this long with the lines it names is about something else.
_NAME = lazy_re(r"[A-Za-z_][A-Za-z0-9_]{2,}")
MAX_LINES_BY_NUMBER = 15


def by_line(finding: RecordedFinding, index: DiffIndex, lines: Sequence[str]) -> bool:
    """Whether a finding whose quote is not in the file stands by its line numbers: its
    lines are in the file, few, touch lines the change adds, and every name it quotes is on
    them (or the line either side): the code was copied loosely, not invented. A quote of
    the old name on a renamed line (`def to_cents(...)` where the line now defines
    `to_minor_units`) is about code that is not there."""
    start, end = finding.start_line, finding.end_line
    if end > len(lines) or end - start >= MAX_LINES_BY_NUMBER:
        return False
    if not index.touches_added(finding.file_path, start, end):
        return False
    quoted = set(_NAME.findall(finding.evidence))
    there = set(_NAME.findall(" ".join(lines[max(start - 2, 0):end + 1])))
    return bool(quoted) and quoted <= there


def _not_found(finding: RecordedFinding, lines: list[str]) -> str:
    where = find_anywhere(finding.evidence, lines)
    place = f" (it is at L{where})" if where else " (nor anywhere in the file)"
    return (f"the evidence is not at {finding.file_path} L{finding.start_line}-"
            f"L{finding.end_line}{place}; quote the code exactly as it is at the lines you "
            "name")


def _norm(text: str) -> str:
    """Whitespace collapsed, and one quote mark for both: a model that copies `'x'` as `"x"`
    quotes the same code."""
    return " ".join(text.replace("'", '"').split())


def locate(evidence: str, lines: Sequence[str], start: int, end: int,
           shift: int = MAX_SHIFT) -> tuple[int, int] | None:
    """Lines holding the evidence: the given range if it does, else the nearest window of the
    same length within `shift` lines, else None."""
    needle = _norm(evidence)
    if not needle:
        return None
    wanted = max(end - start + 1, evidence.strip().count("\n") + 1)
    for offset in sorted(range(-shift, shift + 1), key=abs):
        first = start + offset
        last = first + wanted - 1
        if first < 1 or last > len(lines):
            continue
        if needle in _norm(" ".join(lines[first - 1:last])):
            return _narrow(needle, lines, first, last)
    return None


def find_anywhere(evidence: str, lines: Sequence[str]) -> int | None:
    """The first line where the evidence starts, anywhere in the file."""
    needle = _norm(evidence)
    window = evidence.strip().count("\n") + 1
    first_word = needle.split(" ", 1)[0] if needle else ""
    for index, line in enumerate(lines):
        if first_word in line and needle in _norm(" ".join(lines[index:index + window + 1])):
            return index + 1
    return None


def _narrow(needle: str, lines: Sequence[str], first: int, last: int) -> tuple[int, int]:
    """The smallest sub-range of first..last that still holds the evidence."""
    while first < last and needle in _norm(" ".join(lines[first:last])):
        first += 1
    while last > first and needle in _norm(" ".join(lines[first - 1:last - 1])):
        last -= 1
    return first, last


def to_finding(verdict: Verdict, unit_id: str | None) -> Finding:
    f = verdict.finding
    return Finding(
        file_path=f.file_path, start_line=verdict.start, end_line=verdict.end,
        severity=f.severity, category=f.category, rule_id=f"model.{f.category}",
        title=f.title, message=f.message, suggestion=f.fix_description, source="model",
        unit_id=unit_id, evidence=verdict.evidence or f.evidence, in_diff=verdict.in_diff)


def reanchored(verdict: Verdict) -> Reanchored:
    f = verdict.finding
    return Reanchored(title=f.title, file_path=f.file_path,
                      from_lines=(f.start_line, f.end_line), to_lines=(verdict.start, verdict.end))


def dropped(verdict: Verdict) -> Dropped:
    return Dropped(title=verdict.finding.title, file_path=verdict.finding.file_path,
                   reason=verdict.reason)


# --- duplicates ------------------------------------------------------------------------------

_WORD = lazy_re(r"[a-z0-9]+")
_STOP = frozenset({"a", "an", "the", "of", "in", "to", "is", "and", "or", "on", "for", "with",
                   "be", "can", "may", "not", "this", "that", "it"})
# Categories that describe the same kind of problem from two angles.
_RELATED = {"security": {"security", "secrets", "bug"}, "secrets": {"secrets", "security"},
            "bug": {"bug", "security"}}


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower())) - _STOP


def _similar(a: str, b: str) -> bool:
    left, right = _words(a), _words(b)
    return bool(left and right) and len(left & right) / len(left | right) >= 0.4


def _near(a: Finding, b: Finding, slack: int = 2) -> bool:
    return (a.file_path == b.file_path and a.start_line <= b.end_line + slack
            and b.start_line <= a.end_line + slack)


def _restates(model: Finding, other: Finding) -> bool:
    if other.source == "rule":
        # The same place, a related kind, and a word in common: "SQL injection" restates
        # python.sql-injection; a leaked handle on the next line does not.
        shared = (_words(f"{model.title} {model.message}")
                  & _words(f"{other.title} {other.message} {other.rule_id}"))
        return (_near(model, other, slack=1) and any(len(word) > 2 for word in shared)
                and other.category in _RELATED.get(model.category, {model.category}))
    if not _near(model, other):
        return False
    same_evidence = bool(model.evidence) and _norm(model.evidence) == _norm(other.evidence)
    return other.category == model.category and (_similar(model.title, other.title)
                                                 or same_evidence)


def merge(model: Iterable[Finding], rules: Iterable[Finding]) -> tuple[list[Finding], list[str]]:
    """Model findings without those that restate a rule finding or another model finding
    (the more severe of two twins stays). Returns the kept ones and what merged into what."""
    kept: list[Finding] = []
    merged: list[str] = []
    rule_findings = list(rules)
    ordered = sorted(model, key=lambda f: (-SEVERITY_RANK[f.severity], f.file_path, f.start_line))
    for finding in ordered:
        twin = next((r for r in rule_findings if _restates(finding, r)), None) or next(
            (k for k in kept if _restates(finding, k)), None)
        if twin is None:
            kept.append(finding)
        else:
            into = twin.rule_id if twin.source == "rule" else twin.title
            merged.append(f"{finding.title} -> {into}")
    kept.sort(key=lambda f: (f.file_path, f.start_line, f.rule_id))
    return kept, merged
