"""The run's conversation with the model: retries, the bounds of the ledger, structured answers.

One `ModelSession` per run, shared by the planner, the review agent and the suggestion calls
(and their worker threads):

- every message leaves through the redaction pass, and every reply comes back through it
  (a server echoing the key or a secret cannot put it in an artifact);
- every HTTP request is reserved in the ledger and recorded, retries and `response_format`
  step-downs included;
- connection errors, 408, 429 (Retry-After honoured, pausing every worker) and 5xx are
  retried at most twice with exponential backoff; a timeout is final;
- `ask` turns replies into validated pydantic objects: an invalid one is retried once with
  the validation error fed back, then the fallback models are tried (seed 000).
Failures end as `ModelUnavailable` with a reason the caller falls back on; nothing a server
does raises anything else.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from reviewbot.lazy_re import lazy_re
from reviewbot.model.client import ChatRequest, ModelCallFailed, ModelClient
from reviewbot.model.ledger import BudgetExhausted, Ledger
from reviewbot.model.messages import ChatMessage, ChatReply, ToolCall, ToolSpec, user
from reviewbot.model.settings import ModelSettings
from reviewbot.schema.reviews import ModelCall
from reviewbot.store.cache import cache_key
from reviewbot.text.redaction import Redactor
from reviewbot.text.terminal import printable

T = TypeVar("T", bound=BaseModel)
MAX_RETRIES = 2
BACKOFF_S = 0.5
_FENCE = lazy_re(r"^\s*```(?:json)?\s*\n(?P<body>.*)\n\s*```\s*$", re.DOTALL)
# response_format, from the most to the least a server must support.
_FORMATS = ("json_schema", "json_object", "none")
# How a request bounds its reply: the widely supported parameter, OpenAI's newer one, none.
_TOKEN_PARAMS: tuple[str | None, ...] = ("max_tokens", "max_completion_tokens", None)


class ModelUnavailable(Exception):
    """No model produced a usable answer; `reason` is what the heuristic fallback reports.

    `status` and `detail` let a caller tell "this server cannot do tools" from an outage."""

    def __init__(self, reason: str, detail: str, status: int | None = None) -> None:
        super().__init__(printable(detail))
        self.reason = reason
        self.status = status


@dataclass
class ModelSession:
    client: ModelClient
    settings: ModelSettings
    ledger: Ledger
    redactor: Redactor = field(default_factory=Redactor)
    sleep: Callable[[float], None] = time.sleep
    _formats: list[str] = field(default_factory=lambda: list(_FORMATS))
    _token_params: list[str | None] = field(default_factory=lambda: list(_TOKEN_PARAMS))
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # Per worker thread: the ledger index of the last answered request.
    _last: threading.local = field(default_factory=threading.local, repr=False)

    def chat(self, purpose: str, messages: Sequence[ChatMessage], *,
             tools: Sequence[ToolSpec] = (), schema: type[BaseModel] | None = None,
             shown: Mapping[str, Any] | None = None, model: str | None = None,
             attempt: int = 1, unit_id: str | None = None,
             reply_tokens: int | None = None) -> ChatReply:
        """One answer from the model (HTTP retries and format step-downs included), at most
        `reply_tokens` long (the settings' `reply_tokens` by default). `shown` is the JSON
        schema sent for `schema` when this request's is narrower than the class's."""
        model = model or self.settings.model
        try:
            self.ledger.check()  # before the messages are redacted: a spent run costs nothing
        except BudgetExhausted as exc:
            raise ModelUnavailable(exc.reason, str(exc)) from None
        outgoing = tuple(self._redacted(m) for m in messages)
        # A request's own schema may name the change's files (an enum): it leaves through
        # the pass as the messages do.
        shown = self._redacted_schema(shown) if shown is not None else None
        while True:
            kind, token_param = self._format(), self._token_param()
            request = ChatRequest(model=model, messages=outgoing, tools=tuple(tools),
                                  response_format=_response_format(schema, kind, shown),
                                  reply_tokens=reply_tokens or self.settings.reply_tokens,
                                  token_param=token_param)
            try:
                return self._with_retries(purpose, request, attempt, unit_id)
            except ModelUnavailable as exc:
                refused = str(exc) if exc.status == 400 else ""
                if token_param and token_param in refused:
                    self._step_down_tokens(token_param)
                elif not (schema and "response_format" in refused and self._step_down(kind)):
                    raise

    def fingerprint(self, version: str, messages: Sequence[ChatMessage], *extra: str) -> str:
        """A cache key for what determines an answer: the version of the prompt and schema,
        the model, the endpoint and the messages (as they are sent: redacted)."""
        texts = [self.redactor.text(m.content or "", literal_bare_values=False)
                 for m in messages]
        return cache_key(version, self.settings.model, *self.settings.fallback_models,
                         self.settings.endpoint, *texts, *extra)

    def ask(self, purpose: str, messages: Sequence[ChatMessage], schema: type[T],
            unit_id: str | None = None, shown: Mapping[str, Any] | None = None) -> T:
        """A validated answer from the model, else its fallbacks, else ModelUnavailable.
        `shown`: the JSON schema to send, when narrower than `schema`'s (the answer is
        still validated by `schema`)."""
        last = "no model answered"
        for model in (self.settings.model, *self.settings.fallback_models):
            conversation = list(messages)
            room: int | None = None
            for attempt in (1, 2):
                reply = self.chat(purpose, conversation, schema=schema, shown=shown, model=model,
                                  attempt=attempt, unit_id=unit_id, reply_tokens=room)
                try:
                    return schema.model_validate_json(_unfence(reply.content))
                except ValidationError as exc:
                    if reply.finish_reason == "length":
                        # Cut, not wrong: the same request once more, with twice the room.
                        room = 2 * (room or self.settings.reply_tokens)
                        last = f"{model}'s reply was cut at its length limit"
                        self._mark_invalid("the reply was cut at its length limit "
                                           "(finish_reason: length)", outcome="cut")
                        continue
                    last = f"{model} replied with invalid output ({exc.error_count()} errors)"
                    self._mark_invalid(_summary(exc))
                    conversation += [ChatMessage(role="assistant",
                                                 content=reply.content[:4000] or "(empty)"),
                                     user(_correction(exc))]
        raise ModelUnavailable("invalid_output", last)

    def _with_retries(self, purpose: str, request: ChatRequest, attempt: int,
                      unit_id: str | None) -> ChatReply:
        for retry in range(MAX_RETRIES + 1):
            self.ledger.wait(self.sleep)
            try:
                self.ledger.reserve()
            except BudgetExhausted as exc:
                raise ModelUnavailable(exc.reason, str(exc)) from None
            started = time.monotonic()
            deadline = min(started + self.settings.timeout_s, self.ledger.deadline)
            try:
                reply = self.client.send(request, deadline)
            except ModelCallFailed as exc:
                self._record(purpose, request.model, attempt, retry, exc.outcome, None,
                             started, str(exc), unit_id)
                if not exc.transient or retry == MAX_RETRIES:
                    raise ModelUnavailable(_reason(exc.outcome),
                                           self.redactor.text(f"{request.model}: {exc}"),
                                           exc.status) from None
                delay = exc.retry_after if exc.retry_after is not None else BACKOFF_S * 2 ** retry
                self.ledger.pause(delay)
                continue
            reply = self._scrubbed(reply)
            self._last.index = self._record(purpose, request.model, attempt, retry, "ok",
                                            reply, started, None, unit_id)
            return reply
        raise AssertionError("unreachable")  # pragma: no cover

    def _format(self) -> str:
        with self._lock:
            return self._formats[0]

    def _token_param(self) -> str | None:
        with self._lock:
            return self._token_params[0]

    def _step_down_tokens(self, refused: str) -> None:
        """The server refused this way of bounding a reply: the next one, then none."""
        with self._lock:
            if self._token_params[0] == refused:
                self._token_params.pop(0)

    def _step_down(self, kind: str) -> bool:
        """Remember that this server refused `kind`; False when nothing is left to try."""
        with self._lock:
            if self._formats[0] == kind and len(self._formats) > 1:
                self._formats.pop(0)
            return self._formats[0] != kind

    def _redacted(self, message: ChatMessage) -> ChatMessage:
        return message.model_copy(update={
            "content": self.redactor.text(message.content, literal_bare_values=False)
            if message.content else message.content,
            "tool_calls": tuple(self._redacted_call(c) for c in message.tool_calls)})

    def _redacted_schema(self, schema: Any) -> Any:
        if isinstance(schema, str):
            return self.redactor.text(schema, literal_bare_values=False)
        if isinstance(schema, Mapping):
            return {key: self._redacted_schema(value) for key, value in schema.items()}
        if isinstance(schema, list | tuple):
            return [self._redacted_schema(value) for value in schema]
        return schema

    def _redacted_call(self, call: ToolCall) -> ToolCall:
        return call.model_copy(update={
            "arguments": self.redactor.text(call.arguments, literal_bare_values=False)})

    def _scrubbed(self, reply: ChatReply) -> ChatReply:
        """A reply may echo what it was sent, the key included: it goes through the pass."""
        return reply.model_copy(update={
            "content": self.redactor.text(reply.content, literal_bare_values=False),
            "tool_calls": tuple(self._redacted_call(c) for c in reply.tool_calls)})

    def _record(self, purpose: str, model: str, attempt: int, retry: int, outcome: str,
                reply: ChatReply | None, started: float, error: str | None,
                unit_id: str | None) -> int:
        usage = reply.usage if reply else None
        return self.ledger.record(ModelCall(
            purpose=purpose, model=model, attempt=attempt, retry=retry, outcome=outcome,
            latency_ms=round((time.monotonic() - started) * 1000),
            tokens_in=usage.prompt_tokens if usage else 0,
            tokens_out=usage.completion_tokens if usage else 0,
            cached_tokens=usage.cached_tokens if usage else 0, unit_id=unit_id,
            error=self.redactor.text(error) if error else None))

    def _mark_invalid(self, summary: str, outcome: str = "invalid_output") -> None:
        """The request was recorded as ok; it is its answer that failed validation."""
        self.ledger.amend(self._last.index, outcome=outcome, error=self.redactor.text(summary))


def _response_format(schema: type[BaseModel] | None, kind: str,
                     shown: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if schema is None or kind == "none":
        return None
    if kind == "json_object":
        return {"type": "json_object"}
    return {"type": "json_schema", "json_schema": {
        "name": schema.__name__, "schema": dict(shown or schema.model_json_schema()),
        "strict": False}}


def _reason(outcome: str) -> str:
    return {"timeout": "model_timeout"}.get(outcome, "model_error")


def _unfence(content: str) -> str:
    """Accept a reply wrapped in one Markdown code fence (common with local models)."""
    match = _FENCE.match(content)
    return match.group("body") if match else content


def _summary(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])


def _correction(exc: ValidationError) -> str:
    return ("Your reply did not match the required JSON schema: " + _summary(exc)
            + ". Reply again with only a JSON object that matches the schema.")
