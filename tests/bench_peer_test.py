"""The peer bench's scorer and its cases, without a server: a finding names a defect by file,
line (within 2) and words; precision counts every finding, recall every defect; and every
case is a change a reviewer could be held to (its labelled lines exist and were changed)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench.peer.case import CHANGE, Case, Defect, build
from bench.peer.cases import CASES
from bench.peer.cases.original import ORIGINAL
from bench.peer.pr_agent import remarks as pr_agent_remarks
from bench.peer.proxy import reported_usage, server_timings, stream_usage
from bench.peer.score import Remark, Tally, found, hits, names, score, tally

LEAK = Defect("app/report.py", 7, "bug", "handles never closed", ("close", "leak", "with open"))
LEAKY = Case("leak", "python", "defect", {"app/report.py": ""}, {"app/report.py": "x\n"},
             (LEAK,))
CLEAN = Case("tidy", "python", "clean", {"app/a.py": ""}, {"app/a.py": "x = 1\n"})


def remark(start: int, text: str = "The handle is never closed", end: int = 0,
           path: str = "app/report.py") -> Remark:
    return Remark(path=path, start=start, end=end or start, text=text)


@pytest.mark.parametrize(("start", "end", "hit"), [
    (7, 7, True), (5, 5, True), (9, 9, True), (4, 4, False), (10, 10, False),
    (1, 4, False), (1, 5, True), (9, 12, True), (10, 12, False)])
def test_a_finding_is_at_the_place_within_two_lines(start: int, end: int, hit: bool) -> None:
    assert hits(remark(start, end=end), LEAK, reason=False) is hit


def test_a_range_defect_is_met_anywhere_along_it() -> None:
    spread = Defect("a.py", 10, "bug", "x", ("x",), end_line=20)
    assert hits(Remark("a.py", 22, 22, "x"), spread, reason=True)
    assert hits(Remark("a.py", 8, 8, "x"), spread, reason=True)
    assert not hits(Remark("a.py", 23, 30, "x"), spread, reason=True)


def test_another_file_is_never_the_place() -> None:
    assert not hits(remark(7, path="app/other.py"), LEAK, reason=False)


@pytest.mark.parametrize(("text", "named"), [
    ("File handle LEAKS on every call", True),  # any case, the word's start
    ("Not closed: use `with open(...)`", True),
    ("Use a context manager", False),
    ("The name is unclear", False),
    ("Problem disclosed", False),  # "close" inside another word is not the word
])
def test_the_reason_is_one_of_the_defects_words(text: str, named: bool) -> None:
    assert names(text, LEAK) is named
    assert hits(remark(7, text), LEAK, reason=True) is named
    assert hits(remark(7, text), LEAK, reason=False)


def test_words_that_are_not_letters_match_as_written() -> None:
    off = Defect("p.py", 4, "bug", "one too many", ("off-by-one", "+ 1", ".."))
    assert names("classic OFF-BY-ONE in the slice", off)
    assert names("the slice ends at size + 1", off)
    assert names("a name with ../ escapes", off)
    assert not names("size plus one", off)


def test_precision_counts_every_finding_and_recall_every_defect() -> None:
    two = Case("two", "python", "defect", {}, {},
               (LEAK, Defect("app/report.py", 30, "bug", "race", ("race",))))
    given = [remark(7), remark(8), remark(30, "A race"), remark(15, "Style nit")]
    t = tally(two, given, reason=True)
    # Two defects found; a second finding on a found defect is not a false positive.
    assert t == Tally(tp=2, fp=1, fn=0, clean_remarks=0)
    assert (t.precision, t.recall) == (pytest.approx(2 / 3), 1.0)
    assert t.f1 == pytest.approx(0.8)


def test_a_finding_at_the_place_for_another_reason_is_a_false_positive_by_reason() -> None:
    given = [remark(7, "Variable naming")]
    assert tally(LEAKY, given, reason=False) == Tally(tp=1, fp=0, fn=0)
    assert tally(LEAKY, given, reason=True) == Tally(tp=0, fp=1, fn=1)


def test_remarks_on_clean_changes_are_false_positives_and_counted() -> None:
    total = score([(LEAKY, []), (CLEAN, [remark(1, path="app/a.py")] * 2)], reason=True)
    assert total == Tally(tp=0, fp=2, fn=1, clean_remarks=2)
    assert (total.precision, total.recall, total.f1) == (0.0, 0.0, 0.0)


def test_nothing_found_nothing_said_scores_zero_not_an_error() -> None:
    assert Tally().f1 == 0.0
    assert found(LEAKY, [], reason=False) == ()


def test_pr_agent_issues_become_remarks_stripped_and_placed() -> None:
    review = {"key_issues_to_review": [
        {"relevant_file": "app/report.py\n", "issue_header": "Possible Bug\n",
         "issue_content": "The handle is never closed\n", "start_line": 7, "end_line": 8},
        {"relevant_file": "app/report.py\n", "issue_header": "Vague\n", "issue_content": "x",
         "start_line": 0, "end_line": 0},
        {"relevant_file": "", "issue_header": "No file", "start_line": 3, "end_line": 3},
        "not an issue"],
        "security_concerns": "No\n"}
    assert pr_agent_remarks(review) == (
        Remark("app/report.py", 7, 8, "Possible Bug\nThe handle is never closed"),)


def test_remarks_survive_the_results_file() -> None:
    given = remark(7, end=9)
    assert Remark.from_data(given.to_data()) == given
    assert Remark.from_data({"path": "a", "start": 5, "end": 2}) == Remark("a", 5, 5, "")


# --- the cases --------------------------------------------------------------------------------

def test_the_first_eleven_cases_are_all_there_in_front() -> None:
    assert CASES[:len(ORIGINAL)] == ORIGINAL
    assert len(ORIGINAL) == 11


def test_the_case_set_is_large_and_varied_enough_to_steer_by() -> None:
    assert len(CASES) >= 40
    assert len({c.name for c in CASES}) == len(CASES)
    assert sum(1 for c in CASES if c.clean) >= 15
    defect_languages = {c.language for c in CASES if not c.clean}
    assert {"python", "go"} <= defect_languages
    assert defect_languages & {"javascript", "typescript"}
    assert all(c.kind == ("clean" if c.clean else "defect") for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_each_labelled_line_exists_and_the_change_touches_it(case: Case,
                                                               tmp_path: Path) -> None:
    repo = build(case, tmp_path / "repo")
    assert subprocess.run(["git", "branch", "--show-current"], cwd=repo, check=True,
                          capture_output=True, text=True).stdout.strip() == CHANGE
    changed = subprocess.run(["git", "diff", "-U0", "main", "--", *case.change], cwd=repo,
                             check=True, capture_output=True, text=True).stdout
    assert changed, f"{case.name}: the change changes nothing"
    for defect in case.defects:
        assert defect.words, f"{case.name}: a defect without the words that name it"
        lines = (repo / defect.path).read_text().splitlines()
        assert 1 <= defect.line <= defect.last <= len(lines)
        assert any(lines[n - 1].strip() for n in range(defect.line, defect.last + 1))
        assert _added_near(changed, defect), f"{case.name}: line {defect.line} is not changed"


def _added_near(diff: str, defect: Defect) -> bool:
    """Whether a hunk of `defect.path` adds lines within 2 of the defect (a removed check
    shows as the lines around the place it was)."""
    current = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            current = line[6:]
        elif line.startswith("@@") and current == defect.path:
            new = line.split("+")[1].split(" ")[0].split(",")
            start, length = int(new[0]), int(new[1]) if len(new) > 1 else 1
            if start - 2 <= defect.last and defect.line <= start + max(length, 1) + 1:
                return True
    return False


# --- what the proxy counts -----------------------------------------------------------------

def test_the_proxy_reads_the_tokens_the_server_reports() -> None:
    reply = {"usage": {"prompt_tokens": 1646, "completion_tokens": 123}}
    assert reported_usage(reply) == (1646, 123)
    # A llama.cpp stream without include_usage reports its timings only.
    assert reported_usage({"timings": {"prompt_n": 31, "predicted_n": 339}}) == (31, 339)
    assert reported_usage({"usage": None}) is None
    assert reported_usage([]) is None


def test_the_proxy_reads_a_streams_last_report() -> None:
    stream = (b'data: {"choices": [{"delta": {"content": "a"}}]}\n\n'
              b'data: not json\n\n'
              b'data: {"choices": [], "usage": {"prompt_tokens": 40, "completion_tokens": 2}}\n\n'
              b"data: [DONE]\n\n")
    assert stream_usage(stream) == (40, 2)
    assert stream_usage(b"data: [DONE]\n\n") is None


def test_the_proxy_keeps_llama_cpps_split_of_its_time() -> None:
    reply = {"timings": {"cache_n": 1400, "prompt_n": 31, "prompt_ms": 3000.7,
                         "predicted_n": 339, "predicted_ms": 189092.6}}
    assert server_timings(reply) == (pytest.approx(3.0007), pytest.approx(189.0926), 1400)
    assert server_timings({"usage": {"prompt_tokens": 3}}) is None
