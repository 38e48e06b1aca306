"""What the model phase may spend, and what it spent: one ledger per run, shared by the
planner, the review agent and the suggestion calls (and by every worker thread).

Every HTTP request is reserved before it is sent and recorded after: the call cap, the token
budget and the run's deadline are checked at the reservation, so no request starts once a
bound is reached. A rate limit (429 with Retry-After) pauses every worker, not just the one
that got it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from reviewbot.schema.reviews import ModelCall, ModelCallLog, ModelTotals


class BudgetExhausted(Exception):
    """A bound of the run is reached; `reason` is what the fallback reports."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


@dataclass
class Ledger:
    max_calls: int
    deadline_s: float
    max_tokens: int | None = None
    clock: Callable[[], float] = time.monotonic
    calls: list[ModelCall] = field(default_factory=list)
    _started: float = field(default=0.0)
    _reserved: int = 0
    _tokens: int = 0
    _pause_until: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self._started = self.clock()

    @property
    def deadline(self) -> float:
        return self._started + self.deadline_s

    def remaining_s(self) -> float:
        return self.deadline - self.clock()

    def tokens_used(self) -> int:
        with self._lock:
            return self._tokens

    def tokens_for(self, unit_id: str) -> int:
        """The tokens of every request made for one unit (its conversation)."""
        with self._lock:
            return sum(c.tokens_in + c.tokens_out for c in self.calls if c.unit_id == unit_id)

    def check(self) -> None:
        """BudgetExhausted when no request may be made any more (nothing is claimed): callers
        learn it before they build and redact a request."""
        with self._lock:
            self._check()

    def reserve(self) -> None:
        """Claim one HTTP request, or raise BudgetExhausted naming the bound."""
        with self._lock:
            self._check()
            self._reserved += 1

    def _check(self) -> None:
        if self._reserved >= self.max_calls:
            raise BudgetExhausted("call_cap", f"the run's cap of {self.max_calls} model "
                                              "calls is reached")
        if self.clock() >= self.deadline:
            raise BudgetExhausted("deadline", f"the model phase's deadline of "
                                              f"{self.deadline_s:g} s is reached")
        if self.max_tokens is not None and self._tokens >= self.max_tokens:
            raise BudgetExhausted("token_budget", f"the run's budget of "
                                                  f"{self.max_tokens:,} tokens is spent")

    def record(self, call: ModelCall) -> int:
        """Add a finished request; its index, for `amend`."""
        with self._lock:
            self.calls.append(call)
            self._tokens += call.tokens_in + call.tokens_out
            return len(self.calls) - 1

    def amend(self, index: int, **update: object) -> None:
        with self._lock:
            before = self.calls[index]
            self.calls[index] = after = before.replace(**update)
            self._tokens += (after.tokens_in + after.tokens_out
                             - before.tokens_in - before.tokens_out)

    def pause(self, seconds: float) -> None:
        """Hold every worker back for `seconds` (a rate limit applies to the whole run)."""
        with self._lock:
            self._pause_until = max(self._pause_until, self.clock() + seconds)

    def wait(self, sleep: Callable[[float], None]) -> None:
        """Sleep out a pause, never past the deadline."""
        with self._lock:
            until = min(self._pause_until, self.deadline)
        delay = until - self.clock()
        if delay > 0:
            sleep(delay)

    def log(self) -> ModelCallLog:
        with self._lock:
            calls = tuple(self.calls)
        return ModelCallLog(calls=calls, totals=totals(calls))


def totals(calls: tuple[ModelCall, ...]) -> ModelTotals:
    return ModelTotals(
        requests=len(calls),
        ok=sum(1 for c in calls if c.outcome == "ok"),
        tokens_in=sum(c.tokens_in for c in calls),
        tokens_out=sum(c.tokens_out for c in calls),
        cached_tokens=sum(c.cached_tokens for c in calls),
        latency_ms=sum(c.latency_ms for c in calls),
    )
