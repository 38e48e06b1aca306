"""Nothing quietened in silence: every finding a quietening removed or lowered is recorded
(schema.Quieted) with its kind and who decided it, and every file read for secrets only
(schema.QuietedFile)."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec
import pytest

from reviewbot import rules
from reviewbot.config import Config, Origin, RuleSetting
from reviewbot.diff.parse import parse_units
from reviewbot.rules import run_rules
from reviewbot.rules.base import FileChange, Hit, Quiet
from reviewbot.schema.findings import Quieted, QuietedFile
from reviewbot.schema.units import ReviewUnit
from tests.rules.conftest import Base, make_diff, review

SHELL = 'import subprocess\n\n\ndef pay(p):\n    subprocess.run(f"ls {p}", shell=True)\n'


def _kinds(quieted: tuple[Quieted, ...]) -> set[tuple[str, str, str, str | None, str]]:
    return {(q.finding.rule_id, q.kind, q.decided_by, q.given, q.justification)
            for q in quieted}


def test_a_suppression_the_change_adds_is_recorded_with_its_words() -> None:
    """`# nosec` on the finding's own line still works in the hook, and is now known: the
    finding it quietens, at the severity it would have had, decided by the change, with
    the words after it."""
    code = SHELL.replace("shell=True)", "shell=True)  # nosec B602 - the host is checked")
    result = review("app/pay.py", code)
    assert [f.rule_id for f in result.findings] == []
    [quieted] = result.quieted
    assert (quieted.finding.severity, quieted.finding.start_line) == ("error", 5)
    assert _kinds(result.quieted) == {("python.shell-injection", "nosec", "change", None,
                                       "the host is checked")}


def test_test_code_is_lowered_and_says_so() -> None:
    """Test code the base declares is one level quieter: the finding is reported at the lower
    level, and the record keeps the level it would have had."""
    result = review("tests/test_pay.py", SHELL, base=Base("tests"))
    [finding] = [f for f in result.findings if f.rule_id == "python.shell-injection"]
    assert finding.severity == "warning"
    assert ("python.shell-injection", "test_code", "base", "warning", "") in _kinds(
        result.quieted)


def test_a_rule_switched_off_is_still_run_and_counted() -> None:
    """A rule the repository's config switches off reports nothing, and what it would have
    reported is known, decided by the base; the user's own setting is the user's."""
    off = RuleSetting(enabled=False, where=".reviewbot.toml at main: rules.x", trusted=False)
    result = review("app/pay.py", SHELL, config=Config(
        rules={"python.shell-injection": off}, repository_file=".reviewbot.toml"))
    assert [f.rule_id for f in result.findings] == []
    assert _kinds(result.quieted) == {("python.shell-injection", "config", "base", None,
                                       ".reviewbot.toml at main: rules.x")}
    mine = RuleSetting(severity="info", where="~/.config/reviewbot/config.toml: rules.x")
    result = review("app/pay.py", SHELL, config=Config(rules={"python.shell-injection": mine}))
    assert [f.severity for f in result.findings] == ["info"]
    assert _kinds(result.quieted) == {("python.shell-injection", "config", "user", "info",
                                       "~/.config/reviewbot/config.toml: rules.x")}


def test_an_ignored_file_is_named_and_its_findings_known() -> None:
    """A file the config's `ignore` names is checked for secrets only; what its other rules
    find is recorded, and the file itself is named (new: the change chose its name)."""
    config = Config(ignore=("*_pb2.py",), repository_file=".reviewbot.toml",
                    ignore_origins={"*_pb2.py": Origin(".reviewbot.toml", trusted=False)})
    result = review("api/pay_pb2.py", SHELL, config=config)
    assert result.findings == ()
    assert _kinds(result.quieted) == {("python.shell-injection", "ignore", "base", None,
                                       "*_pb2.py")}
    assert result.quieted_files == (QuietedFile(file_path="api/pay_pb2.py", kind="ignore",
                                                decided_by="base", justification="*_pb2.py",
                                                new=True),)


def test_vendored_code_the_base_declares_is_counted() -> None:
    result = review("vendor/pay.py", SHELL, base=Base("vendor"))
    assert result.findings == ()
    assert _kinds(result.quieted) == {("python.shell-injection", "vendored", "base", None, "")}
    assert [(f.kind, f.new) for f in result.quieted_files] == [("vendored", True)]


class _QuietRule:
    """A rule module reporting a quietening of its own in one call: `Hit(quiet=...)`."""

    id = "python.debug-leftover"
    title = "t"
    severity = "warning"
    category = "maintainability"
    rationale = "r"
    levels = ("warning",)
    whole_file = False

    def applies_to(self, change: FileChange) -> bool:
        return True

    def check(self, change: FileChange) -> Iterator[Hit]:
        yield Hit(rule_id=self.id, line=1, message="m",
                  quiet=Quiet("minified", "base"))
        yield Hit(rule_id=self.id, line=2, message="m", severity="error",
                  quiet=Quiet("long_line", "change", given="info"))


def test_a_rule_reports_what_it_quietens_in_one_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """`Hit.quiet` is how a rule says it removed (given None) or lowered a finding: the
    engine records it like any other quietening."""
    monkeypatch.setattr(rules, "RULES", {"python.debug-leftover": _QuietRule()})
    units: tuple[ReviewUnit, ...] = parse_units(make_diff("app/x.py", "a = 1\nb = 2\n"))
    result = run_rules(units, lambda p: "a = 1\nb = 2\n", Config())
    assert [(f.start_line, f.severity) for f in result.findings] == [(2, "info")]
    assert _kinds(result.quieted) == {("python.debug-leftover", "minified", "base", None, ""),
                                      ("python.debug-leftover", "long_line", "change", "info",
                                       "")}


def test_a_placeholder_or_an_encrypted_value_is_counted() -> None:
    """What a line's own words leave out of the secrets rule is known: a placeholder value,
    and what the entropy and keyword detectors find in a CI service's `secure:` value (a
    known token format there is still an error)."""
    yaml = ('env:\n  - secure: "hunter2Zq9xP4mW7vT1kL8sR3yB6nC0dF5gH2jJ"\n'
            '  - token: "changeme"\n')
    result = review(".travis.yml", yaml)
    assert result.findings == ()
    assert {(q.finding.start_line, q.kind, q.decided_by) for q in result.quieted} == {
        (2, "encrypted", "change"), (3, "placeholder", "change")}


def test_the_hook_reads_a_config_the_change_edits_as_the_changes_word() -> None:
    """In the hook the repository's config is read from the work tree: what it quietens is
    the change's own word when the change edits the file, the base's otherwise."""
    off = RuleSetting(enabled=False, where=".reviewbot.toml: rules.x", trusted=False)
    config = Config(rules={"python.shell-injection": off}, repository_file=".reviewbot.toml")
    edit = parse_units(make_diff(".reviewbot.toml", "[rules]\n"))
    units = parse_units(make_diff("app/pay.py", SHELL)) + edit
    result = run_rules(units, lambda p: SHELL if p == "app/pay.py" else "[rules]\n", config)
    assert [(q.kind, q.decided_by) for q in result.quieted] == [("config", "change")]
    at_base = msgspec.structs.replace(config, repository_at_base=True)
    result = run_rules(units, lambda p: SHELL if p == "app/pay.py" else "[rules]\n", at_base)
    assert [(q.kind, q.decided_by) for q in result.quieted] == [("config", "base")]


def test_an_ignored_workflows_expression_injection_is_counted() -> None:
    """zizmor, an external analyzer, is not run on a file checked for secrets only; the rule
    it stands in for then finds what the file holds, and it is counted."""
    workflow = ("on: issues\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
                '      - run: echo "${{ github.event.issue.title }}"\n')
    result = review(".github/workflows/t.yml", workflow, config=Config(
        ignore=(".github/*",), repository_file=".reviewbot.toml"))
    assert result.findings == ()
    assert {q.finding.rule_id for q in result.quieted} == {"gha.expression-injection"}


def test_a_long_line_the_patterns_pass_over_is_named() -> None:
    """`eval(location.hash); // xxxx...` past 1,000 characters is read (the change's shape
    decides nothing); the long lines of a file the base holds minified are passed over, and
    the file is named with how many, decided by the base."""
    code = "eval(location.hash); // " + "x" * 1200 + "\n"
    padded = review("web/a.js", code)
    assert [f.rule_id for f in padded.findings] == ["js.eval"]
    assert padded.quieted_files == ()
    bundle = review("static/bundle.js", "var b=2;" * 200 + "eval(y);\n", "var a=1;" * 200 + "\n")
    assert bundle.findings == ()
    assert [(f.file_path, f.kind, f.decided_by) for f in bundle.quieted_files] == [
        ("static/bundle.js", "minified", "base")]
