"""Progress on stderr while a run works, so stdout stays clean for the report."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def progress_display(enabled: bool) -> Iterator[Callable[[str], None]]:
    """A spinner with the current stage on an interactive stderr; silent otherwise."""
    if not enabled or not sys.stderr.isatty():
        yield lambda message: None
        return
    from rich.console import Console

    console = Console(stderr=True)
    with console.status("reviewbot: starting") as status:
        yield lambda message: status.update(f"reviewbot: {message}")
