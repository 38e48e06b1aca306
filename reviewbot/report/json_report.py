"""`--format json`: the RunReport contract ({run_id, findings, units, stats})."""

from __future__ import annotations

from pathlib import Path

from reviewbot.schema import RunReport


class JsonReporter:
    def render(self, report: RunReport, run_dir: Path | None) -> str:
        return report.model_dump_json(indent=2)
