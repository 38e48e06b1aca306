"""A model that obeys a prompt injection, in staged, working and pr modes: its tool calls are
data (never git syntax), its tools see the same files in every mode, what they read goes
through the redaction pass, and no failure in a tool, a conversation or a stage of the
model phase removes the rules' findings from the run."""

from __future__ import annotations

import json

import pytest

from reviewbot.cli import main
from reviewbot.diff.parse import collect
from reviewbot.repo.git import open_repo
from reviewbot.repo.source import RepoSource
from reviewbot.schema.units import ChangeRequest
from tests.conftest import GitFixture
from tests.fake_openai import FakeOpenAI
from tests.hostile import (
    AGENT_FILE,
    assert_no_controls,
    assert_nothing_planted_reached,
    change,
    obey_the_injection,
    plant,
    record_with_controls,
    tool_answers,
)
from tests.model.helpers import KEY

MODES = {
    "staged": ["--mode", "staged"],
    "working": ["--mode", "working"],
    "working, untracked": ["--mode", "working", "--include-untracked"],
    "pr": ["--mode", "pr", "--base", "main", "--head", "topic"],
}


@pytest.fixture
def attacked(repo: GitFixture, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
             agent_on_small_changes: None) -> GitFixture:
    """The planted change, with the agent (and its tools) given its risky units."""
    plant(repo)
    monkeypatch.setenv("REVIEWBOT_MODEL", "injected")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    obey_the_injection(fake_openai)
    return repo


def _prepare(repo: GitFixture, mode: str) -> None:
    """The change as each mode sees it: staged, in the work tree, or a commit on a branch."""
    if mode == "pr":
        repo.git("checkout", "-q", "-b", "topic")
    change(repo)
    if mode == "staged":
        repo.git("add", "app/clean.py", AGENT_FILE)
    elif mode == "pr":
        repo.git("add", "app/clean.py", AGENT_FILE)
        repo.git("commit", "-q", "-m", "clean up")
    else:  # working: the files are tracked, their change is not staged
        repo.git("add", "-N", "app/clean.py", AGENT_FILE)


@pytest.mark.parametrize("mode", list(MODES))
def test_an_injected_model_cannot_stop_the_review_or_read_outside_the_sandbox(
        attacked: GitFixture, fake_openai: FakeOpenAI, capsys: pytest.CaptureFixture[str],
        mode: str) -> None:
    _prepare(attacked, mode)
    code = main(["--repo", str(attacked.root), "--format", "json", *MODES[mode]])
    out, err = capsys.readouterr()
    assert "internal error" not in err
    report = json.loads(out)
    assert code == 1, err  # decided by the rules' finding
    assert any(f["rule_id"] == "python.shell-injection" for f in report["findings"])
    answers = tool_answers(fake_openai)
    # Git syntax is a path like any other: no such folder, no error.
    for magic in (":(bad)", ":!x", ":(glob)**"):
        assert answers[f'list_files{{"dir": "{magic}"}}'] == f"no tracked files under {magic}"
    listing = answers['list_files{"dir": "."}'].split("\n")
    expected = {".gitignore", "app/__init__.py", "app/clean.py", AGENT_FILE, "config/app.yaml",
                "deploy/prod.env"} | ({"notes.txt"} if mode == "working, untracked" else set())
    assert set(listing) == expected
    for path in (".git/config", ".git/HEAD", ".env", ".reviewbot/keep.txt", ":(bad)"):
        answer = answers[f'read_file_hunk{{"path": "{path}", "start": 1, "end": 50}}'
                         if path == ".git/config" else
                         f'read_file_hunk{{"path": "{path}", "start": 1, "end": 5}}']
        assert "error" in json.loads(answer), path
    # Tracked files are read, with their secrets masked as the context bundles mask them.
    env = answers['read_file_hunk{"path": "deploy/prod.env", "start": 1, "end": 5}']
    assert "REDIS_PASSWORD=[REDACTED]" in env and "export API_TOKEN=[REDACTED]" in env
    yaml = answers['read_file_hunk{"path": "config/app.yaml", "start": 1, "end": 5}']
    assert "password: [REDACTED]" in yaml
    assert "deploy/prod.env:1" in answers['search{"query": "REDIS_PASSWORD"}']
    assert_nothing_planted_reached(fake_openai)


