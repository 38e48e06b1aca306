"""`reviewbot --mode gitlab` in each shape of merge request pipeline GitLab runs, with the
variables GitLab sets in it (tests/fake_gitlab.py, `ci_variables`) and a working copy made
as GitLab Runner makes it: a plain merge request pipeline, a merged results pipeline and a
merge train (both check out GitLab's merge commit), a shallow clone, and a fork's pipeline
in the fork or in the merge request's project."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reviewbot.cli import main
from tests.gitlab.conftest import REVIEWBOT, MergeRequest

HELLO = ("# hello: the greeting\n"
         "import os\n"
         "\n"
         "def hello(name):\n"
         "    return f\"hello {name}\"\n")
KEY = 'AWS_KEY = "AKIAZ7Q2MXC5LFPN3WKB"\n'
OTHER = "import subprocess\n\n\ndef run(cmd):\n    subprocess.run(cmd, shell=True)\n"


@pytest.fixture
def moved_on(merge_request: MergeRequest) -> MergeRequest:
    """A merge request that adds a key as line 6 of app/hello.py, and a target branch that
    moved on after it: one line fewer at the top of app/hello.py (the merge commit has the
    key on line 5, where the merge request's head has `return f"hello {name}"`) and a file of
    its own with a shell injection."""
    mr = merge_request
    mr.push({"app/hello.py": HELLO}, branch="main")
    mr.repo.git("checkout", "-q", "topic")
    mr.repo.git("merge", "-q", "--no-edit", "main")
    mr.repo.git("checkout", "-q", "main")
    mr.push({"app/hello.py": HELLO + KEY})
    mr.push({"app/hello.py": HELLO.replace("# hello: the greeting\n", ""),
             "app/other.py": OTHER}, branch="main")
    return mr


def runner_clone(mr: MergeRequest, env: dict[str, str], depth: int = 0) -> Path:
    """The job's working copy as GitLab Runner makes it: the pipeline's ref fetched from the
    project (with the branches when GIT_DEPTH is "0", else that many commits of the ref
    alone), its commit checked out, detached."""
    work = mr.repo.root.parent / f"build-{depth}-{env['CI_COMMIT_SHA'][:8]}"
    work.mkdir()
    ref = env["CI_COMMIT_REF_NAME"]
    refspecs = [f"+{ref}:{ref}"]
    if not depth:
        refspecs.append("+refs/heads/*:refs/remotes/origin/*")
    for args in (["init", "-q"], ["remote", "add", "origin", mr.repo.root.as_uri()],
                 ["fetch", "-q", *([f"--depth={depth}"] if depth else []), "origin", *refspecs],
                 ["checkout", "-q", "--detach", env["CI_COMMIT_SHA"]]):
        mr.repo.git("-C", str(work), *args)
    return work


def review(work: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch,
           token: str = REVIEWBOT) -> int:
    for name in [n for n in os.environ if n.startswith(("CI_", "GITLAB_"))]:
        monkeypatch.delenv(name)
    for name, value in {**env, "CI_PROJECT_DIR": str(work), "GITLAB_TOKEN": token}.items():
        monkeypatch.setenv(name, value)
    return main(["--repo", str(work), "--mode", "gitlab", "--offline", "--quiet"])


def report(work: Path) -> list[dict[str, object]]:
    found = json.loads((work / "gl-code-quality-report.json").read_text())
    assert isinstance(found, list)
    return found


def diff_notes(mr: MergeRequest) -> list[dict[str, object]]:
    return [n for n in mr.gitlab.notes() if n["position"] is not None]


@pytest.mark.parametrize("event", ["detached", "merged_result", "merge_train"])
def test_every_pipeline_shape_reviews_the_merge_requests_own_head(
        moved_on: MergeRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], event: str) -> None:
    """In a merged results pipeline or a merge train CI_COMMIT_SHA is GitLab's merge commit:
    the review is still the merge request's head against its base, so the key's thread is
    on the key's line (6, in the head's version), and the target branch's own file is
    neither reviewed, nor counted, nor listed."""
    env = moved_on.gitlab.ci_variables(event)
    assert (env["CI_COMMIT_SHA"] != moved_on.gitlab.latest.head) == (event != "detached")
    work = runner_clone(moved_on, env)
    assert review(work, env, monkeypatch) == 1
    [note] = diff_notes(moved_on)
    position = note["position"]
    assert isinstance(position, dict)
    assert (position["new_path"], position["new_line"], position["head_sha"]) == \
        ("app/hello.py", 6, moved_on.gitlab.latest.head)
    assert "secrets.hardcoded" in str(note["body"])
    assert {str(issue["location"]["path"]) for issue in report(work)} == {"app/hello.py"}
    [summary] = [n for n in moved_on.gitlab.notes() if n["position"] is None]
    assert "app/hello.py" in str(summary["body"]) and "other.py" not in str(summary["body"])
    assert "other.py" not in capsys.readouterr().out


def test_a_merged_result_whose_head_the_clone_lacks_fetches_it(
        moved_on: MergeRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A shallow clone of GitLab's merge commit holds neither the head nor the base: the
    head is fetched by its id (with its history), and the review is the plain one."""
    env = moved_on.gitlab.ci_variables("merged_result")
    work = runner_clone(moved_on, env, depth=1)
    assert moved_on.repo.git("-C", str(work), "cat-file", "-t", env[
        "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"], check=False) == ""
    assert review(work, env, monkeypatch) == 1
    assert "fetching the merge request's head" in capsys.readouterr().err
    [note] = diff_notes(moved_on)
    assert note["position"]["new_line"] == 6  # type: ignore[index]


