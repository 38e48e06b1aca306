"""`--format sarif`: SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.

A finding a quietening removed is a result with a `suppressions` entry (SARIF 3.35): `inSource`
for a comment on its line, `external` for the config or the file's kind, with the comment's
words as its justification; viewers show it as suppressed rather than never knowing of it. A
finding a quietening lowered is an ordinary result at its new level, whose `quietened`
property says what it would have been.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from reviewbot import __version__
from reviewbot.levels import Severity
from reviewbot.report import ReportInput
from reviewbot.report.fingerprint import fingerprint
from reviewbot.report.quietened import SUPPRESSIONS
from reviewbot.schema.findings import Finding, Quieted, RuleMeta

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS: dict[Severity, str] = {"error": "error", "warning": "warning", "info": "note"}


class SarifReporter:
    def render(self, data: ReportInput) -> str:
        removed = [q for q in data.report.quieted if q.given is None]
        rule_ids = sorted({f.rule_id for f in data.report.findings}
                          | {q.finding.rule_id for q in removed})
        rules = [_rule(rule_id, data.rules.get(rule_id)) for rule_id in rule_ids]
        lowered = {_key(q.finding): q for q in data.report.quieted if q.given is not None}
        results = [_result(data, f, rule_ids.index(f.rule_id), lowered.get(_key(f)))
                   for f in data.report.findings]
        results += [_suppressed(data, q, rule_ids.index(q.finding.rule_id)) for q in removed]
        doc = {
            "$schema": SARIF_SCHEMA,
            "version": "2.1.0",
            "runs": [{
                "tool": {"driver": {
                    "name": "reviewbot", "version": __version__, "rules": rules,
                }},
                "automationDetails": {"id": f"reviewbot/{data.report.run_id}"},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }],
        }
        return json.dumps(doc, indent=2, ensure_ascii=False)


def _rule(rule_id: str, rule: RuleMeta | None) -> dict[str, Any]:
    if rule is None:  # a model finding's id has no rule behind it
        return {"id": rule_id, "name": rule_id, "shortDescription": {"text": rule_id}}
    return {
        "id": rule.id,
        "name": rule.id,
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": rule.rationale},
        "help": {"text": f"{rule.title}. {rule.rationale} Suppress one occurrence with "
                         f"`reviewbot: ignore[{rule.id}]` on the line."},
        "defaultConfiguration": {"level": _LEVELS[rule.severity]},
        "properties": {"tags": [rule.category]},
    }


def _key(finding: Finding) -> tuple[str, int, str]:
    return finding.file_path, finding.start_line, finding.rule_id


def _suppressed(data: ReportInput, quiet: Quieted, index: int) -> dict[str, Any]:
    """A finding a quietening removed: a result with its suppression."""
    in_source = quiet.kind in SUPPRESSIONS
    suppression: dict[str, Any] = {
        "kind": "inSource" if in_source else "external",
        "properties": {"quietening": quiet.kind, "decidedBy": quiet.decided_by},
    }
    if quiet.justification:  # the comment's words; the config's glob or setting
        suppression["justification" if in_source else "properties"] = (
            quiet.justification if in_source
            else {**suppression["properties"], "setting": quiet.justification})
    return {**_result(data, quiet.finding, index), "suppressions": [suppression]}


def _result(data: ReportInput, finding: Finding, index: int,
            lowered: Quieted | None = None) -> dict[str, Any]:
    text = f"{finding.title}: {finding.message}"
    if finding.suggestion:
        text += f" Fix: {finding.suggestion}"
    quietened = ({"quietened": {"kind": lowered.kind, "decidedBy": lowered.decided_by,
                                "severity": lowered.finding.severity,
                                "justification": lowered.justification}}
                 if lowered is not None else {})
    return {
        "ruleId": finding.rule_id,
        "ruleIndex": index,
        "level": _LEVELS[finding.severity],
        "message": {"text": text},
        "locations": [{"physicalLocation": {
            "artifactLocation": _artifact(data, finding),
            "region": {"startLine": finding.start_line, "endLine": finding.end_line},
        }}],
        "partialFingerprints": {"reviewbotFingerprint/v1": fingerprint(data, finding)},
        "properties": {"category": finding.category, "source": finding.source,
                       "unitId": finding.unit_id, "inDiff": finding.in_diff, **quietened,
                       # A line the change removed: its number in the base's file (the
                       # region is where the removal sits in the new file).
                       **({"baseLine": finding.base_line}
                          if finding.base_line is not None else {})},
        **({"fixes": [_fix(data, finding)]} if finding.replacement is not None else {}),
    }


def _artifact(data: ReportInput, finding: Finding) -> dict[str, str]:
    """The file by its real name: a name that is not UTF-8 has its own bytes percent-encoded
    (`bad%FF%FEname.py`), not the U+FFFD the report shows."""
    return {"uri": quote(data.report.real_path(finding.file_path)), "uriBaseId": "%SRCROOT%"}


def _fix(data: ReportInput, finding: Finding) -> dict[str, Any]:
    """Whole lines replaced: from column 1 of the first line to column 1 of the line after
    the last (SARIF 3.55, 3.57), so the replacement ends with its own newline."""
    return {
        "description": {"text": finding.suggestion or finding.title},
        "artifactChanges": [{
            "artifactLocation": _artifact(data, finding),
            "replacements": [{
                "deletedRegion": {"startLine": finding.start_line, "startColumn": 1,
                                  "endLine": finding.end_line + 1, "endColumn": 1},
                "insertedContent": {"text": f"{finding.replacement}\n"},
            }],
        }],
    }
