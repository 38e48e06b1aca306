"""`reviewbot explain`: a finished run, told from its artifacts."""

from __future__ import annotations

import pytest

from reviewbot.cli import main
from tests.conftest import GitFixture


def test_explain_shows_coverage_and_decisions(
        repo: GitFixture, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("docs/guide.md", "# Guide\n")
    repo.write("app/run.py", "import os\nos.system('ls ' + path)\n")
    repo.write("app/.reviewbot-ignored.py", "x = 1\n")
    repo.write(".reviewbot.toml", 'ignore = ["*ignored*"]\n')
    repo.stage()
    assert main(["--repo", str(repo.root), "--quiet"]) == 1
    capsys.readouterr()

    monkeypatch.chdir(repo.root)
    assert main(["explain"]) == 0
    out = capsys.readouterr().out
    assert "staged review against main" in out
    assert "coverage: 3 units in 3 files reviewed, 1 ignored by config" in out
    assert "findings: 1 error, 0 warning, 0 info" in out
    # The ignored file is new: named, with the glob, which the change itself writes (the
    # hook reads the work tree's config, and .reviewbot.toml is staged too).
    assert ("new files checked for secrets only: app/.reviewbot-ignored.py (`ignore` glob "
            "`*ignored*`, decided by the change)") in out
    units = [line for line in out.splitlines() if line.startswith("  ") and "priority" in line]
    assert units[0].startswith("  app/run.py L1-L2  add  high priority, function")
    assert ("why: security_sensitive: subprocess, rule findings; "
            "python.shell-injection (error) at L2") in out
    assert f"artifacts in {repo.root / '.reviewbot' / 'runs'}/" in out


def test_explain_without_runs_says_what_to_do(
        tmp_path: object, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(str(tmp_path))
    assert main(["explain"]) == 2
    assert "no finished runs in .reviewbot/runs; run reviewbot first" in capsys.readouterr().err


def test_explain_finds_runs_in_the_configured_output_dir(
        repo: GitFixture, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write(".reviewbot.toml", 'output_dir = "build/review-runs"\n')
    repo.write("app.py", "x = 1\n")
    repo.stage()
    assert main(["--repo", str(repo.root), "--quiet"]) == 0
    (repo.root / "sub").mkdir()
    monkeypatch.chdir(repo.root / "sub")
    capsys.readouterr()
    assert main(["explain"]) == 0
    assert f"artifacts in {repo.root / 'build' / 'review-runs'}" in capsys.readouterr().out


def test_explain_of_a_missing_folder_says_so(capsys: pytest.CaptureFixture[str],
                                             tmp_path: object) -> None:
    assert main(["explain", "/nonexistent/run"]) == 2
    assert "/nonexistent/run is not a folder" in capsys.readouterr().err


def test_explain_skips_a_crashed_run(repo: GitFixture, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("app.py", "x = 1\n")
    repo.stage()
    assert main(["--repo", str(repo.root), "--quiet"]) == 0
    runs = repo.root / ".reviewbot" / "runs"
    finished = next(p for p in runs.iterdir() if p.is_dir())
    (runs / "99991231T235959Z-crashed").mkdir()  # newer, and empty
    monkeypatch.chdir(repo.root)
    capsys.readouterr()
    assert main(["explain"]) == 0
    assert f"artifacts in {finished}" in capsys.readouterr().out


def test_explain_escapes_file_names(repo: GitFixture, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A file name is the reviewed repository's words: no escape sequence or bidi override
    from it reaches the terminal."""
    repo.write("app/evil\x1b[2J\u202etxt.py", "x = 1\n")
    repo.stage()
    assert main(["--repo", str(repo.root), "--quiet"]) == 0
    capsys.readouterr()
    monkeypatch.chdir(repo.root)
    assert main(["explain"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out
    assert "app/evil\\x1b[2J\\u202etxt.py" in out


def test_explain_says_what_a_first_push_was_compared_with(
        repo: GitFixture, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("app.py", "x = 1\n")
    repo.commit()
    monkeypatch.setenv("PRE_COMMIT_LOCAL_BRANCH", "refs/heads/main")
    assert main(["--repo", str(repo.root), "--pre-push", "--quiet"]) == 0
    capsys.readouterr()
    monkeypatch.chdir(repo.root)
    assert main(["explain"]) == 0
    out = capsys.readouterr().out
    assert "None" not in out
    assert "pr review against the empty tree (every commit up to refs/heads/main" in out