@pytest.mark.parametrize("mode", ["staged", "working", "working, untracked", "pr"])
def test_what_the_tools_can_reach_in_each_mode(repo: GitFixture, mode: str) -> None:
    """The sandbox, enumerated: the reviewed side's tracked files and the change's files;
    never reviewbot's own folder, even where a repository commits files into it."""
    plant(repo)
    repo.write(".reviewbot/runs/committed.json", "{}\n")
    repo.git("add", "-f", ".reviewbot/runs/committed.json")
    repo.git("commit", "-q", "-m", "a file in reviewbot's folder")
    _prepare(repo, mode)
    git = open_repo(repo.root)
    request = {"staged": ChangeRequest(mode="staged"),
               "working": ChangeRequest(mode="working"),
               "working, untracked": ChangeRequest(mode="working", include_untracked=True),
               "pr": ChangeRequest(mode="pr", base="main", head="topic")}[mode]
    source = RepoSource(git, collect(git, request))
    readable = {".gitignore", "app/__init__.py", "app/clean.py", AGENT_FILE, "config/app.yaml",
                "deploy/prod.env"} | ({"notes.txt"} if mode == "working, untracked" else set())
    assert source.readable_files() == readable
    assert source.list_files("app") == ["app/__init__.py", "app/clean.py", AGENT_FILE]
    assert source.list_files("ap") == []  # a folder, not a prefix of names


def test_a_tracked_symlink_into_git_reads_as_its_target_name(
        attacked: GitFixture, fake_openai: FakeOpenAI,
        capsys: pytest.CaptureFixture[str]) -> None:
    (attacked.root / "app" / "cfg").symlink_to("../.git/config")
    attacked.commit("a link")
    attacked.write("app/clean.py", "X = 1\n")
    git = open_repo(attacked.root)
    source = RepoSource(git, collect(git, ChangeRequest(mode="working")))
    assert source.readable("app/cfg")
    assert source.new_text("app/cfg") == "../.git/config"


def test_a_tool_that_fails_is_an_answer_to_the_model(
        attacked: GitFixture, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    def broken(self: RepoSource) -> frozenset[str]:
        raise OSError("the disk went away")

    monkeypatch.setattr(RepoSource, "readable_files", broken)
    _prepare(attacked, "staged")
    code = main(["--repo", str(attacked.root), "--quiet"])
    assert code == 1 and "python.shell-injection" in capsys.readouterr().out
    answers = tool_answers(fake_openai)
    assert json.loads(answers['list_files{"dir": "."}']) == {
        "error": "list_files failed (OSError); try another call"}


@pytest.mark.parametrize("where", ["conversation", "one call", "review stage",
                                   "context stage", "verify stage", "plan stage"])
def test_no_failure_in_the_model_phase_removes_the_rules_findings(
        attacked: GitFixture, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], where: str) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise RuntimeError("something no check foresaw")

    target = {"conversation": "reviewbot.review.stage.Reviewer.review",
              "one call": "reviewbot.review.change.OneCall.review",
              "review stage": "reviewbot.review.stage.review_units",
              "context stage": "reviewbot.context.build_bundle",
              "verify stage": "reviewbot.review.stage.verify_findings",
              "plan stage": "reviewbot.run.pipeline.plan"}[where]
    monkeypatch.setattr(target, fail)
    _prepare(attacked, "staged")
    code = main(["--repo", str(attacked.root), "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 1 and "internal error" not in err
    assert [f["rule_id"] for f in json.loads(out)["findings"]] == ["python.shell-injection"]
    run = sorted((attacked.root / ".reviewbot" / "runs").glob("2*"))[-1]
    review = json.loads((run / "step7_review.json").read_text())
    if where in ("conversation", "one call"):
        failed = AGENT_FILE if where == "conversation" else "app/clean.py"
        assert f"the review of {failed} failed (RuntimeError)" in err
        assert "review_failed" in set(review["skipped"].values())
    else:
        stage = where.split()[0]
        assert f"the {stage} stage failed (RuntimeError)" in err
        assert set(review["skipped"].values()) == {f"{stage}_failed"}
        assert "something no check foresaw" in (run / "error.log").read_text()


def test_a_failed_stage_never_hides_a_secret_in_its_log(
        attacked: GitFixture, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    token = "ghp_" + "Q8mZ3xYv1Lw9Rt5Kp2Hs7Jd4Fg6Na0BcEe1T"

    def fail(*args: object, **kwargs: object) -> None:
        raise RuntimeError(f"a reply quoted {token}")

    monkeypatch.setattr("reviewbot.context.build_bundle", fail)
    _prepare(attacked, "staged")
    main(["--repo", str(attacked.root), "--quiet"])
    run = sorted((attacked.root / ".reviewbot" / "runs").glob("2*"))[-1]
    log = (run / "error.log")
    assert token not in log.read_text() and log.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("output", ["markdown", "text", "json", "sarif", "rdjson"])
def test_a_models_control_characters_reach_no_output(
        attacked: GitFixture, fake_openai: FakeOpenAI, capsys: pytest.CaptureFixture[str],
        output: str) -> None:
    record_with_controls(fake_openai)
    _prepare(attacked, "staged")
    main(["--repo", str(attacked.root), "--format", output])
    out = capsys.readouterr().out
    # JSON formats escape them ("\u001b"), which a reader would decode: none may be there.
    decoded = json.dumps(json.loads(out)) if output in ("json", "sarif", "rdjson") else out
    assert_no_controls(out)
    assert "\\u001b" not in decoded and "\\u202e" not in decoded
    assert "Clean" in out
