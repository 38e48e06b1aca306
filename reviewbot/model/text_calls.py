"""Tool calls a model wrote as text instead of as tool calls.

Small local models often know the tools but not their server's exact syntax: llama.cpp
parses only its chat template's own form (`<tool_call>...</tool_call>` for Qwen), and what
comes back is text such as

    <tools>{"name": "record_finding", "arguments": {...}}{"name": "finish", ...}</tools>
    ```json
    {"name": "finish", "arguments": {"summary": "..."}}
    ```
    {"tool_call": {"name": "finish", "arguments": {...}}}

`recover` finds the JSON objects in the text that name one of the offered tools, in the
common shapes (`name` with `arguments` or `parameters`, wrapped in `tool_call`/`function`,
or lists of them), in order, at most MAX_CALLS. They are calls like any other: their
arguments are validated by the tool before anything runs, and nothing here is trusted more.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from typing import Any

from reviewbot.model.messages import ToolCall

MAX_CALLS = 16
MAX_TEXT = 100_000
_DECODER = json.JSONDecoder()


def recover(text: str, names: Collection[str]) -> tuple[ToolCall, ...]:
    """The tool calls written in `text` (calls of tools not in `names` are ignored)."""
    calls: list[ToolCall] = []
    for value in _json_values(text[:MAX_TEXT]):
        for name, arguments in _calls_in(value):
            if name in names and len(calls) < MAX_CALLS:
                calls.append(ToolCall(id=f"text_call_{len(calls)}", name=name,
                                      arguments=json.dumps(arguments, ensure_ascii=False)))
    return tuple(calls)


def _json_values(text: str) -> Iterator[Any]:
    """Every top-level JSON object or list in the text, left to right (what is inside one
    found is not searched again)."""
    at = 0
    while True:
        starts = [i for i in (text.find("{", at), text.find("[", at)) if i != -1]
        if not starts:
            return
        start = min(starts)
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError:
            at = start + 1
            continue
        yield value
        at = end


def _calls_in(value: Any, depth: int = 0) -> Iterator[tuple[str, dict[str, Any]]]:
    if depth > 3:
        return
    if isinstance(value, list):
        for item in value:
            yield from _calls_in(item, depth + 1)
        return
    if not isinstance(value, dict):
        return
    for wrapper in ("tool_call", "function", "tool_calls", "calls"):
        if wrapper in value and isinstance(value[wrapper], dict | list):
            yield from _calls_in(value[wrapper], depth + 1)
            return
    name = value.get("name")
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):  # arguments as JSON text, as the API itself sends them
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return
    if isinstance(name, str) and isinstance(arguments, dict):
        yield name, arguments
