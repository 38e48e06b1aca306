"""Progress on stderr while a run works, so stdout stays clean for the report."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from reviewbot.progress.events import Event, Events


@contextmanager
def progress_display(events: Events, enabled: bool) -> Iterator[None]:
    """A spinner with the current stage and the units reviewed, on an interactive stderr."""
    if not enabled or not sys.stderr.isatty():
        yield
        return
    from rich.console import Console

    console = Console(stderr=True)
    with console.status("reviewbot: starting") as status:
        def show(event: Event) -> None:
            if event.kind in ("stage", "unit_reviewed", "verification_feedback"):
                status.update(f"reviewbot: {event.message}")
        events.subscribe(show)
        yield
