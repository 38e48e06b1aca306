"""A real HTTP server on 127.0.0.1 that speaks OpenAI's chat-completions protocol.

Tests script its replies in order (JSON content, tool calls, status codes, delays, headers)
and point the real `openai` client at it with `base_url`. It records every request.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.local_server import LocalServer, QuietHandler


@dataclass
class Scripted:
    status: int = 200
    body: Any = None
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    # Seconds between bytes of the body (a server that trickles its answer).
    trickle: float = 0.0
    content_type: str = "application/json"
    # Replace "{AUTH}" in the body with the Authorization header the request carried.
    echo_auth: bool = False


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    # The request exactly as it arrived (headers and body), for leak checks.
    raw: bytes = b""

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))


def completion(content: str | None, *, model: str = "test-model", tokens: tuple[int, int] = (11, 7),
               tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-test", "object": "chat.completion", "created": 1767225600,
        "model": model,
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if tool_calls else "stop"}],
        "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1],
                  "total_tokens": sum(tokens)},
    }


class FakeOpenAI:
    def __init__(self) -> None:
        self.script: deque[Scripted] = deque()
        self.received: list[Received] = []
        # Answered when the script is empty (a server that always says the same).
        self.default: Scripted | None = None
        # Or answered from the request when the script is empty (`finish_every_review`).
        self.fallback: Callable[[Received], Scripted] | None = None
        # Answers from the request itself, when set (replies that must not depend on the
        # order requests arrive in, as with concurrent reviews).
        self.responder: Callable[[Received], Scripted] | None = None
        self._lock = threading.Lock()
        fake = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                fake.received.append(Received(path=self.path, headers=headers,
                                              body=json.loads(raw or b"{}"),
                                              raw=str(self.headers).encode() + raw))
                step = fake.next_step(fake.received[-1])
                time.sleep(step.delay)
                payload = (step.body if isinstance(step.body, bytes)
                           else json.dumps(step.body).encode())
                if step.echo_auth:
                    auth = headers.get("authorization", "")
                    payload = payload.replace(b"{AUTH}", json.dumps(auth)[1:-1].encode())
                try:
                    self.send_response(step.status)
                    self.send_header("content-type", step.content_type)
                    self.send_header("content-length", str(len(payload)))
                    for name, value in step.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    if step.trickle:
                        for index in range(len(payload)):
                            self.wfile.write(payload[index:index + 1])
                            self.wfile.flush()
                            time.sleep(step.trickle)
                    else:
                        self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test); nothing to answer

        self._local = LocalServer(Handler)

    def next_step(self, request: Received) -> Scripted:
        if self.responder is not None:
            return self.responder(request)
        with self._lock:
            if self.script:
                return self.script.popleft()
            if self.default is not None:
                return self.default
            if self.fallback is not None:
                return self.fallback(request)
        return Scripted(500, {"error": {"message": "the test scripted no more replies"}})

    @property
    def base_url(self) -> str:
        return f"{self._local.origin}/v1"

    def start(self) -> FakeOpenAI:
        self._local.start()
        return self

    def stop(self) -> None:
        self._local.stop()

    # --- scripting -----------------------------------------------------------------------
    def reply_json(self, data: Any, **kwargs: Any) -> None:
        self.script.append(Scripted(body=completion(json.dumps(data), **kwargs)))

    def reply_text(self, content: str, **kwargs: Any) -> None:
        self.script.append(Scripted(body=completion(content, **kwargs)))

    def reply_tool_calls(self, calls: list[tuple[str, dict[str, Any]]]) -> None:
        tool_calls = [{"id": f"call_{i}", "type": "function",
                       "function": {"name": name, "arguments": json.dumps(args)}}
                      for i, (name, args) in enumerate(calls)]
        self.script.append(Scripted(body=completion(None, tool_calls=tool_calls)))

    def reply_status(self, status: int, *, headers: dict[str, str] | None = None,
                     message: str = "scripted failure") -> None:
        self.script.append(Scripted(status=status, body={"error": {"message": message}},
                                    headers=headers or {}))

    def reply_slowly(self, delay: float, data: Any) -> None:
        self.script.append(Scripted(body=completion(json.dumps(data)), delay=delay))

    def reply_raw(self, body: bytes, *, status: int = 200, content_type: str = "application/json",
                  trickle: float = 0.0, headers: dict[str, str] | None = None) -> None:
        self.script.append(Scripted(status=status, body=body, content_type=content_type,
                                    trickle=trickle, headers=headers or {}))

    def finish_every_review(self) -> None:
        """Once the script is used up, answer as a reviewer with nothing to say: a `finish`
        tool call to a conversation with tools, no findings to a one-call review (an empty
        description too, when it asks for one), so planner tests need not script the
        review."""
        self.fallback = nothing_to_say

    def requests_text(self) -> str:
        """Every request the server received, as text (headers and bodies)."""
        return b"\n".join(r.raw for r in self.received).decode("utf-8", "replace")


def nothing_to_say(request: Received) -> Scripted:
    if request.body.get("tools"):
        return Scripted(body=completion(None, tool_calls=[{
            "id": "call_finish", "type": "function",
            "function": {"name": "finish", "arguments": '{"summary": "nothing to add"}'}}]))
    return one_call_answer(request)


def one_call_answer(request: Received, finding: dict[str, Any] | None = None,
                    overview: str = "") -> Scripted:
    """A one-call review's answer (review/change.py): `finding`, given in `record_finding`'s
    form, as its one defect (a category the one call cannot report becomes a bug), and a
    description naming each file with `overview`'s first line when the call asks for one."""
    schema = (request.body.get("response_format") or {}).get("json_schema", {}).get("schema", {})
    defects = [] if finding is None else [{
        "file_path": finding["file_path"], "line": finding["start_line"],
        "code": finding["evidence"], "problem": finding["title"],
        "category": finding["category"] if finding["category"] in ("bug", "security",
                                                                   "performance") else "bug",
        "severity": finding["severity"] if finding["severity"] != "info" else "warning",
        "explanation": finding["message"], "fix": finding.get("fix_description", "")}]
    answer: dict[str, Any] = {"findings": defects}
    if "overview" in schema.get("properties", {}):
        paths = schema["$defs"]["FileWhat"]["properties"]["path"].get("enum", [])
        answer = {"overview": overview, "files": [
            {"path": path, "what": overview.split("\n")[0]} for path in paths if overview],
            "findings": defects}
    return Scripted(body=completion(json.dumps(answer)))
