"""A finding about a line the change removed (a deleted guard) is posted on that line:
GitHub's LEFT side, at the base's number."""

from __future__ import annotations

import pytest

from reviewbot.cli import main
from tests.attacks.guard_shapes_test import GUARDED, HEAD, TAIL
from tests.github.conftest import PullRequest


def test_github_takes_the_comment_on_the_left_side(pull: PullRequest,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The review comment on a removed line is GitHub's LEFT side, at the base's number,
    which the GitHub double holds to the diff."""
    pull.push({"app/files.py": GUARDED + TAIL, "app/run.py": None}, "guarded")
    pull.base = pull.head
    pull.push({"app/files.py": HEAD + TAIL}, "drop the guard")
    main(["--repo", str(pull.repo.root), "--mode", "github", "--offline", "--quiet"])
    [posted] = pull.github.posted_reviews()
    [comment] = posted["comments"]
    assert (comment["path"], comment["line"], comment["side"]) == ("app/files.py", 3, "LEFT")
    assert "guard-removed" in comment["body"]
