"""The reviewed side's other files, as the rules read them (`RepoSource.rules_texts`)."""

from __future__ import annotations

import pytest

from reviewbot.diff.parse import collect
from reviewbot.repo.git import open_repo
from reviewbot.repo.source import RepoSource
from reviewbot.schema.records import Mode
from reviewbot.schema.units import ChangeRequest
from tests.conftest import GitFixture


@pytest.mark.parametrize("mode", ["staged", "working"])
def test_rules_read_only_readable_files_of_the_reviewed_side(repo: GitFixture,
                                                             mode: Mode) -> None:
    repo.write("tools/utils.py", "def run(command):\n    pass\n")
    repo.write("tools/cli.py", "x = 1\n")
    repo.commit()
    repo.write("tools/cli.py", "x = 2\n")
    repo.write("tools/untracked.py", "def run(command):\n    pass\n")
    if mode == "staged":
        repo.stage("tools/cli.py")
    git = open_repo(repo.root)
    source = RepoSource(git, collect(git, ChangeRequest(mode=mode)))
    texts = source.rules_texts(["tools/utils.py", "tools/missing.py", "tools/untracked.py",
                                ".git/config", "tools/cli.py"])
    assert texts == {"tools/utils.py": "def run(command):\n    pass\n",
                     "tools/missing.py": None, "tools/untracked.py": None,
                     ".git/config": None, "tools/cli.py": "x = 2\n"}
