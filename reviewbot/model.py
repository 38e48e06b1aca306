"""The model layer: one small Protocol over any OpenAI-compatible chat-completions server.

`OpenAITransport` makes single requests with the `openai` SDK (imported only when a model
is used: the import alone costs ~0.8 s). Its own retries are off: the SDK's defaults (a
600 s read timeout, 2 retries that also retry timeouts) are wrong for a hook. Here a
timeout is final, and connection errors, 408, 429 (honouring Retry-After) and 5xx are
retried at most twice with exponential backoff.

`StructuredCaller` turns replies into validated pydantic objects: an invalid reply is
retried once with the validation error fed back, then the next fallback model is tried;
when nothing works it raises `ModelUnavailable` with a reason the caller turns into a
heuristic fallback (seed 000). It counts calls against the run's cap and records each one.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from reviewbot.config import Config, ModelConfig, is_loopback_url
from reviewbot.errors import ConfigError
from reviewbot.schema import ModelCall

T = TypeVar("T", bound=BaseModel)
Message = dict[str, str]

MAX_RETRIES = 2
BACKOFF_S = 0.5
MAX_RETRY_AFTER_S = 10.0
_RETRY_STATUS = frozenset({408, 429})
# Local servers (Ollama, llama.cpp, vLLM) need no key, but the SDK insists on one.
_NO_KEY = "not-needed"


@dataclass(frozen=True)
class ModelSettings:
    model: str
    fallback_models: tuple[str, ...] = ()
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout_s: float = 30.0
    max_calls: int = 30
    # Why no key is sent, for the error a server that wants one answers with.
    no_key_reason: str | None = None


def model_settings(config: Config, env: Mapping[str, str] | None = None,
                   notify: Callable[[str], None] = lambda message: None) -> ModelSettings | None:
    """The configured model, or None when none is (the run is then offline).

    The key goes only to an endpoint the person running reviewbot chose (environment, flag,
    user config, or the SDK's default) and only for a model they turned on; a model or
    endpoint named by the reviewed repository's config gets no key.
    """
    env = os.environ if env is None else env
    chosen = config.model
    if not chosen.name:
        return None
    if not chosen.name_origin.trusted and chosen.base_url is None:
        notify(f"{chosen.name_origin.where} names the model {chosen.name!r} but no local "
               "server; set REVIEWBOT_MODEL (and OPENAI_BASE_URL) yourself to use it. "
               "Reviewing offline.")
        return None
    if chosen.base_url is not None:
        check_endpoint(chosen.base_url, chosen.base_url_origin.where, chosen.allow_insecure_http)
    key = env.get("OPENAI_API_KEY") or None
    send_key = chosen.name_origin.trusted and chosen.base_url_origin.trusted
    if key and not send_key:
        notify(f"the model endpoint comes from {_untrusted_origin(chosen)}, "
               "the reviewed repository's config: your API key is not sent to it.")
    limits = config.limits
    no_key = (None if key and send_key else
              "OPENAI_API_KEY is not set" if not key else
              f"the endpoint or model comes from {_untrusted_origin(chosen)}, which never gets "
              "your key")
    return ModelSettings(
        model=chosen.name, fallback_models=chosen.fallback_models, base_url=chosen.base_url,
        api_key=key if send_key else None, timeout_s=limits.timeout_s,
        max_calls=limits.max_model_calls, no_key_reason=no_key,
    )


def _untrusted_origin(chosen: ModelConfig) -> str:
    origin = chosen.base_url_origin if not chosen.base_url_origin.trusted else chosen.name_origin
    return origin.where


def check_endpoint(url: str, where: str, allow_insecure_http: bool) -> None:
    """A usable http(s) URL; plain http only to this machine unless the user allows it."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (validates the port)
    except ValueError as exc:
        raise ConfigError(f"{where}: {url!r} is not a valid URL ({exc}).") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{where}: {url!r} is not an http(s) URL with a host.")
    if parts.scheme == "http" and not is_loopback_url(url) and not allow_insecure_http:
        raise ConfigError(
            f"{where}: {url!r} is plain http to another machine: the API key and your code "
            "would cross the network unencrypted. Use https, or set "
            "REVIEWBOT_ALLOW_INSECURE_HTTP=1 (or model.allow_insecure_http in your user "
            "config) if that network is yours.")


@dataclass(frozen=True)
class Reply:
    content: str
    tokens_in: int = 0
    tokens_out: int = 0


class ModelCallFailed(Exception):
    """One request failed. `outcome` is a short code; `transient` whether to retry it."""

    def __init__(self, outcome: str, detail: str, *, transient: bool = False,
                 retry_after: float | None = None) -> None:
        super().__init__(detail)
        self.outcome = outcome
        self.transient = transient
        self.retry_after = retry_after


class ModelUnavailable(Exception):
    """No model produced a valid answer; `reason` is what the heuristic fallback reports."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


class ModelClient(Protocol):
    def chat(self, model: str, messages: Sequence[Message],
             schema: type[BaseModel]) -> Reply: ...


class OpenAITransport:
    """Single chat-completion requests through the `openai` SDK, temperature 0."""

    def __init__(self, settings: ModelSettings) -> None:
        from openai import OpenAI

        self._secret = settings.api_key
        self._no_key_reason = settings.no_key_reason
        self._client = OpenAI(api_key=settings.api_key or _NO_KEY, base_url=settings.base_url,
                              timeout=settings.timeout_s, max_retries=0)
        # Some local servers reject json_schema (or any response_format) with a 400: step
        # down once per server and remember it. Replies are validated either way.
        self._formats = ["json_schema", "json_object", "none"]

    def chat(self, model: str, messages: Sequence[Message], schema: type[BaseModel]) -> Reply:
        while True:
            try:
                return self._chat(model, messages, schema, self._formats[0])
            except ModelCallFailed as exc:
                if not (exc.outcome == "http_400" and "response_format" in str(exc)
                        and len(self._formats) > 1):
                    raise
                self._formats.pop(0)

    def _chat(self, model: str, messages: Sequence[Message], schema: type[BaseModel],
              response_format_kind: str) -> Reply:
        import openai

        response_format: Any = {
            "json_schema": {"type": "json_schema", "json_schema": {
                "name": schema.__name__, "schema": schema.model_json_schema(),
                "strict": False}},
            "json_object": {"type": "json_object"},
        }.get(response_format_kind, openai.omit)
        try:
            completion = self._client.chat.completions.create(
                model=model, messages=list(messages),  # type: ignore[arg-type]
                temperature=0, response_format=response_format)
        except openai.APITimeoutError as exc:
            raise ModelCallFailed("timeout", "the model did not answer in time") from exc
        except openai.APIConnectionError as exc:
            raise ModelCallFailed("connection_error", self._scrub(str(exc.__cause__ or exc)),
                                  transient=True) from exc
        except openai.APIStatusError as exc:
            detail = self._scrub(exc.message)
            if exc.status_code in (401, 403) and self._no_key_reason:
                detail = f"no API key was sent ({self._no_key_reason}); the server said: {detail}"
            raise _status_failure(exc.status_code, exc.response.headers, detail) from exc
        usage = completion.usage
        content = completion.choices[0].message.content if completion.choices else None
        return Reply(content=content or "",
                     tokens_in=usage.prompt_tokens if usage else 0,
                     tokens_out=usage.completion_tokens if usage else 0)

    def _scrub(self, text: str) -> str:
        """Error text from a server can echo what it was sent; never let the key through."""
        return text.replace(self._secret, "***") if self._secret else text


def _status_failure(status: int, headers: Mapping[str, str], detail: str) -> ModelCallFailed:
    transient = status in _RETRY_STATUS or status >= 500
    return ModelCallFailed(f"http_{status}", f"HTTP {status}: {detail}"[:300],
                           transient=transient, retry_after=_retry_after(headers))


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("retry-after")
    try:
        return min(float(value), MAX_RETRY_AFTER_S) if value is not None else None
    except ValueError:
        return None


_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(?P<body>.*)\n\s*```\s*$", re.DOTALL)


@dataclass
class StructuredCaller:
    """Validated answers from the primary model, then its fallbacks, within a call cap."""

    client: ModelClient
    settings: ModelSettings
    sleep: Callable[[float], None] = time.sleep
    calls: list[ModelCall] = field(default_factory=list)

    @property
    def remaining(self) -> int:
        return self.settings.max_calls - len(self.calls)

    def ask(self, purpose: str, messages: Sequence[Message], schema: type[T]) -> T:
        last = "no model answered"
        for model in (self.settings.model, *self.settings.fallback_models):
            conversation = list(messages)
            for attempt in (1, 2):
                reply = self._request(purpose, model, attempt, conversation, schema)
                try:
                    parsed = schema.model_validate_json(_unfence(reply.content))
                except ValidationError as exc:
                    last = f"{model} replied with invalid output ({exc.error_count()} errors)"
                    self._record(purpose, model, attempt, "invalid_output", reply, 0,
                                 _summary(exc))
                    conversation += [{"role": "assistant", "content": reply.content[:4000]},
                                     {"role": "user", "content": _correction(exc)}]
                    continue
                return parsed
        raise ModelUnavailable("invalid_output", last)

    def _request(self, purpose: str, model: str, attempt: int,
                 conversation: Sequence[Message], schema: type[BaseModel]) -> Reply:
        for retry in range(MAX_RETRIES + 1):
            if self.remaining <= 0:
                raise ModelUnavailable("call_cap", f"the run's cap of {self.settings.max_calls} "
                                                   "model calls is reached")
            started = time.monotonic()
            try:
                reply = self.client.chat(model, conversation, schema)
            except ModelCallFailed as exc:
                self._record(purpose, model, attempt, exc.outcome, None, started, str(exc))
                if not exc.transient or retry == MAX_RETRIES:
                    raise ModelUnavailable(_reason(exc.outcome), f"{model}: {exc}") from exc
                self.sleep(exc.retry_after if exc.retry_after is not None
                           else BACKOFF_S * 2 ** retry)
                continue
            self._record(purpose, model, attempt, "ok", reply, started, None)
            return reply
        raise AssertionError("unreachable")  # pragma: no cover

    def _record(self, purpose: str, model: str, attempt: int, outcome: str,
                reply: Reply | None, started: float, error: str | None) -> None:
        if outcome == "invalid_output" and self.calls:
            # The request itself was recorded as ok; it is its answer that failed.
            last = self.calls[-1]
            self.calls[-1] = last.model_copy(update={"outcome": outcome, "error": error})
            return
        self.calls.append(ModelCall(
            purpose=purpose, model=model, attempt=attempt, outcome=outcome,
            latency_ms=round((time.monotonic() - started) * 1000) if started else 0,
            tokens_in=reply.tokens_in if reply else 0,
            tokens_out=reply.tokens_out if reply else 0, error=error,
        ))


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


def fenced_json(label: str, data: object) -> str:
    """Data for a prompt, fenced so that nothing in it reads as an instruction."""
    return f"<{label}>\n{json.dumps(data, ensure_ascii=False)}\n</{label}>"
