"""The text of what reviewbot posts: bodies within a forge's limits."""

from __future__ import annotations

from reviewbot.deliver.bodies import MAX_BODY, finding_body
from reviewbot.schema import Finding


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
    from reviewbot.schema import RunReport, RunStats

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
