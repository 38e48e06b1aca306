"""The hooks in .pre-commit-hooks.yaml, run by the real pre-commit on a real repository.

pre-commit clones hook repositories by revision and installs them into their own virtual
environment, so the hook repository here is a commit of this checkout's files. The
environment is built once per module (PRE_COMMIT_HOME), from pip's usual cache.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import GitFixture

ROOT = Path(__file__).resolve().parents[1]
PRE_COMMIT = str(Path(sys.executable).parent / "pre-commit")
# Read before the per-test fixture points HOME at a temporary folder: pip's cache lives here.
PIP_CACHE = os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip")
BAD = 'import subprocess\n\n\ndef run(path):\n    subprocess.run(f"ls {path}", shell=True)\n'
GOOD = "def area(w, h):\n    return w * h\n"


def _git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                            check=True, env=env)
    return result.stdout


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    root = tmp_path_factory.mktemp("hook-repo")
    shutil.copytree(ROOT / "reviewbot", root / "reviewbot",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy(ROOT / name, root / name)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
           "GIT_CONFIG_NOSYSTEM": "1"}
    _git(root, "init", "-q", env=env)
    _git(root, "add", "-A", env=env)
    _git(root, "commit", "-q", "-m", "hooks", env=env)
    yield root, _git(root, "rev-parse", "HEAD", env=env).strip()


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def project(repo: GitFixture, hook_repo: tuple[Path, str], pre_commit_home: Path,
            monkeypatch: pytest.MonkeyPatch) -> GitFixture:
    """A user's repository with reviewbot's hooks installed for commit and push."""
    monkeypatch.setenv("PRE_COMMIT_HOME", str(pre_commit_home))
    monkeypatch.setenv("PIP_CACHE_DIR", PIP_CACHE)
    path, rev = hook_repo
    repo.write(".pre-commit-config.yaml", (
        f"repos:\n- repo: {path}\n  rev: {rev}\n  hooks:\n"
        "  - id: reviewbot\n  - id: reviewbot-push\n"
    ))
    repo.write("README.md", "# project\n")
    repo.commit("initial")
    subprocess.run([PRE_COMMIT, "install", "-t", "pre-commit", "-t", "pre-push"],
                   cwd=repo.root, check=True, capture_output=True)
    return repo


def _commit(project: GitFixture, message: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "commit", "-m", message], cwd=project.root,
                          capture_output=True, text=True, check=False)


def test_bad_change_blocks_the_commit_and_shows_findings(project: GitFixture) -> None:
    project.write("app/run.py", BAD)
    project.stage()
    before = project.git("rev-parse", "HEAD")

    result = _commit(project, "add runner")

    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "reviewbot" in output and "Failed" in output
    assert "python.shell-injection" in output and "app/run.py" in output
    assert project.git("rev-parse", "HEAD") == before
    # The hook changed nothing: the file is still staged, the tree has no edits.
    assert project.git("status", "--porcelain") == "A  app/run.py\n"


def test_clean_change_commits(project: GitFixture) -> None:
    project.write("app/shapes.py", GOOD)
    project.stage()

    result = _commit(project, "add shapes")

    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "reviewbot" in output and "Passed" in output
    assert project.git("log", "-1", "--format=%s").strip() == "add shapes"


def test_pre_push_hook_reviews_the_pushed_range(project: GitFixture) -> None:
    base = project.git("rev-parse", "HEAD").strip()
    project.write("app/run.py", BAD)
    project.stage()
    project.git("commit", "-q", "--no-verify", "-m", "bad, skipping the commit hook")
    head = project.git("rev-parse", "HEAD").strip()

    result = subprocess.run(
        [PRE_COMMIT, "run", "--hook-stage", "pre-push", "--from-ref", base, "--to-ref", head,
         "reviewbot-push"],
        cwd=project.root, capture_output=True, text=True, check=False)

    assert result.returncode == 1, result.stdout + result.stderr
    assert "python.shell-injection" in result.stdout


AWS_KEY = "AKIAZ3MSJV4WWNKWW5FG"  # a made-up key in the AWS format


@pytest.fixture
def remote(project: GitFixture, tmp_path: Path) -> Path:
    """An empty bare repository as `origin`."""
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    project.git("remote", "add", "origin", str(bare))
    return bare


def _push(project: GitFixture, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "push", "-q", *args], cwd=project.root, capture_output=True,
                          text=True, check=False)


def _commit_unverified(project: GitFixture, path: str, content: str | None, message: str) -> None:
    if content is None:
        (project.root / path).unlink()
    else:
        project.write(path, content)
    project.git("add", "-A")
    project.git("commit", "-q", "--no-verify", "-m", message)


def test_first_push_of_a_new_repository_is_reviewed_not_refused(
        project: GitFixture, remote: Path) -> None:
    result = _push(project, "-u", "origin", "main")
    assert result.returncode == 0, result.stdout + result.stderr
    assert project.git("--git-dir", str(remote), "rev-parse", "main").strip() == \
        project.git("rev-parse", "HEAD").strip()


def test_first_push_with_a_problem_is_blocked(project: GitFixture, remote: Path) -> None:
    _commit_unverified(project, "app/run.py", BAD, "bad")
    result = _push(project, "-u", "origin", "main")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "python.shell-injection" in output and "first push" in output


def test_normal_push_new_branch_and_deleted_branch(project: GitFixture, remote: Path) -> None:
    assert _push(project, "-u", "origin", "main").returncode == 0
    _commit_unverified(project, "app/shapes.py", GOOD, "good")
    assert _push(project, "origin", "main").returncode == 0

    project.git("checkout", "-q", "-b", "feature")
    _commit_unverified(project, "app/run.py", BAD, "bad on a branch")
    blocked = _push(project, "-u", "origin", "feature")
    assert blocked.returncode != 0 and "python.shell-injection" in blocked.stdout + blocked.stderr
    _commit_unverified(project, "app/run.py", GOOD, "fixed")
    assert _push(project, "-u", "origin", "feature").returncode == 0

    deleted = _push(project, "origin", "--delete", "feature")
    assert deleted.returncode == 0, deleted.stdout + deleted.stderr


def test_a_secret_added_and_removed_within_one_push_is_blocked(
        project: GitFixture, remote: Path) -> None:
    assert _push(project, "-u", "origin", "main").returncode == 0
    _commit_unverified(project, "deploy.py", f'KEY = "{AWS_KEY}"\n', "add key")
    _commit_unverified(project, "deploy.py", 'import os\nKEY = os.environ["KEY"]\n', "oops")

    result = _push(project, "origin", "main")

    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "secrets.in-history" in output and "A later commit removes it" in output
    assert AWS_KEY not in output


def test_a_file_added_with_a_secret_and_deleted_within_one_push_is_blocked(
        project: GitFixture, remote: Path) -> None:
    """The net diff has no file at all: pre-commit would skip a hook with "(no files to
    check)", and the per-commit secret check would never run."""
    assert _push(project, "-u", "origin", "main").returncode == 0
    _commit_unverified(project, "deploy.py", f'KEY = "{AWS_KEY}"\n', "add key")
    project.git("rm", "-q", "deploy.py")
    project.git("commit", "-q", "--no-verify", "-m", "remove it")

    result = _push(project, "origin", "main")

    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "secrets.in-history" in output and "Skipped" not in output


def test_all_files_run_with_nothing_staged_reviews_the_tracked_files(
        project: GitFixture) -> None:
    _commit_unverified(project, "app/run.py", BAD, "bad")
    result = subprocess.run([PRE_COMMIT, "run", "--all-files", "reviewbot"], cwd=project.root,
                            capture_output=True, text=True, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "python.shell-injection" in output
    assert "reviewing every tracked file" in output


def test_all_files_run_on_a_branch_level_with_its_remote_says_so(
        project: GitFixture, remote: Path) -> None:
    """`pre-commit run --all-files` on a branch with nothing of its own says why every
    tracked file is reviewed (the branch is at origin/main), never that there is no branch
    to compare with."""
    assert _push(project, "-u", "origin", "main").returncode == 0
    result = subprocess.run([PRE_COMMIT, "run", "--all-files", "--verbose", "reviewbot"],
                            cwd=project.root, capture_output=True, text=True, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert ("nothing is staged (pre-commit run --all-files?), and main is at origin/main (no "
            "commit of its own): reviewing every tracked file") in output
    assert "no branch to compare with" not in output