def test_a_merged_result_without_the_source_sha_is_refused(
        moved_on: MergeRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A merged results pipeline says so; without the head's SHA reviewbot would review the
    target branch's changes as the merge request's: a usage error, and nothing posted."""
    env = moved_on.gitlab.ci_variables("merged_result")
    work = runner_clone(moved_on, env)
    del env["CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"]
    assert review(work, env, monkeypatch) == 2
    assert "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA" in capsys.readouterr().err
    assert moved_on.gitlab.notes() == []


def test_a_shallow_clone_says_gitlabs_fix_and_still_writes_the_report(
        moved_on: MergeRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """GitLab clones 20 or 50 commits by default: a base outside the clone is exit 2 with
    GitLab's fix (`GIT_DEPTH: "0"`), not GitHub's, and the job's Code Quality report is
    written (empty: nothing was reviewed)."""
    env = moved_on.gitlab.ci_variables("detached")
    work = runner_clone(moved_on, env, depth=1)
    assert review(work, env, monkeypatch) == 2
    err = capsys.readouterr().err
    assert 'GIT_DEPTH: "0"' in err and "shallow" in err
    assert "fetch-depth" not in err and "pull request" not in err
    assert report(work) == []


@pytest.mark.parametrize(("runs_in", "token", "says", "never"), [
    ("fork", REVIEWBOT, "its GITLAB_TOKEN is the fork's own variable", "no GITLAB_TOKEN"),
    ("fork", "", "none of project 42's CI/CD variables (no GITLAB_TOKEN)", "fork's own"),
    ("parent", REVIEWBOT, "posts nothing to a fork's merge request, also from a pipeline of "
                          "project 42 that has GITLAB_TOKEN", "no GITLAB_TOKEN"),
    ("parent", "", "this pipeline has no GITLAB_TOKEN", "fork's own"),
])
def test_a_forks_merge_request_is_told_what_happened(
        moved_on: MergeRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], runs_in: str, token: str, says: str,
        never: str) -> None:
    """A fork's merge request gets the report and no post; the job log says why, as it is:
    the pipeline ran in the fork (whose token, if any, is the fork's) or in the merge
    request's project (with the project's token, or none)."""
    env = moved_on.gitlab.ci_variables("detached")
    env["CI_MERGE_REQUEST_SOURCE_PROJECT_ID"] = "99"
    if runs_in == "fork":
        env["CI_PROJECT_ID"] = "99"
    work = runner_clone(moved_on, env)
    assert review(work, env, monkeypatch, token) == 1
    err = capsys.readouterr().err
    assert "comes from a fork (project 99)" in err and says in err and never not in err
    assert report(work) and moved_on.gitlab.requests == []
