"""Typed chat messages, tool definitions, tool calls and replies: what crosses the model
boundary, in both directions, independent of any SDK."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant", "tool"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolCall(_Frozen):
    """A function the model asked to run. `arguments` is the model's raw JSON text."""

    id: str
    name: str
    arguments: str = "{}"


class ChatMessage(_Frozen):
    role: Role
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    # For role "tool": which call this answers.
    tool_call_id: str | None = None

    def to_wire(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function",
                 "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls]
        if self.tool_call_id is not None:
            message["tool_call_id"] = self.tool_call_id
        return message


def system(text: str) -> ChatMessage:
    return ChatMessage(role="system", content=text)


def user(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text)


class ToolSpec(_Frozen):
    """A function the model may call: its name, what it does, its JSON-schema parameters."""

    name: str
    description: str
    parameters: dict[str, Any] = Field(default_factory=dict)

    def to_wire(self) -> dict[str, Any]:
        return {"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": self.parameters}}


class Usage(_Frozen):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # Prompt tokens the server served from its own prompt cache (cheaper).
    cached_tokens: int = 0


class ChatReply(_Frozen):
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str | None = None

    def as_message(self) -> ChatMessage:
        return ChatMessage(role="assistant", content=self.content or None,
                           tool_calls=self.tool_calls)


def fence(label: str, data: object) -> str:
    """Data for a prompt, fenced so that nothing in it reads as an instruction."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    # A closing tag inside the data must not end the fence early.
    text = text.replace(f"</{label}>", f"<\\/{label}>")
    return f"<{label}>\n{text}\n</{label}>"
