"""shellcheck, hadolint and zizmor as rules: real tools on stdin, held to added lines, with
notes when a tool is missing, slow or unreadable, and no token in their environment."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from reviewbot.rules import scanners
from tests.rules.conftest import findings, review

WORKFLOW = ("on:\n  issues:\njobs:\n  hi:\n    runs-on: ubuntu-latest\n    steps:\n"
            '      - run: echo "${{ github.event.issue.title }}"\n')


def _needs(tool: str) -> None:
    if scanners.find_executable(tool) is None:
        pytest.skip(f"{tool} is not installed (pip install 'reviewbot[scanners]')")


def test_shellcheck_findings_on_added_lines_only() -> None:
    _needs("shellcheck")
    old = "#!/bin/bash\nset -e\nrm -rf $OLD/\n"
    new = old + "rm -rf $DIR/\n"
    found = [(f.rule_id, f.start_line, f.severity, f.title) for f in findings(
        "deploy.sh", new, old) if f.rule_id == "shellcheck"]
    assert ("shellcheck", 4, "warning", "shellcheck SC2115") in found
    assert all(line == 4 for _, line, _, _ in found)


def test_hadolint_on_a_dockerfile() -> None:
    _needs("hadolint")
    found = {(f.rule_id, f.title, f.severity) for f in findings(
        "Dockerfile", "FROM ubuntu:latest\nRUN apt-get update\n")}
    assert ("hadolint", "hadolint DL3007", "warning") in found


def test_zizmor_on_a_workflow_offline() -> None:
    _needs("zizmor")
    found = {(f.rule_id, f.title, f.severity, f.start_line) for f in findings(
        ".github/workflows/greet.yml", WORKFLOW)}
    assert ("zizmor", "zizmor template-injection", "warning", 7) in found


def _fake_tool(tmp_path: Path, script: str) -> str:
    tool = tmp_path / "tool"
    tool.write_text("#!/bin/sh\n" + script)
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    return str(tool)


def test_a_missing_tool_is_a_note_and_our_patterns_still_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scanners, "find_executable", lambda name: None)
    result = review("install.sh", "curl -fsSL https://example.invalid/i.sh | sh\n")
    assert [f.rule_id for f in result.findings] == ["shell.curl-pipe-shell"]
    assert result.notes == ("shellcheck is not installed: shell scripts were checked with "
                            "reviewbot's own patterns only (pip install 'reviewbot[scanners]')",)


def test_a_slow_tool_is_stopped_and_noted(monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    monkeypatch.setattr(scanners, "find_executable",
                        lambda name: _fake_tool(tmp_path, "sleep 5\n"))
    monkeypatch.setattr(scanners, "TIMEOUT_S", 0.3)
    result = review("run.sh", "echo hi\n")
    assert result.notes == ("shellcheck took over 0.3 s on run.sh and was stopped",)


def test_unreadable_output_is_noted_not_fatal(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    monkeypatch.setattr(scanners, "find_executable", lambda name: _fake_tool(
        tmp_path, 'cat >/dev/null; echo \'{"comments": [{"level": "warning"}]}\'\n'))
    result = review("run.sh", "echo hi\n")
    assert result.findings == ()
    assert "shellcheck gave output reviewbot could not read on run.sh" in result.notes[0]


def test_tools_never_see_tokens(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_tokenthatmustnotleak0123456789")
    monkeypatch.setenv("PLAIN", "visible")
    monkeypatch.setattr(scanners, "find_executable", lambda name: _fake_tool(
        tmp_path, 'cat >/dev/null\necho "{\\"comments\\": [{\\"line\\": 1, '
                  '\\"level\\": \\"warning\\", \\"code\\": 1, '
                  '\\"message\\": \\"[$GITHUB_TOKEN][$PLAIN]\\"}]}"\n'))
    [finding] = findings("run.sh", "echo hi\n")
    assert finding.message == "[][visible]"


def test_zizmor_takes_over_our_expression_injection_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    _needs("zizmor")
    ids = {f.rule_id for f in findings(".github/workflows/greet.yml", WORKFLOW)}
    assert "zizmor" in ids and "gha.expression-injection" not in ids
    monkeypatch.setattr(scanners, "find_executable", lambda name: None)
    ids = {f.rule_id for f in findings(".github/workflows/greet.yml", WORKFLOW)}
    assert ids == {"gha.expression-injection"}
