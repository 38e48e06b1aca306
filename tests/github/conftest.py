"""A pull request in a real repository, its GitHub Actions environment, and the fake GitHub."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from reviewbot.github.forge import GithubForge
from tests.conftest import GitFixture
from tests.fake_github import FakeGitHub

BAD = 'import subprocess\n\n\ndef run(path):\n    subprocess.run(f"ls {path}", shell=True)\n'


@dataclass
class PullRequest:
    repo: GitFixture
    github: FakeGitHub
    base: str
    head: str
    home: Path
    waits: list[float] = field(default_factory=list)

    def event(self, *, fork: bool = False, name: str = "pull_request") -> Path:
        base_repo = {"full_name": self.github.repository}
        head_repo = {"full_name": "stranger/shop" if fork else self.github.repository}
        payload = {"action": "synchronize", "number": self.github.number, "pull_request": {
            "number": self.github.number,
            "base": {"sha": self.base, "ref": "main", "repo": base_repo},
            "head": {"sha": self.head, "ref": "topic", "repo": head_repo}}}
        path = self.home / f"event-{name}-{fork}.json"
        path.write_text(json.dumps(payload))
        return path

    def push(self, files: dict[str, str | None], message: str = "more") -> str:
        """A new commit on the pull request's branch; the fake learns its patches."""
        for path, text in files.items():
            if text is None:
                (self.repo.root / path).unlink()
            else:
                self.repo.write(path, text)
        self.head = self.repo.commit(message)
        self.sync()
        self.event()  # the synchronize event names the new head
        return self.head

    def sync(self) -> None:
        self.github.head_sha, self.github.base_sha = self.head, self.base
        names = self.repo.git("diff", "--name-only", f"{self.base}...{self.head}").split()
        self.github.files = {name: _patch(self.repo, self.base, self.head, name)
                             for name in names}


def _patch(repo: GitFixture, base: str, head: str, path: str) -> str | None:
    diff = repo.git("diff", "--unified=3", f"{base}...{head}", "--", path)
    body = diff.split("\n@@", 1)
    return "@@" + body[1] if len(body) == 2 else None


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    """The fake GitHub; a test fails if anything it saw or said breaks GitHub's contract."""
    server = FakeGitHub().start()
    yield server
    server.stop()
    assert server.violations == [], "\n".join(server.violations)


@pytest.fixture
def pull(repo: GitFixture, github: FakeGitHub, tmp_path: Path,
         monkeypatch: pytest.MonkeyPatch) -> PullRequest:
    repo.write("README.md", "# shop\n")
    repo.write("app/util.py", "def area(w, h):\n    return w * h\n")
    base = repo.commit("base")
    repo.git("checkout", "-q", "-b", "topic")
    repo.write("app/run.py", BAD)
    head = repo.commit("add a runner")
    home = tmp_path / "actions"
    home.mkdir()
    pr = PullRequest(repo=repo, github=github, base=base, head=head, home=home)
    pr.sync()
    for name, value in {
        "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(pr.event()),
        "GITHUB_API_URL": github.url, "GITHUB_REPOSITORY": github.repository,
        "GITHUB_TOKEN": "ghs_testtoken", "GITHUB_WORKSPACE": str(home),
        "GITHUB_STEP_SUMMARY": str(home / "summary.md"),
        "GITHUB_OUTPUT": str(home / "output.txt"),
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("reviewbot.github.action.SECONDS_BETWEEN_WRITES", 0)
    monkeypatch.setattr("reviewbot.github.action.SECONDS_BETWEEN_REQUESTS", 0)
    monkeypatch.setattr("reviewbot.github.forge.GET_BACKOFF_S", 0)
    monkeypatch.setattr("reviewbot.github.forge.TIMEOUT_S", 5)
    # Waits are recorded, not slept: the tests assert what GitHub's rules ask for.
    monkeypatch.setattr("reviewbot.github.action.GithubForge",
                        functools.partial(GithubForge, sleep=pr.waits.append))
    return pr
