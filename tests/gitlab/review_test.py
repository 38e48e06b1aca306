"""`reviewbot --mode gitlab` in a merge request pipeline, with real python-gitlab against the
fake GitLab: the Code Quality report, discussions on their lines, one summary note, reruns,
dismissals, tokens that cannot write, and the pipeline's variables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewbot.cli import main
from tests.gitlab.conftest import REVIEWBOT, MergeRequest

RUN = "import subprocess\n\n\ndef run(cmd):\n    subprocess.run(cmd, shell=True)\n"


@pytest.fixture
def pipeline(merge_request: MergeRequest, monkeypatch: pytest.MonkeyPatch,
             tmp_path: Path) -> MergeRequest:
    """A merge request whose app/run.py runs a shell command (an error on added line 5), and
    a merge request pipeline's variables for it."""
    merge_request.push({"app/run.py": RUN})
    latest = merge_request.gitlab.latest
    assert latest is not None
    project_dir = tmp_path / "project"
    project_dir.mkdir()
    env = {"CI_API_V4_URL": f"{merge_request.gitlab.url}/api/v4", "CI_PROJECT_ID": "42",
           "CI_MERGE_REQUEST_IID": "7", "CI_MERGE_REQUEST_DIFF_BASE_SHA": latest.base,
           "CI_COMMIT_SHA": latest.head, "CI_PIPELINE_SOURCE": "merge_request_event",
           "CI_MERGE_REQUEST_SOURCE_PROJECT_ID": "42", "CI_PROJECT_DIR": str(project_dir),
           "GITLAB_TOKEN": REVIEWBOT}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return merge_request


def review(mr: MergeRequest, *args: str) -> int:
    return main(["--repo", str(mr.repo.root), "--mode", "gitlab", "--offline", "--quiet",
                 "--fail-level", "warning",
                 *args])


def report(tmp_path: Path) -> list[dict[str, object]]:
    found = json.loads((tmp_path / "project" / "gl-code-quality-report.json").read_text())
    assert isinstance(found, list)
    return found


def diff_notes(mr: MergeRequest) -> list[dict[str, object]]:
    return [n for n in mr.gitlab.notes() if n["position"] is not None]


def summaries(mr: MergeRequest) -> list[dict[str, object]]:
    return [n for n in mr.gitlab.notes() if "reviewbot:summary" in str(n["body"])]


def test_a_first_review_posts_on_the_line_and_one_summary(
        pipeline: MergeRequest, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A finding on an added line is a discussion with `new_line` alone, on the version's
    SHAs; one summary note opens with the walkthrough; the Code Quality report is written."""
    assert review(pipeline) == 1
    latest = pipeline.gitlab.latest
    assert latest is not None
    [note] = diff_notes(pipeline)
    position = note["position"]
    assert isinstance(position, dict)
    assert (position["new_path"], position["new_line"], position["old_line"]) == \
        ("app/run.py", 5, None)
    assert (position["base_sha"], position["start_sha"], position["head_sha"]) == \
        (latest.base, latest.start, latest.head)
    assert "python.shell-injection" in str(note["body"])
    [summary] = summaries(pipeline)
    assert str(summary["body"]).startswith("## reviewbot")
    assert "the whole merge request" in str(summary["body"])
    assert "### What this change does" in str(summary["body"])
    assert [i["check_name"] for i in report(tmp_path)] == ["python.shell-injection"]
    assert "review posted: 1 new discussion" in capsys.readouterr().err


def test_a_rerun_posts_nothing_twice_and_edits_the_summary(pipeline: MergeRequest) -> None:
    """Reruns are idempotent: the summary note is edited in place, no discussion repeated."""
    review(pipeline)
    writes = len(pipeline.gitlab.writes)
    review(pipeline)
    assert [(w.method, w.path.rsplit("/", 2)[-2]) for w in pipeline.gitlab.writes[writes:]] \
        == [("PUT", "notes")]
    assert len(diff_notes(pipeline)) == 1 and len(summaries(pipeline)) == 1
    assert "Inline: 0 new comments, 1 already posted" in str(summaries(pipeline)[0]["body"])


def test_a_fixed_finding_is_resolved_by_reviewbot(pipeline: MergeRequest,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A discussion is resolved by reviewbot when its finding is gone, and only then."""
    review(pipeline)
    monkeypatch.setenv("CI_COMMIT_SHA", pipeline.push({"app/run.py": RUN.replace(
        ", shell=True", "")}))
    review(pipeline)
    [note] = diff_notes(pipeline)
    assert note["resolved"] and "**Resolved**" in str(note["body"])


def test_a_discussion_a_person_resolved_stays_resolved_and_is_counted(
        pipeline: MergeRequest) -> None:
    """A dismissal is GitLab's own gesture: a person resolves reviewbot's discussion; later
    runs never re-open it nor post its finding again, and the summary counts it."""
    review(pipeline)
    [note] = diff_notes(pipeline)
    note |= {"resolved": True, "resolved_by": {"username": "author"}}
    writes = len(pipeline.gitlab.writes)
    review(pipeline)
    new = pipeline.gitlab.writes[writes:]
    assert all("resolved" not in w.body for w in new)
    assert [(w.method, w.path.rsplit("/", 2)[-2]) for w in new] == [("PUT", "notes")]
    assert len(diff_notes(pipeline)) == 1 and diff_notes(pipeline)[0]["resolved"]
    assert ", 1 dismissed (threads resolved by `author`)." in str(summaries(pipeline)[0]["body"])


@pytest.mark.parametrize(("token", "why"), [("", "no GitLab token"),
                                             ("job-reviewbot", "401"),
                                             ("glpat-outsider", "not a member")])
def test_a_token_that_cannot_write_still_writes_the_report_and_keeps_the_exit_code(
        pipeline: MergeRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], token: str, why: str) -> None:
    """No token, a CI job token, or a non-member's token: the Code Quality report is written,
    the exit code follows the findings, and one line says why nothing was posted."""
    monkeypatch.setenv("GITLAB_TOKEN", token)
    assert review(pipeline) == 1
    assert report(tmp_path)
    err = capsys.readouterr().err
    assert why in err and "Code Quality report" in err
    assert pipeline.gitlab.notes() == []


