"""One HTTP request to an OpenAI-compatible chat-completions server, bounded in time and size.

`OpenAITransport` sends each request with the `openai` SDK (imported only when a model is
used: the import alone costs ~0.8 s), with the SDK's own retries off: its defaults (a 600 s
read timeout that applies to each socket read, 2 retries that also retry timeouts) are wrong
for a hook. Here:

- the timeout is a deadline for the whole request: the request runs in a worker thread the
  caller stops waiting for at the deadline, and the body is read through a stream that gives
  up once the deadline has passed (a server sending one byte a second cannot hold a run);
- the body is capped in bytes (success or error alike) and parsed by `wire.parse_reply`;
- redirects are not followed, and the SDK never reads OPENAI_BASE_URL itself;
- every failure becomes a `ModelCallFailed` with a short outcome code, never an exception
  from the SDK or the HTTP library.

Retrying, backoff, the call cap and the run's deadline are the session's (session.py).
"""

from __future__ import annotations

import math
import queue
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit

# This module is imported only when a model is configured (see reviewbot.model.open_session).
import httpx2

from reviewbot.config import is_loopback_url
from reviewbot.model.client import ChatRequest, ModelCallFailed
from reviewbot.model.messages import ChatReply
from reviewbot.model.settings import ModelSettings
from reviewbot.model.wire import BadReply, parse_reply

T = TypeVar("T")
MAX_RETRY_AFTER_S = 10.0
_RETRY_STATUS = frozenset({408, 429})
# Local servers (Ollama, llama.cpp, vLLM) need no key, but the SDK insists on one.
NO_KEY = "not-needed"


class OpenAITransport:
    def __init__(self, settings: ModelSettings) -> None:
        from openai import OpenAI

        self._secret = settings.api_key
        self._no_key_reason = settings.no_key_reason
        self._bounded = BoundedTransport(_inner_transport(settings.endpoint),
                                         settings.max_reply_bytes)
        http = httpx2.Client(transport=self._bounded, follow_redirects=False, trust_env=False)
        self._client = OpenAI(api_key=settings.api_key or NO_KEY, base_url=settings.endpoint,
                              timeout=settings.timeout_s, max_retries=0, http_client=http)

    def send(self, request: ChatRequest, deadline: float) -> ChatReply:
        def work() -> ChatReply:
            self._bounded.set_deadline(deadline)
            return self._send(request, deadline)
        return run_before(deadline, work)

    def _send(self, request: ChatRequest, deadline: float) -> ChatReply:
        import openai

        extra: dict[str, Any] = {}
        if request.tools:
            extra["tools"] = [tool.to_wire() for tool in request.tools]
        if request.response_format is not None:
            extra["response_format"] = dict(request.response_format)
        if request.reply_tokens is not None and request.token_param is not None:
            extra[request.token_param] = request.reply_tokens
        remaining = max(deadline - time.monotonic(), 0.01)
        try:
            raw = self._client.with_options(timeout=remaining).chat.completions \
                .with_raw_response.create(
                    model=request.model, temperature=0,
                    messages=[m.to_wire() for m in request.messages],  # type: ignore[misc]
                    **extra)
            response = raw.http_response
            return parse_reply(response.content, response.headers.get("content-type", ""))
        except openai.APIStatusError as exc:
            raise self._status_failure(exc) from None
        except openai.APITimeoutError:
            raise ModelCallFailed("timeout", "the model did not answer in time") from None
        except openai.APIConnectionError as exc:
            raise _connection_failure(exc, self._scrub) from None
        except ReplyTooLarge as exc:
            raise ModelCallFailed("reply_too_large", str(exc)) from None
        except BadReply as exc:
            raise ModelCallFailed("bad_reply", str(exc)) from None
        except Exception as exc:  # the SDK met something it did not expect: not our crash
            raise ModelCallFailed("client_error", f"{type(exc).__name__}: "
                                                  f"{self._scrub(str(exc))}") from None

    def _status_failure(self, exc: Any) -> ModelCallFailed:
        status = int(exc.status_code)
        detail = self._scrub(str(exc.message))
        if status in (401, 403) and self._no_key_reason:
            detail = f"no API key was sent ({self._no_key_reason}); the server said: {detail}"
        return ModelCallFailed(f"http_{status}", f"HTTP {status}: {detail}",
                               transient=status in _RETRY_STATUS or status >= 500,
                               retry_after=retry_after(exc.response.headers), status=status)

    def _scrub(self, text: str) -> str:
        """Error text from a server can echo what it was sent; never let the key through."""
        return text.replace(self._secret, "***") if self._secret else text


