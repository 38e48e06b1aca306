"""A counting proxy in front of an OpenAI-compatible server: every request passes through as
it came, and is counted with the prompt and completion tokens the server reports for it and
the seconds it took. Both tools talk to the server only through it, so both are counted the
same way, whatever each says about itself."""

from __future__ import annotations

import http.client
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

# A CPU server may take many minutes on one request; the client's own timeout decides.
UPSTREAM_TIMEOUT_S = 3600.0
_HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length", "host",
                "proxy-connection", "upgrade", "te", "trailer"}


@dataclass(frozen=True)
class Request:
    """One request as counted; `read_s`/`write_s`/`cached` are the server's own split of its
    time (reading the prompt, writing the answer) and the prompt tokens it had cached, when it
    says (llama.cpp's `timings`), else 0."""

    path: str
    status: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    read_s: float = 0.0
    write_s: float = 0.0
    cached: int = 0

    def to_data(self) -> dict[str, object]:
        return {"path": self.path, "status": self.status, "prompt": self.prompt_tokens,
                "completion": self.completion_tokens, "seconds": round(self.seconds, 2),
                "read_s": round(self.read_s, 2), "write_s": round(self.write_s, 2),
                "cached": self.cached}


def reported_usage(payload: Any) -> tuple[int, int] | None:
    """(prompt, completion) tokens from a reply or a stream chunk: `usage`, else llama.cpp's
    `timings` (a stream without `include_usage` reports only those)."""
    if not isinstance(payload, dict):
        return None
    usage = payload.get("usage")
    if isinstance(usage, dict) and usage.get("prompt_tokens") is not None:
        return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    timings = payload.get("timings")
    if isinstance(timings, dict) and "prompt_n" in timings:
        # llama.cpp counts only the prompt tokens it had to read (not those from its cache).
        return int(timings.get("prompt_n") or 0), int(timings.get("predicted_n") or 0)
    return None


def server_timings(payload: Any) -> tuple[float, float, int] | None:
    """llama.cpp's seconds reading the prompt and writing the answer, and the prompt tokens
    it took from its cache."""
    timings = payload.get("timings") if isinstance(payload, dict) else None
    if not isinstance(timings, dict) or "prompt_ms" not in timings:
        return None
    return (float(timings.get("prompt_ms") or 0) / 1000,
            float(timings.get("predicted_ms") or 0) / 1000, int(timings.get("cache_n") or 0))


def _chunks(body: bytes) -> list[Any]:
    """The JSON payloads of a server-sent event stream."""
    found = []
    for line in body.splitlines():
        if line.startswith(b"data:") and line[5:].strip() not in (b"", b"[DONE]"):
            try:
                found.append(json.loads(line[5:]))
            except ValueError:
                continue
    return found


def stream_usage(body: bytes) -> tuple[int, int] | None:
    return next((u for u in map(reported_usage, reversed(_chunks(body))) if u), None)


class CountingProxy:
    """Listens on 127.0.0.1; `take()` hands over the requests counted since the last call."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port or 80
        self._prefix = parts.path.rstrip("/").removesuffix("/v1")
        self._lock = threading.Lock()
        self._counted: list[Request] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.1,),
                                        daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> CountingProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def take(self) -> list[Request]:
        with self._lock:
            counted, self._counted = self._counted, []
        return counted

    def _forward(self, method: str, path: str, headers: dict[str, str],
                 body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        connection = http.client.HTTPConnection(self._host, self._port,
                                                timeout=UPSTREAM_TIMEOUT_S)
        try:
            connection.request(method, self._prefix + path, body=body or None, headers=headers)
            answer = connection.getresponse()
            return answer.status, answer.getheaders(), answer.read()
        finally:
            connection.close()

    def _count(self, path: str, status: int, reply: bytes, streamed: bool,
               seconds: float) -> None:
        try:
            payloads = _chunks(reply) if streamed else [json.loads(reply or b"{}")]
        except ValueError:
            payloads = []
        usage = next((u for u in map(reported_usage, reversed(payloads)) if u), (0, 0))
        split = next((t for t in map(server_timings, reversed(payloads)) if t), (0.0, 0.0, 0))
        with self._lock:
            self._counted.append(Request(path, status, *usage, seconds, *split))

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                del format, args

            def _relay(self, method: str) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in _HOP_HEADERS}
                started = time.monotonic()
                try:
                    status, answer_headers, reply = proxy._forward(method, self.path, headers,
                                                                   body)
                except OSError as exc:
                    status, answer_headers = 502, [("content-type", "application/json")]
                    reply = json.dumps({"error": {"message": f"proxy: {exc}"}}).encode()
                streamed = any(k.lower() == "content-type" and "event-stream" in v
                               for k, v in answer_headers)
                proxy._count(self.path, status, reply, streamed, time.monotonic() - started)
                try:
                    self.send_response(status)
                    for name, value in answer_headers:
                        if name.lower() not in _HOP_HEADERS:
                            self.send_header(name, value)
                    self.send_header("content-length", str(len(reply)))
                    self.end_headers()
                    self.wfile.write(reply)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up on the request; it is counted all the same

            def do_POST(self) -> None:
                self._relay("POST")

            def do_GET(self) -> None:
                self._relay("GET")

        return Handler