def test_a_forks_pipeline_posts_nothing(pipeline: MergeRequest, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A fork's merge request is not posted to (its pipeline has no secrets); the report is."""
    monkeypatch.setenv("CI_MERGE_REQUEST_SOURCE_PROJECT_ID", "99")
    assert review(pipeline) == 1
    assert report(tmp_path) and pipeline.gitlab.requests == []
    assert "comes from a fork" in capsys.readouterr().err


def test_a_pipeline_that_runs_in_the_fork_posts_nothing(
        pipeline: MergeRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A fork's merge request pipeline runs in the fork by default: CI_PROJECT_ID and the
    source project are the fork, the merge request is the target's
    (CI_MERGE_REQUEST_PROJECT_ID). Nothing is posted: not to the fork's merge request of the
    same number, with whatever token the fork's owner set."""
    monkeypatch.setenv("CI_MERGE_REQUEST_PROJECT_ID", "42")
    monkeypatch.setenv("CI_PROJECT_ID", "99")
    monkeypatch.setenv("CI_MERGE_REQUEST_SOURCE_PROJECT_ID", "99")
    assert review(pipeline) == 1
    assert report(tmp_path) and pipeline.gitlab.requests == []
    assert "comes from a fork" in capsys.readouterr().err


def test_a_write_that_keeps_failing_is_exit_3_with_the_report_written(
        pipeline: MergeRequest, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """GitLab failing every write: exit 3, the report written before, and no doubles."""
    pipeline.gitlab.fail("POST", r"/discussions$", 503, times=10)
    assert review(pipeline) == 3
    assert report(tmp_path)
    assert "posting the review failed: GitLab kept failing" in capsys.readouterr().err
    assert pipeline.gitlab.count("POST", r"/discussions$") == 4


def test_a_5xx_gitlab_stored_is_not_posted_twice(pipeline: MergeRequest) -> None:
    """A write GitLab stored before failing is looked up, never repeated."""
    pipeline.gitlab.fail("POST", r"/discussions$", 500, stored=True)
    pipeline.gitlab.fail("POST", r"/notes$", 502, stored=True)
    assert review(pipeline) == 1
    assert len(diff_notes(pipeline)) == 1 and len(summaries(pipeline)) == 1
    assert pipeline.gitlab.count("POST", r"/discussions$") == 1


def test_outside_a_merge_request_pipeline_is_exit_2(
        pipeline: MergeRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Any pipeline source but merge_request_event is a clear usage error."""
    monkeypatch.setenv("CI_PIPELINE_SOURCE", "push")
    assert review(pipeline) == 2
    assert "CI_PIPELINE_SOURCE is 'push'" in capsys.readouterr().err


def test_codequality_and_full_review_flags(pipeline: MergeRequest, tmp_path: Path) -> None:
    """--codequality FILE moves the report; --full-review is --full."""
    target = tmp_path / "cq.json"
    assert review(pipeline, "--codequality", str(target), "--full-review") == 1
    assert json.loads(target.read_text())[0]["check_name"] == "python.shell-injection"


def test_a_suppression_the_merge_request_adds_is_in_the_summary_not_the_report(
        pipeline: MergeRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Code Quality has no field for a suppression: the finding a `# nosec` quietens is left
    out of the report, and the summary note counts it and lists it, with its file and line."""
    head = pipeline.push({"app/run.py": RUN.replace("shell=True)", "shell=True)  # nosec")})
    monkeypatch.setenv("CI_COMMIT_SHA", head)
    assert review(pipeline) == 0
    assert report(tmp_path) == []
    [summary] = summaries(pipeline)
    body = str(summary["body"])
    assert "**Quietened:** 1 finding, 1 by the change (`nosec`: 1 not reported)." in body
    assert ("- **warning**, not reported: `app/run.py` L5 Command run through a shell "
            "(`python.shell-injection`), by the change (`nosec`)") in body
