"""A chat-completion reply body, parsed and bounded at the edge.

The body is untrusted: a proxy's HTML page, a JSON string, `[]`, an empty body, `message:
null`, content as a list of parts, `usage` with null counts are all seen in the wild. Each
becomes either a `ChatReply` or a `BadReply` with a one-line reason, never an exception that
ends the run. Free text and tool calls are cut to fixed sizes; what was cut is said.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from reviewbot.model.messages import ChatReply, ToolCall, Usage

MAX_CONTENT_CHARS = 100_000
MAX_TOOL_CALLS = 16
MAX_ARGUMENT_CHARS = 32_000
MAX_NAME_CHARS = 64


class BadReply(Exception):
    """The body is not a usable chat completion; the message says what it was."""


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Function(_Lenient):
    name: str | None = None
    arguments: str | dict[str, Any] | None = None


class _ToolCall(_Lenient):
    id: str | None = None
    function: _Function | None = None


class _Part(_Lenient):
    type: str | None = None
    text: str | None = None


class _Message(_Lenient):
    content: str | list[_Part | str] | None = None
    tool_calls: list[_ToolCall] | None = None


class _Choice(_Lenient):
    message: _Message | None = None
    finish_reason: str | None = None


class _Details(_Lenient):
    cached_tokens: int | None = None


class _Usage(_Lenient):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_tokens_details: _Details | None = None


class _Completion(_Lenient):
    choices: list[_Choice]
    usage: _Usage | None = None


def parse_reply(body: bytes, content_type: str = "") -> ChatReply:
    """The reply, or BadReply naming what the server sent instead."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadReply(f"the reply is not JSON ({_what(body, content_type)})") from exc
    if not isinstance(data, dict):
        raise BadReply(f"the reply is JSON but not a chat completion (a {type(data).__name__})")
    try:
        completion = _Completion.model_validate(data)
    except ValidationError as exc:
        raise BadReply("the reply is not a chat completion ("
                       f"{exc.errors()[0]['loc'][0]}: {exc.errors()[0]['msg']})") from exc
    choice = completion.choices[0] if completion.choices else None
    if choice is None or choice.message is None:
        raise BadReply("the reply has no message")
    return ChatReply(content=_content(choice.message), tool_calls=_tool_calls(choice.message),
                     usage=_usage(completion.usage), finish_reason=choice.finish_reason)


def _what(body: bytes, content_type: str) -> str:
    if not body.strip():
        return "an empty body"
    if b"<html" in body[:512].lower() or "html" in content_type:
        return "an HTML page: a proxy or a login page?"
    return f"{len(body):,} bytes starting {body[:24]!r}"


def _content(message: _Message) -> str:
    content = message.content
    if content is None:
        return ""
    if isinstance(content, list):
        content = "".join(part if isinstance(part, str) else (part.text or "")
                          for part in content)
    if len(content) > MAX_CONTENT_CHARS:
        # Cut text would not parse as the structured answer it should be: refuse it whole.
        raise BadReply(f"the reply's text is over {MAX_CONTENT_CHARS:,} characters")
    return content


def _tool_calls(message: _Message) -> tuple[ToolCall, ...]:
    calls: list[ToolCall] = []
    for index, call in enumerate((message.tool_calls or [])[:MAX_TOOL_CALLS]):
        function = call.function or _Function()
        raw = function.arguments
        arguments = json.dumps(raw) if isinstance(raw, dict) else (raw or "{}")
        if len(arguments) > MAX_ARGUMENT_CHARS:
            # Not cut (cut JSON does not parse): the tool answers with this error instead.
            arguments = json.dumps({"_error": f"arguments over {MAX_ARGUMENT_CHARS:,} "
                                              "characters"})
        calls.append(ToolCall(id=clip(call.id or f"call_{index}", MAX_NAME_CHARS),
                              name=clip(function.name or "", MAX_NAME_CHARS),
                              arguments=arguments))
    return tuple(calls)


def _usage(usage: _Usage | None) -> Usage:
    if usage is None:
        return Usage()
    details = usage.prompt_tokens_details
    return Usage(prompt_tokens=max(usage.prompt_tokens or 0, 0),
                 completion_tokens=max(usage.completion_tokens or 0, 0),
                 cached_tokens=max((details.cached_tokens or 0) if details else 0, 0))


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit:,} cut]"
