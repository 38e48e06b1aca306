"""`--format json`: the RunReport contract ({run_id, findings, units, stats})."""

from __future__ import annotations

from reviewbot.report import ReportInput


class JsonReporter:
    def render(self, data: ReportInput) -> str:
        return data.report.to_json(indent=2)
