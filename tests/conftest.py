"""Shared fixtures: real temporary git repositories, isolated from the user's config."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI


class GitFixture:
    """A real repository in a temporary folder, with helpers to build changes."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def git(self, *args: str, check: bool = True) -> str:
        result = subprocess.run(["git", *args], cwd=self.root, capture_output=True, check=False)
        if check and result.returncode != 0:
            raise AssertionError(f"git {args} failed: {result.stderr.decode()}")
        return result.stdout.decode("utf-8", "replace")

    def write(self, path: str, content: str | bytes) -> Path:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        data = content.encode() if isinstance(content, str) else content
        target.write_bytes(data)
        return target

    def stage(self, *paths: str) -> None:
        self.git("add", "-A", "--", *paths)

    def commit(self, message: str = "change") -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD").strip()


@pytest.fixture(autouse=True)
def isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Pinned identity and no user/system git config, so tests run the same anywhere."""
    home = tmp_path_factory.mktemp("home")
    config = home / ".gitconfig"
    config.write_text("[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("HOME", str(home))
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Test Author")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "test@example.invalid")
        monkeypatch.setenv(f"GIT_{role}_DATE", "2026-01-01T00:00:00+00:00")


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[GitFixture]:
    root = tmp_path / "repo"
    root.mkdir()
    fixture = GitFixture(root)
    fixture.git("init", "-q", "--template=", ".")
    yield fixture


def assert_golden(path: Path, output: str) -> None:
    """Compare with a golden file (JSON structurally, text exactly).

    REVIEWBOT_UPDATE_GOLDEN=1 rewrites the file after an intended change.
    """
    import json
    import os

    if os.environ.get("REVIEWBOT_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(output + "\n", encoding="utf-8")
    expected = path.read_text(encoding="utf-8")
    if path.suffix in (".json", ".sarif", ".rdjson"):
        assert json.loads(output) == json.loads(expected)
    else:
        assert output + "\n" == expected


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A scripted OpenAI-compatible server on 127.0.0.1 (see tests/fake_openai.py)."""
    server = FakeOpenAI().start()
    yield server
    server.stop()


# The agent's conversations on a change small enough for one call (review/route.py): the
# tests about the agent use small changes.
AGENT_ON_SMALL_CHANGES = "small_change_agent = true\n"


def write_user_config(text: str) -> Path:
    """The user's config file (under the test's HOME)."""
    config = Path.home() / ".config" / "reviewbot" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text)
    return config


@pytest.fixture
def agent_on_small_changes() -> None:
    """The agent takes the risky units of a small change (the user's config, kept as another
    fixture wrote it)."""
    config = Path.home() / ".config" / "reviewbot" / "config.toml"
    text = config.read_text() if config.exists() else ""
    if AGENT_ON_SMALL_CHANGES not in text:
        write_user_config(text.replace("[limits]\n", "[limits]\n" + AGENT_ON_SMALL_CHANGES, 1)
                          if "[limits]\n" in text else text + "[limits]\n" + AGENT_ON_SMALL_CHANGES)


@pytest.fixture
def serial_reviews() -> None:
    """One model conversation at a time (the user's config), for tests that script replies in
    the order requests arrive; the agent takes a small change's risky units."""
    write_user_config("[limits]\nconcurrency = 1\n" + AGENT_ON_SMALL_CHANGES)
