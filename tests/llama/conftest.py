"""A real llama.cpp server on 127.0.0.1 (built by tests/llama/build.py), and a proxy that can
force the tiny model's next answer to be a given tool call.

Without the build the real-server tests are skipped with the command that makes it, unless
REVIEWBOT_REQUIRE_LLAMA=1 (CI sets it): then a missing build fails them.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.llama import build
from tests.local_server import LocalServer, QuietHandler


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def llama_server() -> Iterator[str]:
    """The base URL of a running llama-server with SmolLM2-135M (two threads, 8k context)."""
    if not build.ready():
        message = (f"llama-server is not built in {build.folder()}: run "
                   "`python -m tests.llama.build` (.ci/run does)")
        if os.environ.get("REVIEWBOT_REQUIRE_LLAMA") == "1":
            pytest.fail(message)
        pytest.skip(message)
    port = _free_port()
    process = subprocess.Popen(
        [str(build.server()), "-m", str(build.model()), "--host", "127.0.0.1", "--port",
         str(port), "--jinja", "--chat-template-file", str(build.template()), "-c", "8192",
         "-np", "1", "-t", "2", "--no-webui",
         # No extra buffer types: on a CPU that reports AMX where the sandbox does not grant
         # its tile state, ggml's AMX path crashes the server at its first decode (seen
         # here). A 135M model gains nothing from repacked weights anyway.
         "--no-repack"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    origin = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(origin, process)
        yield f"{origin}/v1"
    finally:
        process.terminate()
        process.wait(timeout=10)


def _wait_healthy(origin: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama-server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{origin}/health", timeout=2) as answer:  # noqa: S310
                if answer.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    raise RuntimeError("llama-server did not become healthy in 60 s")


Forcing = Callable[[dict[str, Any]], dict[str, Any] | None]


@dataclass
class ForcingProxy:
    """Forwards every request to llama-server as it came, except that `force` may name the
    tool call a review turn must answer: it is prefilled as the assistant's answer (a tool
    call in the template's own `<tool_call>` form), which llama.cpp then parses and returns
    as a real tool call. A 135M model knows no tools: this is how the protocol is proven
    with it (the request, llama.cpp's parsing, the tool results, the next turn)."""

    upstream: str
    force: Forcing = lambda body: None
    received: list[dict[str, Any]] = field(default_factory=list)
    answered: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        proxy = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                proxy.received.append(body)
                status, answer = proxy.forward(self.path, body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._local = LocalServer(Handler)

    @property
    def base_url(self) -> str:
        return f"{self._local.origin}/v1"

    def forward(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        call = self.force(body) if body.get("tools") else None
        if call is not None:
            body = {**body, "max_tokens": 1, "messages": [*body["messages"], {
                "role": "assistant",
                "content": f"<tool_call>\n{json.dumps(call)}\n</tool_call>"}]}
        url = self.upstream.removesuffix("/v1") + path  # the loopback server
        request = urllib.request.Request(url, data=json.dumps(body).encode(),  # noqa: S310
                                         headers={"content-type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=300) as answer:  # noqa: S310
                status, data = answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            status, data = exc.code, json.loads(exc.read() or b"{}")
        self.answered.append(data)
        return status, data


@pytest.fixture
def forcing_proxy(llama_server: str) -> Iterator[ForcingProxy]:
    proxy = ForcingProxy(upstream=llama_server)
    proxy._local.start()
    yield proxy
    proxy._local.stop()
