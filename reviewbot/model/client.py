"""What a model client is, without importing one: the request, its failure, the Protocol.

The session depends on this module only; `transport.py` (which imports the SDK and its HTTP
library) is loaded when a model is actually used.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from reviewbot.model.messages import ChatMessage, ChatReply, ToolSpec
from reviewbot.text.terminal import printable

MAX_ERROR_CHARS = 300


@dataclass(frozen=True)
class ChatRequest:
    model: str
    messages: tuple[ChatMessage, ...]
    tools: tuple[ToolSpec, ...] = ()
    # The wire value of `response_format`, or None to send none.
    response_format: Mapping[str, Any] | None = None
    # The longest reply asked for, and the parameter that says it (`max_tokens`; newer
    # OpenAI models want `max_completion_tokens`); None sends neither.
    reply_tokens: int | None = None
    token_param: str | None = "max_tokens"  # noqa: S105 (a parameter name)


class ModelCallFailed(Exception):
    """One request failed. `outcome` is a short code; `transient` whether to retry it."""

    def __init__(self, outcome: str, detail: str, *, transient: bool = False,
                 retry_after: float | None = None, status: int | None = None) -> None:
        super().__init__(printable(detail)[:MAX_ERROR_CHARS])
        self.outcome = outcome
        self.transient = transient
        self.retry_after = retry_after
        self.status = status


class ModelClient(Protocol):
    def send(self, request: ChatRequest, deadline: float) -> ChatReply:
        """One request, answered before `deadline` (time.monotonic) or ModelCallFailed."""
        ...
