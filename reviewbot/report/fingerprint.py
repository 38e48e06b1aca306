"""A finding's identity that survives unrelated edits moving it to another line."""

from __future__ import annotations

import hashlib

from reviewbot.report import ReportInput
from reviewbot.schema.findings import Finding


def fingerprint(data: ReportInput, finding: Finding) -> str:
    # Rule, file and the code itself (whitespace-normalised), not the line number: a finding
    # pushed down by an edit above it keeps its fingerprint, so it is not reported anew.
    # Several findings on identical code in one file are told apart by their order (by line,
    # then by their order in the report), so no two findings of a run share a fingerprint.
    base = _base(data, finding)
    twins = sorted((other for other in data.report.findings
                    if other.file_path == finding.file_path and _base(data, other) == base),
                   key=lambda other: other.start_line)
    earlier = next((n for n, twin in enumerate(twins) if twin is finding), None)
    if earlier is None:  # an equal finding, not the report's own object
        earlier = sum(1 for twin in twins if twin.start_line < finding.start_line)
    key = base if earlier == 0 else f"{base}\0{earlier}"
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _base(data: ReportInput, finding: Finding) -> str:
    # With no code to quote (a secret's line is never quoted, a line outside the change may
    # not be), the title stands in: a message may name the line ("Line 12 contains ...").
    code = " ".join(" ".join(data.code_of(finding)).split()) or finding.title
    return f"{finding.rule_id}\0{finding.file_path}\0{code}"
