"""Step 9: reporters, one module per output format, listed in one registry."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from reviewbot.report import json_report, text
from reviewbot.schema import RunReport


class Reporter(Protocol):
    def render(self, report: RunReport, run_dir: Path | None) -> str:
        """The whole output for a finished run, ready to print."""
        ...


REPORTERS: dict[str, Reporter] = {
    "text": text.TextReporter(),
    "json": json_report.JsonReporter(),
}
