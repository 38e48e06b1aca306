"""`--format codequality` against GitLab's documented Code Quality report format."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from reviewbot.cli import main
from reviewbot.report import ReportInput, render
from tests.conftest import GitFixture
from tests.report.formats_test import CODE, DATA, FINDINGS, REPORT

# From docs.gitlab.com, "Code Quality" (ci/testing/code_quality), section "Code Quality report
# format": the file is a single JSON array; each object has at least `description`,
# `check_name`, `fingerprint` (strings), `severity` (one of info, minor, major, critical,
# blocker), `location.path` (relative to the repository, no `./`) and `location.lines.begin`
# or `location.positions.begin.line` (an integer); GitLab reads no other field. GitLab's
# parser stops at the first object its own schema refuses, so every object must pass.
CODEQUALITY_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path", "lines"],
                "properties": {
                    "path": {"type": "string", "minLength": 1, "not": {"pattern": "^(\\./|/)"}},
                    "lines": {"type": "object", "required": ["begin"],
                              "properties": {"begin": {"type": "integer", "minimum": 1}}},
                },
            },
        },
    },
}


def issues_of(text: str) -> list[dict[str, Any]]:
    assert not text.startswith("\ufeff")  # GitLab's parser refuses a byte order mark
    doc = json.loads(text)
    jsonschema.Draft7Validator(CODEQUALITY_SCHEMA).validate(doc)
    assert isinstance(doc, list)
    return doc


def test_codequality_matches_gitlabs_report_format() -> None:
    issues = issues_of(render("codequality", DATA))
    assert [i["check_name"] for i in issues] == [f.rule_id for f in FINDINGS]
    assert [i["severity"] for i in issues] == ["critical", "critical", "major", "info", "info"]
    assert [i["location"] for i in issues][2] == {"path": "app/deploy.py",
                                                  "lines": {"begin": 8, "end": 9}}
    assert issues[3]["location"]["path"] == "web/my app.js"
    # GitLab keeps one issue per fingerprint: none of a run's findings may vanish that way.
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    assert issues[1]["description"] == ("Command run through a shell: `subprocess.run` runs a "
                                        "shell. Fix: Pass a list of arguments.")


def test_an_empty_run_is_an_empty_array() -> None:
    assert issues_of(render("codequality", ReportInput(report=REPORT.replace(findings=())))) == []


def test_two_secrets_of_one_kind_on_one_line_stay_two_issues() -> None:
    """GitLab merges issues that share a fingerprint: two findings of one rule on one line
    with no code to quote (a secret's line never is) still get a fingerprint each."""
    twins = (FINDINGS[0], FINDINGS[0].replace())  # two keys alike: the same redacted words
    issues = issues_of(render("codequality", ReportInput(report=REPORT.replace(findings=twins))))
    assert issues[0]["fingerprint"] != issues[1]["fingerprint"]


def test_a_description_cannot_style_or_break_gitlabs_widget() -> None:
    """Words from the reviewed change or a model reach GitLab as plain text: no `%{...}`
    styling the merge request widget would apply, no control character or bidi override,
    one line; a name that is not UTF-8 keeps the U+FFFD the other reports show."""
    hostile = FINDINGS[2].replace(
        file_path="bad\ufffd\ufffdname.py",
        title="%{success_start}Fixed%{success_end} %{danger_start}",
        message="line one\nline two \x1b[2J \u202egnp.exe %{strong_end}%{unknown_tag}",
        suggestion="ignore this %{small_start}")
    [issue] = issues_of(render("codequality", ReportInput(report=REPORT.replace(
        findings=(hostile,)))))
    description = str(issue["description"])
    assert "%{" not in description
    assert "\n" not in description and "\x1b" not in description and "\u202e" not in description
    assert "line one line two" in description and "success_start" in description
    assert issue["location"] == {"path": "bad\ufffd\ufffdname.py", "lines": {"begin": 8, "end": 9}}


def test_fingerprint_follows_the_code_not_the_line(repo: GitFixture,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """GitLab's widget shows as new every fingerprint the target branch's report lacks: a
    finding an edit above it pushes down, in the next commit, keeps its fingerprint (a
    secret's too, though its message names its line)."""
    repo.write("README.md", "# x\n")
    base = repo.commit("base")
    body = ('import subprocess\nKEY = "AKIAQWERTYUIOPASDFGH"\n\n\ndef deploy(host):\n'
            '    subprocess.run(f"ssh {host}", shell=True)\n')
    repo.write("deploy.py", body)
    repo.commit("deploy")

    def report() -> dict[str, tuple[str, int]]:
        main(["--repo", str(repo.root), "--mode", "pr", "--base", base, "--offline",
              "--format", "codequality"])
        issues = issues_of(capsys.readouterr().out)
        return {str(i["check_name"]): (str(i["fingerprint"]),
                                       int(i["location"]["lines"]["begin"]))
                for i in issues}

    first = report()
    assert set(first) == {"secrets.hardcoded", "python.shell-injection"}
    repo.write("deploy.py", '"""Deployment."""\n# two more lines\n\n' + body)
    repo.commit("a docstring above")
    second = report()
    for rule, (fp, line) in first.items():
        assert second[rule] == (fp, line + 3), rule


def test_codequality_fingerprint_survives_a_line_shift() -> None:
    """The fingerprint reads the code reporters were given, not the line number."""
    moved = FINDINGS[1].replace(start_line=40, end_line=40)
    at_40 = ReportInput(report=REPORT.replace(findings=(moved,)),
                        code={("app/deploy.py", 40): CODE[("app/deploy.py", 6)]})
    at_6 = ReportInput(report=REPORT.replace(findings=(FINDINGS[1],)), code=CODE)
    assert (issues_of(render("codequality", at_40))[0]["fingerprint"]
            == issues_of(render("codequality", at_6))[0]["fingerprint"])
