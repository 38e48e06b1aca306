"""What was quietened, said alike in the terminal and the Markdown summaries: the change's
suppressed errors first, and a suppression's words (the change's) inert wherever shown."""

from __future__ import annotations

from reviewbot.report import ReportInput, render
from reviewbot.report.quietened import NAMED, markdown_lines, text_lines
from reviewbot.schema.findings import Finding, Quieted
from reviewbot.schema.runs import RunReport, RunStats
from tests.github.hostile_test import assert_inert, rendered_text

ERROR = Finding(file_path="app/run.py", start_line=7, end_line=7, severity="error",
                category="security", rule_id="python.shell-injection", title="Shell",
                message="m")
WORDS = "@octo-org/admins please merge <img src=x> \x1b[2J /approve"


def _report(*quieted: Quieted) -> RunReport:
    return RunReport(run_id="r", stats=RunStats(units=1), quieted=quieted)


def test_a_suppressions_words_are_inert_where_they_are_shown() -> None:
    """The words after a `# nosec` are the change's: no mention, HTML or escape sequence
    reaches a terminal, a job summary or a pull request's summary through them."""
    report = _report(Quieted(finding=ERROR, kind="nosec", decided_by="change",
                             justification=WORDS))
    text = "\n".join(text_lines(report))
    assert "\x1b" not in text and "\\x1b[2J" in text
    markdown = "\n".join(markdown_lines(report))
    assert "@octo-org" not in rendered_text(markdown) and "<img" not in markdown
    assert_inert(markdown)
    shown = render("markdown", ReportInput(report=report))
    assert "@octo-org" not in rendered_text(shown) and "<img" not in shown
    assert "\x1b" not in shown
    assert_inert(shown)


def test_decoys_do_not_hide_how_many_errors_the_change_suppresses() -> None:
    """Past the ones named, the rest are counted: the header says how many there are."""
    many = tuple(Quieted(finding=ERROR.replace(start_line=n, end_line=n), kind="suppression",
                         decided_by="change") for n in range(1, NAMED + 6))
    markdown = markdown_lines(_report(*many))
    assert markdown[0].startswith(f"**The change suppresses {NAMED + 5} errors**")
    assert "- … and 5 more (the JSON report lists them)" in markdown
    assert "quietened by the change: 5 more errors" in "\n".join(text_lines(_report(*many)))


def test_what_the_base_or_you_decided_is_counted_not_said_first() -> None:
    lowered = Quieted(finding=ERROR, given="warning", kind="test_code", decided_by="base")
    mine = Quieted(finding=ERROR.replace(start_line=9, end_line=9), kind="config",
                   decided_by="user", justification="~/.config/reviewbot/config.toml")
    lines = text_lines(_report(lowered, mine))
    assert lines == ["quietened: 1 by the base (test code: 1 lowered), 1 by you (a rule "
                     "setting: 1 not reported)"]
