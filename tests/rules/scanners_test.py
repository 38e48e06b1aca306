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


# A workflow with no `permissions:` block: zizmor's "default permissions" finding spans the
# whole file, and its job finding the whole job, so any edit touches them.
BUMPED = """name: ci
on:
  pull_request:
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - name: Check out
        uses: actions/checkout@{version}
        with:
          persist-credentials: false
      - run: make test
"""


def _zizmor_findings(new: str, old: str) -> set[tuple[int, str, str]]:
    return {(f.start_line, f.title or "", f.message) for f in findings(
        ".github/workflows/ci.yml", new, old) if f.rule_id == "zizmor"}


def test_zizmor_findings_the_base_had_are_not_the_changes() -> None:
    """A finding that starts on an unchanged line and only spans an added one is the
    change's only when the base's file lacks it: bumping an action's tag does not bring the
    workflow's missing `permissions:` block."""
    _needs("zizmor")
    assert _zizmor_findings(BUMPED.format(version="v5"), BUMPED.format(version="v4")) == set()
    unpersisted = BUMPED.replace("        with:\n          persist-credentials: false\n", "")
    # Pinning a step to a commit keeps the base's credential finding on it.
    assert _zizmor_findings(unpersisted.format(version="8e8c483db84b4bee98b60c0593521ed34d9990e8"
                                               " # v4"), unpersisted.format(version="v4")) == set()


def test_an_action_unpinned_by_the_change_is_reported() -> None:
    """A step the base pinned to a commit and the change moves to a tag, or a new step with a
    tag, is the change's `unpinned-uses`: only a tag bumped on a step the base already had
    unpinned is the base's."""
    _needs("zizmor")
    pinned = BUMPED.format(version="8e8c483db84b4bee98b60c0593521ed34d9990e8")
    assert {(line, title) for line, title, _ in _zizmor_findings(
        BUMPED.format(version="v5"), pinned)} == {(9, "zizmor unpinned-uses")}
    second = BUMPED.format(version="v4") + ("      - uses: actions/setup-python@v5\n")
    assert (13, "zizmor unpinned-uses") in {(line, title) for line, title, _ in
                                            _zizmor_findings(second, BUMPED.format(version="v4"))}


def test_removing_a_permissions_block_is_reported() -> None:
    """A change that removes the workflow's `permissions:` block brings the finding, though
    it lands on a line the change did not touch."""
    _needs("zizmor")
    old = BUMPED.format(version="v4").replace("jobs:\n", "permissions:\n  contents: read\n"
                                               "jobs:\n")
    new = BUMPED.format(version="v5")
    assert (5, "zizmor excessive-permissions",
            "overly broad permissions: default permissions used due to no permissions: "
            "block") in _zizmor_findings(new, old)


def test_an_action_swapped_for_another_is_reported() -> None:
    """An action's owner changed under an unchanged step name is the change's finding."""
    _needs("zizmor")
    old = BUMPED.format(version="v4")
    new = old.replace("actions/checkout@v4", "evil/checkout@v4")
    assert {(line, title) for line, title, _ in _zizmor_findings(new, old)} == {
        (9, "zizmor unpinned-uses")}


# A fake shellcheck: one finding spanning the whole script for each line that says `danger`,
# and a line in `runs` for each time it is run.
_WHOLE_FILE_TOOL = """
text=$(cat)
echo run >> "{runs}"
lines=$(printf '%s\\n' "$text" | wc -l)
printf '{{"comments": ['
sep=""
for _ in $(printf '%s\\n' "$text" | grep -n danger | cut -d: -f1); do
  printf '%s{{"line": 1, "endLine": %s, "level": "warning", "code": 9, "message": "m"}}' \\
    "$sep" "$lines"
  sep=","
done
printf ']}}'
"""


def _whole_file_tool(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    runs.touch()
    tool = _fake_tool(tmp_path, _WHOLE_FILE_TOOL.format(runs=runs))
    monkeypatch.setattr(scanners, "find_executable", lambda name: tool)
    return runs


def test_a_second_finding_like_the_bases_is_the_changes(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    """A change cannot pass a new finding off as one the base had by giving it the same
    code, message and start: one more of them than the base had is the change's."""
    _whole_file_tool(monkeypatch, tmp_path)
    old = "#!/bin/sh\necho danger\necho safe\n"
    assert [f.start_line for f in findings("run.sh", old + "echo fine\n", old)] == []
    assert [f.start_line for f in findings("run.sh", old + "echo danger\n", old)] == [1]


def test_the_base_is_scanned_only_for_a_span_only_finding(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    """The base costs one more run of the tool, and only for a file with a finding that
    starts on an unchanged line; a new file's findings are all the change's."""
    runs = _whole_file_tool(monkeypatch, tmp_path)
    old = "#!/bin/sh\necho danger\necho safe\n"
    findings("run.sh", "echo danger\n" + old[len("#!/bin/sh\n"):], old)
    assert len(runs.read_text().split()) == 1
    assert [f.start_line for f in findings("new.sh", old)] == [1]
    assert len(runs.read_text().split()) == 2
    findings("run.sh", old + "echo fine\n", old)
    assert len(runs.read_text().split()) == 4


def test_a_change_that_only_deletes_the_permissions_block_is_reported() -> None:
    """A change with no added line, that takes the workflow's `permissions:` block away,
    brings the finding: deleting is a change the review cannot skip."""
    _needs("zizmor")
    new = BUMPED.format(version="v4")
    old = new.replace("jobs:\n", "permissions:\n  contents: read\njobs:\n")
    assert any(title == "zizmor excessive-permissions" for _, title, _ in
               _zizmor_findings(new, old))
