"""`--format rdjson`: reviewdog's Diagnostic JSON (`reviewdog -f=rdjson`)."""

from __future__ import annotations

import json
from typing import Any

from reviewbot.levels import Severity
from reviewbot.report import ReportInput
from reviewbot.schema.findings import Finding

_SEVERITY: dict[Severity, str] = {"error": "ERROR", "warning": "WARNING", "info": "INFO"}


class RdjsonReporter:
    def render(self, data: ReportInput) -> str:
        doc = {
            "source": {"name": "reviewbot"},
            "diagnostics": [_diagnostic(f) for f in data.report.findings],
        }
        return json.dumps(doc, indent=2, ensure_ascii=False)


def _diagnostic(finding: Finding) -> dict[str, Any]:
    message = f"{finding.title}: {finding.message}"
    if finding.suggestion:
        message += f"\nFix: {finding.suggestion}"
    return {
        "message": message,
        "location": {"path": finding.file_path, "range": {
            "start": {"line": finding.start_line},
            "end": {"line": finding.end_line},
        }},
        "severity": _SEVERITY[finding.severity],
        "source": {"name": "reviewbot"},
        "code": {"value": finding.rule_id},
        **({"suggestions": [{
            # Whole lines: from the first line's start to the start of the line after.
            "range": {"start": {"line": finding.start_line, "column": 1},
                      "end": {"line": finding.end_line + 1, "column": 1}},
            "text": f"{finding.replacement}\n"}]} if finding.replacement is not None else {}),
    }
