"""A finding's identity that survives unrelated edits moving it to another line."""

from __future__ import annotations

import hashlib

from reviewbot.report import ReportInput
from reviewbot.schema import Finding


def fingerprint(data: ReportInput, finding: Finding) -> str:
    # Rule, file and the code itself (whitespace-normalised), not the line number: a finding
    # pushed down by an edit above it keeps its fingerprint, so it is not reported anew.
    # Several findings on identical code in one file are told apart by their order.
    base = _base(data, finding)
    earlier = sum(1 for other in data.report.findings
                  if other.start_line < finding.start_line and other.file_path ==
                  finding.file_path and _base(data, other) == base)
    key = base if earlier == 0 else f"{base}\0{earlier}"
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _base(data: ReportInput, finding: Finding) -> str:
    code = " ".join(" ".join(data.code_of(finding)).split()) or finding.message
    return f"{finding.rule_id}\0{finding.file_path}\0{code}"