def _connection_failure(exc: Exception, scrub: Callable[[str], str]) -> ModelCallFailed:
    cause = exc.__cause__
    if isinstance(cause, ReplyTooLarge):
        return ModelCallFailed("reply_too_large", str(cause))
    return ModelCallFailed("connection_error", scrub(str(cause or exc)), transient=True)


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Retry-After in seconds, capped; None when absent or not a sane number (-1, nan)."""
    value = headers.get("retry-after")
    try:
        seconds = float(value) if value is not None else math.nan
    except ValueError:
        return None
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return min(seconds, MAX_RETRY_AFTER_S)


def run_before(deadline: float, work: Callable[[], T]) -> T:
    """`work()` in a daemon thread, waited for until `deadline` at the latest.

    A thread the caller stops waiting for is left to finish or fail on its own (its stream
    gives up at the deadline); being a daemon, it never holds the process open."""
    box: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)

    def run() -> None:
        try:
            box.put((True, work()))
        except BaseException as exc:  # handed to the waiting thread, which raises it
            box.put((False, exc))

    threading.Thread(target=run, name="reviewbot-model-request", daemon=True).start()
    try:
        ok, value = box.get(timeout=max(deadline - time.monotonic(), 0.0))
    except queue.Empty:
        raise ModelCallFailed("timeout", "the model did not answer in time") from None
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


class ReplyTooLarge(Exception):
    pass


def _inner_transport(endpoint: str) -> httpx2.HTTPTransport:
    """An HTTP transport honouring the user's proxy settings for this endpoint; a server on
    this machine is always reached directly (a proxy would carry the code off it)."""
    parts = urlsplit(endpoint)
    bypass = is_loopback_url(endpoint) or urllib.request.proxy_bypass(parts.hostname or "")
    proxy = None if bypass else urllib.request.getproxies().get(parts.scheme)
    return httpx2.HTTPTransport(proxy=proxy)


class BoundedTransport(httpx2.BaseTransport):
    """Wraps a transport so every response body is read within a byte cap and a deadline
    (set per worker thread)."""

    def __init__(self, inner: httpx2.HTTPTransport, max_bytes: int) -> None:
        self._inner = inner
        self._max_bytes = max_bytes
        self._local = threading.local()

    def set_deadline(self, deadline: float) -> None:
        self._local.deadline = deadline

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = self._inner.handle_request(request)
        stream = _BoundedStream(response.stream, self._max_bytes,
                                getattr(self._local, "deadline", math.inf))
        return httpx2.Response(status_code=response.status_code, headers=response.headers,
                               stream=stream, extensions=response.extensions)

    def close(self) -> None:
        self._inner.close()


class _BoundedStream(httpx2.SyncByteStream):
    def __init__(self, inner: Any, max_bytes: int, deadline: float) -> None:
        self._inner = inner
        self._max_bytes = max_bytes
        self._deadline = deadline

    def __iter__(self) -> Iterator[bytes]:
        total = 0
        for chunk in self._inner:
            total += len(chunk)
            if total > self._max_bytes:
                raise ReplyTooLarge(f"the reply is over {self._max_bytes:,} bytes; not read")
            if time.monotonic() > self._deadline:
                raise httpx2.ReadTimeout("the deadline passed while the reply was arriving")
            yield chunk

    def close(self) -> None:
        close = getattr(self._inner, "close", None)
        if close is not None:
            close()
