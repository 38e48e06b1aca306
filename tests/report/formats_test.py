"""Every output format against a golden file, and the machine formats against their schemas."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from reviewbot.pipeline import finding_code
from reviewbot.report import FORMATS, ReportInput, render
from reviewbot.schema import Finding, IndexUnit, LineNumbers, Metrics, RunReport, RunStats
from tests.conftest import assert_golden

HERE = Path(__file__).parent
UNIT = dict(language="python", patch_type="modify", metrics=Metrics(added_lines=4, hunk_count=1),
            rule_context_level="function", rule_confidence=0.95,
            line_numbers=LineNumbers(new_compact="L1-L9", old_compact="L1-L5"),
            agent_decision={"context_level": "function", "priority": "high"})
FINDINGS = (
    Finding(file_path="app/deploy.py", start_line=3, end_line=3, severity="error",
            category="secrets", rule_id="secrets.hardcoded",
            title="Hard-coded secret: AWS Access Key",
            message="Line 3 contains what looks like a secret: AWS Access Key (AKIA********).",
            suggestion="Load it from the environment.", unit_id="aaaa000000000001"),
    Finding(file_path="app/deploy.py", start_line=6, end_line=6, severity="error",
            category="security", rule_id="python.shell-injection",
            title="Command run through a shell", message="`subprocess.run` runs a shell.",
            suggestion="Pass a list of arguments.", unit_id="aaaa000000000001"),
    Finding(file_path="web/my app.js", start_line=2, end_line=2, severity="info",
            category="maintainability", rule_id="js.console-log",
            title="console.log left in code", message="console.log is usually a leftover.",
            suggestion="Remove it.", unit_id="bbbb000000000002"),
)
REPORT = RunReport(
    run_id="20260101T000000Z-abcdef",
    findings=FINDINGS,
    units=(IndexUnit(unit_id="aaaa000000000001", file_path="app/deploy.py",
                     tags=("security_sensitive",), **UNIT),
           IndexUnit(unit_id="bbbb000000000002", file_path="web/my app.js", **UNIT)),
    stats=RunStats(files=2, units=2, added_lines=8, removed_lines=0,
                   findings={"error": 2, "warning": 0, "info": 1}, duration_ms=42),
)
CODE = {("app/deploy.py", 6): '    subprocess.run(f"ssh {host}", shell=True)',
        ("web/my app.js", 2): "console.log(state);"}
DATA = ReportInput(report=REPORT, run_dir=Path(".reviewbot/runs/20260101T000000Z-abcdef"),
                   code=CODE)
SUFFIX = {"text": "txt", "json": "json", "markdown": "md", "sarif": "sarif", "rdjson": "rdjson"}


@pytest.mark.parametrize("name", FORMATS)
def test_golden(name: str) -> None:
    assert_golden(HERE / "golden" / f"report.{SUFFIX[name]}", render(name, DATA))


# The SARIF 2.1.0 properties a consumer relies on, written from the OASIS specification
# (sections 3.13 sarifLog, 3.14 run, 3.18 tool, 3.19 toolComponent, 3.49 reportingDescriptor,
# 3.27 result, 3.11 message, 3.28 location, 3.29 physicalLocation, 3.4 artifactLocation,
# 3.30 region). The full official schema is not shipped by any package this machine reaches.
_MESSAGE = {"type": "object", "anyOf": [{"required": ["text"]}, {"required": ["id"]}],
            "properties": {"text": {"type": "string"}}}
SARIF_SUBSET = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "$schema": {"type": "string", "format": "uri"},
        "runs": {"type": "array", "items": {
            "type": "object", "required": ["tool"],
            "properties": {
                "tool": {"type": "object", "required": ["driver"], "properties": {
                    "driver": {"type": "object", "required": ["name"], "properties": {
                        "name": {"type": "string"},
                        "rules": {"type": "array", "items": {
                            "type": "object", "required": ["id"], "properties": {
                                "id": {"type": "string"},
                                "shortDescription": _MESSAGE, "fullDescription": _MESSAGE,
                                "help": _MESSAGE,
                                "defaultConfiguration": {"type": "object", "properties": {
                                    "level": {"enum": ["none", "note", "warning", "error"]}}},
                            }}},
                    }}}},
                "results": {"type": "array", "items": {
                    "type": "object", "required": ["message"], "properties": {
                        "ruleId": {"type": "string"},
                        "ruleIndex": {"type": "integer", "minimum": -1},
                        "level": {"enum": ["none", "note", "warning", "error"]},
                        "message": _MESSAGE,
                        "partialFingerprints": {"type": "object",
                                                "additionalProperties": {"type": "string"}},
                        "locations": {"type": "array", "items": {"type": "object", "properties": {
                            "physicalLocation": {
                                "type": "object", "required": ["artifactLocation"],
                                "properties": {
                                    "artifactLocation": {"type": "object", "properties": {
                                        "uri": {"type": "string", "format": "uri-reference"},
                                        "uriBaseId": {"type": "string"}}},
                                    "region": {"type": "object", "required": ["startLine"],
                                               "properties": {
                                                   "startLine": {"type": "integer",
                                                                 "minimum": 1},
                                                   "endLine": {"type": "integer",
                                                               "minimum": 1}}},
                                }}}}},
                    }}},
            }}},
    },
}


def test_sarif_is_valid_and_complete() -> None:
    doc = json.loads(render("sarif", DATA))
    jsonschema.validate(doc, SARIF_SUBSET)
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["partialFingerprints"]["reviewbotFingerprint/v1"]
    assert rules[0]["help"]["text"]
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in run["results"]]
    assert "web/my%20app.js" in uris
    assert [r["level"] for r in run["results"]] == ["error", "error", "note"]


def test_sarif_fingerprint_survives_a_line_shift() -> None:
    def fingerprint_of(line: int) -> str:
        moved = FINDINGS[1].model_copy(update={"start_line": line, "end_line": line})
        data = ReportInput(report=REPORT.model_copy(update={"findings": (moved,)}),
                           code={("app/deploy.py", line): CODE[("app/deploy.py", 6)]})
        result = json.loads(render("sarif", data))["runs"][0]["results"][0]
        return str(result["partialFingerprints"]["reviewbotFingerprint/v1"])
    assert fingerprint_of(6) == fingerprint_of(40)


def test_rdjson_matches_reviewdogs_diagnostic_result() -> None:
    doc = json.loads(render("rdjson", DATA))
    assert doc["source"]["name"] == "reviewbot"
    for diagnostic in doc["diagnostics"]:
        assert set(diagnostic) <= {"message", "location", "severity", "source", "code",
                                   "suggestions", "original_output", "related_locations"}
        assert diagnostic["severity"] in ("ERROR", "WARNING", "INFO")
        assert diagnostic["location"]["range"]["start"]["line"] >= 1
        assert diagnostic["code"]["value"]


def test_reporters_never_get_a_secret_line() -> None:
    """The pipeline leaves lines with a secret out of the code reporters show, even when
    another finding points at the same line."""
    from reviewbot.diff import parse_units
    from tests.rules.conftest import make_diff

    line = 'requests.get(url, auth=("me", "AKIAQWERTYUIOPASDFGH"), verify=False)'
    units = parse_units(make_diff("app/http.py", f"import requests\n{line}\nx = 1\n"))
    tls = FINDINGS[1].model_copy(update={"file_path": "app/http.py", "start_line": 2,
                                         "end_line": 2})
    secret = FINDINGS[0].model_copy(update={"file_path": "app/http.py", "start_line": 2,
                                            "end_line": 2})
    assert finding_code(units, [tls]) == {("app/http.py", 2): line}
    code = finding_code(units, [tls, secret])
    assert code == {}
    report = REPORT.model_copy(update={"findings": (tls, secret)})
    for name in FORMATS:
        assert "AKIAQWERTYUIOPASDFGH" not in render(name, ReportInput(report=report, code=code))


def test_text_colour_only_when_asked_and_no_color_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    coloured = ReportInput(report=REPORT, code=CODE, color=True)
    assert "\x1b[" in render("text", coloured)
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in render("text", coloured)
    assert "\x1b[" not in render("text", DATA)


def test_text_quiet_and_verbose() -> None:
    quiet = render("text", ReportInput(report=REPORT, code=CODE, quiet=True))
    assert "findings:" not in quiet and "python.shell-injection" in quiet
    verbose = render("text", ReportInput(report=REPORT, code=CODE, verbose=True))
    assert "web/my app.js L1-L9  modify python +4 -0" in verbose
