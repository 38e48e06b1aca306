"""A merge request in a real repository, the fake GitLab serving it, and real python-gitlab."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest
from gitlab import utils as gitlab_utils

from tests.conftest import GitFixture
from tests.fake_gitlab import FakeGitLab

# The tokens of FakeGitLab's users (not secrets: the double's own names).
REVIEWBOT = "glpat-reviewbot"
UTIL = "".join(f"def f{n}(x):\n    return x + {n}\n\n\n" for n in range(1, 6))


@dataclass
class MergeRequest:
    repo: GitFixture
    gitlab: FakeGitLab
    # What python-gitlab slept, in seconds (recorded, not slept).
    waits: list[float] = field(default_factory=list)

    def client(self, token: str = REVIEWBOT, **kwargs: Any) -> Any:
        """Real python-gitlab, authenticated the way the token is meant to be sent."""
        from gitlab import Gitlab

        if token.startswith("job-"):
            return Gitlab(self.gitlab.url, job_token=token, **kwargs)
        if token.startswith("oauth-"):
            return Gitlab(self.gitlab.url, oauth_token=token, **kwargs)
        return Gitlab(self.gitlab.url, private_token=token, **kwargs)

    def project_mr(self, token: str = REVIEWBOT, **kwargs: Any) -> Any:
        client = self.client(token, **kwargs)
        project = client.projects.get(self.gitlab.path_with_namespace, lazy=True)
        return project.mergerequests.get(self.gitlab.iid)

    def push(self, files: dict[str, str], branch: str = "topic") -> str:
        """A new commit on a branch of the merge request; GitLab makes a new version."""
        current = self.repo.git("rev-parse", "--abbrev-ref", "HEAD").strip()
        self.repo.git("checkout", "-q", branch)
        for path, text in files.items():
            self.repo.write(path, text)
        sha = self.repo.commit(f"push to {branch}")
        self.repo.git("checkout", "-q", current)
        self.gitlab.refresh()
        return sha


@pytest.fixture
def gitlab() -> Iterator[FakeGitLab]:
    """The fake GitLab; a test fails if any request it saw breaks GitLab's contract."""
    server = FakeGitLab().start()
    yield server
    server.stop()
    assert server.violations == [], "\n".join(server.violations)


@pytest.fixture
def merge_request(repo: GitFixture, gitlab: FakeGitLab,
                  monkeypatch: pytest.MonkeyPatch) -> MergeRequest:
    """main: README and app/util.py; topic changes a line of util.py, removes one, adds one
    and a new file; main then moves on (so start_sha is not base_sha)."""
    repo.write("README.md", "# shop\n")
    repo.write("app/util.py", UTIL)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "topic")
    changed = UTIL.replace("return x + 2", "return x * 2").replace("    return x + 4\n", "")
    repo.write("app/util.py", changed + "def f6(x):\n    return x + 6\n")
    repo.write("app/run.py", "import subprocess\n\n\ndef run(p):\n    subprocess.run(p)\n")
    repo.commit("a change")
    repo.git("checkout", "-q", "main")
    repo.write("docs.md", "# docs\n")
    repo.commit("main moves on")
    gitlab.repo = repo.root
    gitlab.refresh()
    pr = MergeRequest(repo, gitlab)
    # python-gitlab's retries sleep through `gitlab.utils.time`: recorded here, not slept.
    clock: Callable[[], float] = time.time
    monkeypatch.setattr(gitlab_utils, "time", SimpleNamespace(sleep=pr.waits.append,
                                                              time=clock))
    return pr
