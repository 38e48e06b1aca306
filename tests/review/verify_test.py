"""Step 8's checks: anchoring, re-anchoring, what is sent back, and duplicates."""

from __future__ import annotations

from typing import Any

import pytest

from reviewbot.diff.lines import DiffIndex
from reviewbot.diff.parse import parse_units
from reviewbot.review.verify import check, locate, merge, to_finding
from reviewbot.schema.findings import Finding
from reviewbot.schema.reviews import RecordedFinding
from tests.rules.conftest import make_diff

OLD = "".join(f"x{n} = {n}\n" for n in range(1, 31))
NEW = OLD.replace("x15 = 15\n", "x15 = 15\nhandle = open(path)\ndata = handle.read()\n")
INDEX = DiffIndex.from_units(parse_units(make_diff("app/io.py", NEW, OLD)))


def read(path: str) -> str | None:
    return NEW if path == "app/io.py" else None


def recorded(**kwargs: Any) -> RecordedFinding:
    values: dict[str, Any] = {
        "file_path": "app/io.py", "start_line": 16, "end_line": 16, "severity": "warning",
        "category": "bug", "title": "File handle never closed",
        "message": "The handle leaks.", "evidence": "handle = open(path)",
        "fix_description": "Use a with block.", **kwargs}
    return RecordedFinding(**values)


def test_a_finding_where_its_evidence_is_passes_in_the_diff() -> None:
    verdict = check(recorded(), INDEX, read)
    assert verdict.ok and (verdict.start, verdict.end) == (16, 16) and verdict.in_diff
    assert not verdict.moved


def test_a_few_lines_off_is_re_anchored() -> None:
    verdict = check(recorded(start_line=19, end_line=19), INDEX, read)
    assert verdict.ok and verdict.moved and (verdict.start, verdict.end) == (16, 16)


def test_multi_line_evidence_narrows_to_its_lines() -> None:
    verdict = check(recorded(start_line=14, end_line=20,
                             evidence="handle = open(path)\n  data = handle.read()"), INDEX, read)
    assert verdict.ok and (verdict.start, verdict.end) == (16, 17)


def test_outside_the_hunks_is_kept_but_not_in_the_diff() -> None:
    verdict = check(recorded(start_line=29, end_line=29, evidence="x27 = 27"), INDEX, read)
    assert verdict.ok and (verdict.start, verdict.end) == (29, 29) and not verdict.in_diff


def test_failures_say_what_to_fix() -> None:
    elsewhere = check(recorded(file_path="app/other.py"), INDEX, read)
    assert not elsewhere.ok and "app/other.py is not part of this change" in elsewhere.reason
    assert "(app/io.py)" in elsewhere.reason
    far = check(recorded(start_line=2, end_line=2), INDEX, read)
    assert not far.ok and "(it is at L16)" in far.reason
    invented = check(recorded(evidence="os.system(cmd)"), INDEX, read)
    assert "nor anywhere in the file" in invented.reason
    backwards = check(recorded(start_line=16, end_line=12), INDEX, read)
    assert "end_line is before start_line" in backwards.reason


def test_locate_is_none_for_empty_evidence() -> None:
    assert locate("   ", NEW.split("\n"), 1, 2) is None


def _finding(**kwargs: Any) -> Finding:
    return to_finding(check(recorded(**kwargs), INDEX, read), "u1")


def test_a_model_finding_restating_a_rule_finding_merges_into_it() -> None:
    rule = Finding(file_path="app/io.py", start_line=16, end_line=16, severity="info",
                   category="bug", rule_id="python.open-without-with",
                   title="File opened without a with block",
                   message="The handle leaks when the next line raises.")
    unrelated = rule.replace(title="Debugging leftover", message="print()")
    assert merge([_finding()], [unrelated])[0] == [_finding()]
    kept, merged = merge([_finding()], [rule])
    assert kept == [] and merged == ["File handle never closed -> python.open-without-with"]


def test_twins_keep_the_more_severe() -> None:
    mild = _finding(severity="info", title="The file handle is never closed")
    sharp = _finding(severity="error", title="File handle never closed, leaks")
    other = _finding(category="performance", title="Reads the whole file at once")
    kept, merged = merge([mild, sharp, other], [])
    assert [(f.severity, f.category) for f in kept] == [("error", "bug"), ("warning",
                                                                           "performance")]
    assert merged == ["The file handle is never closed -> File handle never closed, leaks"]


def test_a_misquote_on_a_line_the_change_adds_stands_by_its_number() -> None:
    """A small model reads the numbered line rightly and copies it wrongly: the finding stays
    where it was numbered, with the code really there as its evidence."""
    verdict = check(recorded(evidence="handle=open( path )"), INDEX, read)
    assert verdict.ok and verdict.by_line and (verdict.start, verdict.end) == (16, 16)
    assert to_finding(verdict, "u1").evidence == "handle = open(path)"


def test_a_misquote_that_names_nothing_there_or_outside_the_added_lines_is_refused() -> None:
    """By number only where the change adds lines and every name the quote holds is on
    them: an invented quote, a quote of a name that is not there (the old name of a renamed
    line), or a line of the hunk the change did not write, is still refused."""
    assert not check(recorded(evidence="subprocess.call(cmd)"), INDEX, read).ok
    assert not check(recorded(evidence="handle = open(the_path)"), INDEX, read).ok
    context = check(recorded(start_line=14, end_line=14, evidence="x14 = fourteen"), INDEX, read)
    assert not context.ok and not context.by_line
    far = check(recorded(start_line=16, end_line=40, evidence="handle=open( path )"),
                INDEX, read)
    assert not far.ok  # past the file's end


@pytest.mark.parametrize("title, message", [
    ("a new test function", "The addition of a new test does not affect the existing code."),
    ("Rename", "This is not an issue; no change is needed."),
    ("Default value", "The code looks correct and works as expected."),
    ("missing docstring", "The function has no docstring, which is a security hole."),
    ("A new function is added without any documentation.", "It is hard to use."),
    ("Inconsistent naming", "The helper's name differs from its siblings'."),
])
def test_a_finding_that_says_the_code_is_fine_is_dropped(title: str, message: str) -> None:
    """A small model asked for defects files its reading of a clean change as one (seen on
    the peer bench's clean test and config changes): its own words drop it."""
    verdict = check(recorded(title=title, message=message), INDEX, read)
    assert not verdict.ok and "names no defect" in verdict.reason


@pytest.mark.parametrize("message", [
    "The handle is never closed, which does not free the descriptor.",
    "No check on the path before it is opened.",
    "The file is opened with no issue handling: an error leaks the handle.",
])
def test_a_defect_in_plain_words_stands(message: str) -> None:
    assert check(recorded(message=message), INDEX, read).ok
    assert check(recorded(title="SQL built by string formatting", message=message),
                 INDEX, read).ok
    # A defect's text may mention a docstring; only the title says what the finding is about.
    assert check(recorded(message=message + " The docstring says otherwise."), INDEX, read).ok
