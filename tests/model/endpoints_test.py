"""Who may choose where the code goes and which models the key pays for: loopback decided on
the address (never a name that starts with `127.`), a server on this machine reached
directly (never through a proxy), and a repository's fallback models never used with the
user's model."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reviewbot.cli import main
from reviewbot.config import is_loopback_url
from tests.conftest import GitFixture
from tests.fake_openai import FakeOpenAI
from tests.local_server import LocalServer, QuietHandler
from tests.model.helpers import KEY


class RecordingProxy:
    """An HTTP proxy on 127.0.0.1 that records what it is asked to carry and carries
    nothing (a CI runner's proxy, as far as these tests can tell)."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        proxy = self

        class Handler(QuietHandler):
            def _record(self) -> None:
                proxy.requests.append(f"{self.command} {self.path}")
                self.send_response(502)
                self.send_header("content-length", "0")
                self.end_headers()

            do_GET = do_POST = do_CONNECT = _record

        self._local = LocalServer(Handler)

    @property
    def url(self) -> str:
        return self._local.origin


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[RecordingProxy]:
    server = RecordingProxy()
    server._local.start()
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.setenv(name, server.url)
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    yield server
    server._local.stop()


@pytest.mark.parametrize(("url", "local"), [
    ("http://127.0.0.1:8080/v1", True), ("http://127.1.2.3/v1", True),
    ("http://localhost:11434/v1", True), ("http://LOCALHOST/v1", True),
    ("http://[::1]:8000/v1", True),
    ("http://127.0.0.1.attacker.invalid/v1", False), ("http://127.evil.invalid/v1", False),
    ("http://localhost.attacker.invalid/v1", False), ("http://[::2]/v1", False),
    ("http://10.0.0.1/v1", False), ("http://[::1/v1", False), ("not a url", False),
])
def test_loopback_is_an_address_or_localhost(url: str, local: bool) -> None:
    assert is_loopback_url(url) is local


def _staged(repo: GitFixture) -> None:
    repo.write("README.md", "# x\n")
    repo.commit()
    repo.write("app.py", "import os\nos.system('ls ' + input())\n")
    repo.stage()


def test_a_repository_cannot_send_the_diff_to_a_name_that_looks_local(
        repo: GitFixture, proxy: RecordingProxy, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`127.0.0.1.attacker.invalid` resolves only through the proxy: it is not this machine."""
    _staged(repo)
    repo.write(".reviewbot.toml", '[model]\nname = "local"\n'
                                  'base_url = "http://127.0.0.1.attacker.invalid/v1"\n')
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    code = main(["--repo", str(repo.root), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "is not a server on this machine" in err
    assert proxy.requests == []


def test_a_local_server_is_reached_directly_never_through_the_proxy(
        repo: GitFixture, proxy: RecordingProxy, fake_openai: FakeOpenAI,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _staged(repo)
    monkeypatch.setenv("REVIEWBOT_MODEL", "local")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    fake_openai.reply_json({"plan": []})
    fake_openai.finish_every_review()
    assert main(["--repo", str(repo.root), "--quiet"]) == 1
    assert fake_openai.received and proxy.requests == []


def test_a_repository_cannot_add_models_to_the_users_key(
        repo: GitFixture, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _staged(repo)
    repo.write(".reviewbot.toml", f'[model]\nname = "repo-model"\nbase_url = '
                                  f'"{fake_openai.base_url}"\n'
                                  'fallback_models = ["repo-expensive-model"]\n')
    monkeypatch.setenv("REVIEWBOT_MODEL", "user-model")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    fake_openai.reply_text("not json")  # every answer invalid: the session looks for fallbacks
    fake_openai.reply_text("still not json")
    fake_openai.finish_every_review()
    assert main(["--repo", str(repo.root), "--quiet"]) == 1
    models = {request.body["model"] for request in fake_openai.received}
    assert models == {"user-model"}
    assert "names fallback models; they are not used" in capsys.readouterr().err


def test_a_repositorys_model_keeps_its_fallbacks_without_the_key(
        repo: GitFixture, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _staged(repo)
    repo.write(".reviewbot.toml", f'[model]\nname = "repo-model"\nbase_url = '
                                  f'"{fake_openai.base_url}"\n'
                                  'fallback_models = ["repo-backup"]\n')
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    fake_openai.reply_text("not json")
    fake_openai.reply_text("still not json")
    fake_openai.reply_json({"plan": []})
    fake_openai.finish_every_review()
    assert main(["--repo", str(repo.root), "--quiet"]) == 1
    assert {r.body["model"] for r in fake_openai.received} == {"repo-model", "repo-backup"}
    assert all(KEY not in r.headers.get("authorization", "") for r in fake_openai.received)
