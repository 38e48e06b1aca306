"""Step 9: reporters, one module per output format, listed in one registry."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from reviewbot.schema import Finding, RunReport


@dataclass(frozen=True)
class ReportInput:
    """What a reporter renders: the run's report, where its artifacts are, and the
    new-side code of each finding's lines (empty for secrets, which are never echoed)."""

    report: RunReport
    run_dir: Path | None = None
    code: Mapping[tuple[str, int], str] = field(default_factory=dict)
    verbose: bool = False
    quiet: bool = False
    # Colour for the text format; the CLI decides (a terminal, and no NO_COLOR).
    color: bool = False

    def code_of(self, finding: Finding) -> list[str]:
        return [self.code[(finding.file_path, n)]
                for n in range(finding.start_line, finding.end_line + 1)
                if (finding.file_path, n) in self.code]


class Reporter(Protocol):
    def render(self, data: ReportInput) -> str:
        """The whole output for a finished run, ready to print."""
        ...


def _registry() -> dict[str, Reporter]:
    from reviewbot.report import json_report, markdown, rdjson, sarif, text

    return {
        "text": text.TextReporter(),
        "json": json_report.JsonReporter(),
        "markdown": markdown.MarkdownReporter(),
        "sarif": sarif.SarifReporter(),
        "rdjson": rdjson.RdjsonReporter(),
    }


FORMATS = ("text", "json", "markdown", "sarif", "rdjson")


def render(name: str, data: ReportInput) -> str:
    return _registry()[name].render(data)
