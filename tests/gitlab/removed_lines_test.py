"""A finding about a line the change removed (a deleted guard) is a discussion on that line:
`old_line` alone in GitLab's position."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewbot.cli import main
from tests.attacks.guard_shapes_test import GUARDED, HEAD, TAIL
from tests.gitlab.conftest import REVIEWBOT, MergeRequest


def test_gitlab_takes_the_discussion_on_the_old_line(
        merge_request: MergeRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The discussion on a removed line has `old_line` alone, which the GitLab double
    accepts only for a line the version's diff removes."""
    repo = merge_request.repo
    repo.git("checkout", "-q", "main")
    repo.write("app/files.py", GUARDED + TAIL)
    repo.commit("guarded")
    repo.git("checkout", "-q", "topic")
    repo.git("merge", "-q", "--no-edit", "main")
    repo.git("checkout", "-q", "main")
    merge_request.push({"app/files.py": HEAD + TAIL})
    latest = merge_request.gitlab.latest
    assert latest is not None
    project = tmp_path / "project"
    project.mkdir()
    for name, value in {
            "CI_API_V4_URL": f"{merge_request.gitlab.url}/api/v4", "CI_PROJECT_ID": "42",
            "CI_MERGE_REQUEST_IID": "7", "CI_MERGE_REQUEST_DIFF_BASE_SHA": latest.base,
            "CI_COMMIT_SHA": latest.head, "CI_PIPELINE_SOURCE": "merge_request_event",
            "CI_MERGE_REQUEST_SOURCE_PROJECT_ID": "42", "CI_PROJECT_DIR": str(project),
            "GITLAB_TOKEN": REVIEWBOT}.items():
        monkeypatch.setenv(name, value)
    repo.git("checkout", "-q", latest.head)
    main(["--repo", str(repo.root), "--mode", "gitlab", "--offline", "--quiet"])
    notes = [n for n in merge_request.gitlab.notes() if n["position"] is not None
             and "guard-removed" in str(n["body"])]
    [note] = notes
    position = note["position"]
    assert isinstance(position, dict)
    assert (position["old_path"], position["old_line"], position["new_line"]) == (
        "app/files.py", 3, None)
