"""`--format codequality`: GitLab's Code Quality report, the subset of the CodeClimate issue
format GitLab reads (docs.gitlab.com, "Code Quality", "Code Quality report format").

GitLab keeps one issue per fingerprint (a second one with the same fingerprint replaces the
first) and the merge request widget lists as new the fingerprints the target branch's report
does not have: reviewbot's own fingerprint is unique within a run and follows the code, not
the line number, so a finding an edit pushes down is not shown as new and as resolved.
"""

from __future__ import annotations

import json
from typing import Any

from reviewbot.levels import Severity
from reviewbot.report import ReportInput
from reviewbot.report.fingerprint import fingerprint
from reviewbot.schema.findings import Finding
from reviewbot.text.terminal import visible

# GitLab's icons for these are high, medium and info, as SARIF's error, warning and note.
# `blocker` stays unused: whether a finding blocks the merge is the run's --fail-level, not
# the finding's.
_SEVERITY: dict[Severity, str] = {"error": "critical", "warning": "major", "info": "info"}
# The merge request widget escapes the text as HTML, then reads `%{danger_start}`,
# `%{strong_end}` and the like in it as styling and drops any other `%{name}`.
_PLACEHOLDER = "%{"
_BREAK = "\u200b"


class CodequalityReporter:
    def render(self, data: ReportInput) -> str:
        issues = [_issue(data, finding) for finding in data.report.findings]
        return json.dumps(issues, indent=2, ensure_ascii=False)


def _issue(data: ReportInput, finding: Finding) -> dict[str, Any]:
    text = f"{finding.title}: {finding.message}"
    if finding.suggestion:
        text += f" Fix: {finding.suggestion}"
    return {
        "description": _plain(text),
        "check_name": _plain(finding.rule_id),
        "fingerprint": fingerprint(data, finding),
        "severity": _SEVERITY[finding.severity],
        # The shown name, repository-relative; a name that is not UTF-8 keeps its U+FFFD (JSON
        # text cannot hold the bytes, and GitLab puts the path in a URL as it is).
        "location": {"path": finding.file_path,
                     "lines": {"begin": finding.start_line, "end": finding.end_line}},
    }


def _plain(text: str) -> str:
    """Untrusted words as GitLab shows them (text, never Markdown or HTML): on one line, no
    control character or bidi override, and no `%{` the widget would read as styling."""
    return visible(" ".join(text.split())).replace(_PLACEHOLDER, "%" + _BREAK + "{")
