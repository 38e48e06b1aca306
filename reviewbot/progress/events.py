"""Typed progress events with one emitter that the terminal display, `--events jsonl` and the
tests subscribe to (seed 003's named events).

| kind | when |
| --- | --- |
| `stage` | a pipeline stage starts (`data.stage`) |
| `notice` | something the user should know (a fallback, a bound reached) |
| `planner_update` | the plan is made (`data.units`, `data.model_units`) |
| `unit_reviewed` | the review agent finished a unit (`data.unit_id`, `data.findings`) |
| `verification_feedback` | the verifier sent findings back to the model (`data.rejected`) |
| `final_report` | the run's report is written (`data.findings`, `data.run_dir`) |
| `report` | with `--events -`: the report in the chosen `--format` (`data.format`, `data.report`) |
| `error` | the run failed (`data.exit_code`) |
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import IO, Any, Literal

from msgspec import field

from reviewbot.schema.records import Frozen

EventKind = Literal["stage", "notice", "planner_update", "unit_reviewed",
                    "verification_feedback", "final_report", "report", "error"]


class Event(Frozen, frozen=True, kw_only=True):
    kind: EventKind
    message: str
    # Milliseconds since the run started.
    elapsed_ms: int
    data: dict[str, Any] = field(default_factory=dict)


Subscriber = Callable[[Event], None]


class Events:
    """The run's emitter. Thread-safe: review workers emit from their own threads.

    Every message and string value goes through `redact` (the run's redaction pass) before
    any subscriber sees it."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 redact: Callable[[str], str] = lambda text: text) -> None:
        self._clock = clock
        self._redact = redact
        self._started = clock()
        self._subscribers: list[Subscriber] = []
        self._lock = threading.Lock()

    def subscribe(self, subscriber: Subscriber) -> None:
        with self._lock:
            self._subscribers.append(subscriber)

    def emit(self, kind: EventKind, message: str, **data: Any) -> Event:
        clean = {key: self._redact(value) if isinstance(value, str) else value
                 for key, value in data.items()}
        event = Event(kind=kind, message=self._redact(message), data=clean,
                      elapsed_ms=round((self._clock() - self._started) * 1000))
        with self._lock:
            subscribers = list(self._subscribers)
            for subscriber in subscribers:
                subscriber(event)
        return event

    def notice(self, message: str, **data: Any) -> None:
        self.emit("notice", message, **data)


def jsonl_writer(stream: IO[str]) -> Subscriber:
    """One JSON object per line per event, flushed at once (for `--events`)."""
    def write(event: Event) -> None:
        stream.write(json.dumps(event.to_data(), ensure_ascii=False) + "\n")
        stream.flush()
    return write
