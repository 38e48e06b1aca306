"""A finding's identity that survives unrelated edits moving it to another line."""

from __future__ import annotations

import hashlib

from reviewbot.report import ReportInput
from reviewbot.schema import Finding


def fingerprint(data: ReportInput, finding: Finding) -> str:
    # Rule, file and the code itself (whitespace-normalised), not the line number: a finding
    # pushed down by an edit above it keeps its fingerprint, so it is not reported anew.
    code = " ".join(" ".join(data.code_of(finding)).split()) or finding.message
    digest = hashlib.sha256(f"{finding.rule_id}\0{finding.file_path}\0{code}".encode())
    return digest.hexdigest()[:32]
