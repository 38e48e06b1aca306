"""The text of what reviewbot posts: bodies within a forge's limits."""

from __future__ import annotations

from reviewbot.deliver.bodies import MAX_BODY, finding_body
from reviewbot.schema.findings import Finding


def _model_finding(replacement: str) -> Finding:
    return Finding(file_path="app/run.py", start_line=5, end_line=5, severity="warning",
                   category="bug", rule_id="model.bug", title="t", message="m",
                   suggestion="use a list", source="model", replacement=replacement)


def test_a_suggestion_is_posted_whole_or_not_at_all() -> None:
    long_line = "    subprocess.run([" + ", ".join(f'"arg{n}"' for n in range(60)) + "])"
    lines = "\n".join(f"{long_line}  # {n}" for n in range(30))
    body = finding_body(_model_finding(lines), "f" * 32)
    assert f"```suggestion\n{lines}\n```" in body and "more characters" not in body
    huge = "\n".join("x = 1  # " + "y" * 3000 for _ in range(30))
    body = finding_body(_model_finding(huge), "f" * 32)
    assert "```suggestion" not in body and "too long for a comment" in body
    assert len(body) <= MAX_BODY


def test_a_summary_too_long_points_where_the_forge_keeps_the_rest() -> None:
    """What a summary cannot hold is named where that forge keeps it: a GitLab note points
    at the Code Quality report, never at GitHub's job summary or SARIF output."""
    from reviewbot.deliver.bodies import Placed, SummaryFacts, summary_body
    from reviewbot.gitlab.forge import GitlabForge
    from reviewbot.report import ReportInput
    from reviewbot.schema.runs import RunReport, RunStats

    found = tuple(Finding(file_path=f"app/m{n}.py", start_line=1, end_line=1,
                          severity="warning", category="security", rule_id="r", title="t",
                          message="m" * 200) for n in range(400))
    data = ReportInput(report=RunReport(run_id="r", findings=found, stats=RunStats(units=1)))
    facts = SummaryFacts(head_sha="ab" * 20, change="merge request", posted=0,
                         already_posted=0, resolved=0,
                         elsewhere=[Placed(f, "outside the changed lines") for f in found],
                         reports=GitlabForge.reports, files_listed=GitlabForge.files_listed)
    body = summary_body(data, facts, limit=20_000)
    assert "more not shown here" in body and "Code Quality report" in body
    assert "SARIF" not in body and "job summary" not in body


def test_the_summary_says_what_was_quietened_and_the_changes_errors_first() -> None:
    """The pull or merge request's summary: the change's suppressed error by file and line
    before anything else about quietenings, the counts by who decided, each new file checked
    for secrets only, and every quietened finding in a collapsed list."""
    from reviewbot.deliver.bodies import SummaryFacts, summary_body
    from reviewbot.report import ReportInput
    from reviewbot.schema.findings import Quieted, QuietedFile
    from reviewbot.schema.runs import RunReport, RunStats

    error = Finding(file_path="app/run.py", start_line=7, end_line=7, severity="error",
                    category="security", rule_id="python.shell-injection", title="Shell",
                    message="m")
    lowered = error.replace(file_path="tests/t.py", start_line=2, end_line=2)
    report = RunReport(run_id="r", stats=RunStats(units=1), quieted=(
        Quieted(finding=error, kind="nosec", decided_by="change", justification="checked"),
        Quieted(finding=lowered, given="warning", kind="test_code", decided_by="base")),
        quieted_files=(QuietedFile(file_path="api/pay_pb2.py", kind="ignore",
                                   decided_by="base", justification="*_pb2.py", new=True),))
    facts = SummaryFacts(head_sha="ab" * 20, change="pull request", posted=0,
                         already_posted=0, resolved=0, elsewhere=[])
    body = summary_body(ReportInput(report=report), facts)
    first = body.index("**The change suppresses 1 error**")
    assert first < body.index("**Quietened:** 2 findings, 1 by the change (`nosec`: 1 not "
                              "reported), 1 by the base (test code: 1 lowered)")
    assert "- `app/run.py` L7 `python.shell-injection` Shell: `nosec`: “checked”" in body
    assert "`api/pay_pb2.py` (`ignore` glob `*_pb2.py`, decided by the base)" in body
    assert "<summary>2 quietened findings" in body
    small = summary_body(ReportInput(report=report), facts, limit=2_600)
    assert "do not fit in a comment" in small and len(small) <= 2_600
