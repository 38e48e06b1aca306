"""The engine: registry, anchoring, suppression, config, and staged content."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from msgspec.structs import replace

import reviewbot.rules as rules_engine
from reviewbot.cli import main
from reviewbot.config import Config, Limits, RuleSetting, load_config
from reviewbot.diff.parse import parse_units
from reviewbot.errors import ConfigError
from reviewbot.rules import _ALL, RULES, run_rules
from reviewbot.rules.base import FileChange
from reviewbot.rules.processes import usable_processes
from reviewbot.rules.secrets import secret_values
from reviewbot.schema.findings import RulesResult
from tests.conftest import GitFixture
from tests.rules.conftest import findings, make_diff, review

RISKY = 'import subprocess\nsubprocess.run(f"ls {p}", shell=True)\n'


def test_registry_ids_are_unique_and_described() -> None:
    assert len(RULES) == len(_ALL)
    for rule in RULES.values():
        assert rule.rationale and rule.title and rule.severity in ("error", "warning", "info")


def test_findings_only_on_added_lines() -> None:
    old = 'import subprocess\nsubprocess.run(f"ls {p}", shell=True)\nx = 1\n'
    new = old.replace("x = 1", "x = 2")
    assert findings("src/run.py", new, old) == []


def test_finding_fields_and_unit_anchor() -> None:
    result = review("src/run.py", RISKY)
    [finding] = result.findings
    assert (finding.file_path, finding.start_line, finding.end_line) == ("src/run.py", 2, 2)
    assert (finding.category, finding.source) == ("security", "rule")
    assert finding.unit_id == result.units[0].unit_id
    assert finding.suggestion


@pytest.mark.parametrize("marker", [
    "# reviewbot: ignore[python.shell-injection]",
    "# reviewbot: ignore[js.eval, python.shell-injection]",
    "# reviewbot: ignore",
])
def test_inline_suppression(marker: str) -> None:
    code = f'import subprocess\nsubprocess.run(f"ls {{p}}", shell=True)  {marker}\n'
    assert findings("src/run.py", code) == []


def test_suppressing_another_rule_does_not_hide_this_one() -> None:
    code = RISKY.replace("shell=True)", "shell=True)  # reviewbot: ignore[js.eval]")
    assert len(findings("src/run.py", code)) == 1


def test_secret_text_never_appears_in_findings() -> None:
    [finding] = findings("src/keys.py", 'KEY = "AKIAQWERTYUIOPASDFGH"\n')
    text = finding.to_json()
    assert "AKIAQWERTYUIOPASDFGH" not in text
    assert "AKIA********" in finding.message


def test_config_switches_rules_off_and_relevels(tmp_path: Path) -> None:
    config = Config(rules={"python.shell-injection": RuleSetting(severity="info"),
                           "python.debug-leftover": RuleSetting(enabled=False)})
    code = RISKY + "print(1)\n"
    assert {(f.rule_id, f.severity) for f in findings("src/run.py", code, config=config)} == {
        ("python.shell-injection", "info")}


def test_path_rules_override_rules_for_matching_files(tmp_path: Path) -> None:
    (tmp_path / ".reviewbot.toml").write_text(
        '[rules]\n"python.shell-injection" = "warning"\n'
        '[[path_rules]]\npath = "scripts/*"\nrules = { "python.shell-injection" = "off" }\n'
        '[[path_rules]]\npath = "scripts/release.py"\n'
        'rules = { "python.shell-injection" = "error", "python.debug-leftover" = false }\n')
    config = load_config(tmp_path, RULES)
    code = RISKY + "print(1)\n"
    assert {(f.rule_id, f.severity) for f in findings("src/run.py", code, config=config)} == {
        ("python.shell-injection", "warning"), ("python.debug-leftover", "info")}
    assert findings("scripts/build.py", code, config=config) == []
    # The last matching entry wins.
    assert {(f.rule_id, f.severity) for f in findings("scripts/release.py", code,
                                                       config=config)} == {
        ("python.shell-injection", "error")}
    (tmp_path / ".reviewbot.toml").write_text(
        '[[path_rules]]\npath = "x/*"\nrules = { "python.shel-injection" = "off" }\n')
    with pytest.raises(ConfigError, match=r"path_rules 'x/\*'.*did you mean "
                                          r"'python.shell-injection'"):
        load_config(tmp_path, RULES)


def test_config_ignore_globs_drop_units() -> None:
    result = review("legacy/run.py", RISKY, config=Config(ignore=("legacy/*",)))
    assert (result.units, result.findings, result.ignored_units) == ((), (), 1)


def test_config_file_parsing(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.reviewbot]\nfail_level = "warning"\nignore = ["docs/*"]\n'
        '[tool.reviewbot.rules]\n"js.console-log" = "off"\n"python.weak-hash" = "warning"\n')
    config = load_config(tmp_path)
    assert (config.fail_level, config.ignore) == ("warning", ("docs/*",))
    assert config.rule("js.console-log").enabled is False
    assert config.rule("python.weak-hash").severity == "warning"
    (tmp_path / ".reviewbot.toml").write_text("rulez = {}\n")
    with pytest.raises(ConfigError, match="unknown key"):
        load_config(tmp_path)


def test_staged_mode_checks_the_index_not_the_working_tree(
        repo: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write("run.py", RISKY)
    repo.stage()
    repo.write("run.py", "x = 1\n")  # the risky line is only in the index
    assert main(["--repo", str(repo.root), "--format", "json"]) == 1
    assert '"python.shell-injection"' in capsys.readouterr().out


def _acceptance_repo(repo: GitFixture) -> None:
    repo.write("README.md", "# service\n")
    repo.write("app/db.py", "def connect():\n    return None\n")
    repo.commit()


def test_acceptance_three_planted_problems(repo: GitFixture,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    _acceptance_repo(repo)
    repo.write("app/deploy.py", (
        "import subprocess\n"
        "\n"
        'AWS_ACCESS_KEY_ID = "AKIAQWERTYUIOPASDFGH"\n'
        "\n"
        "def deploy(host):\n"
        '    subprocess.run(f"ssh {host} ./deploy.sh", shell=True)\n'
    ))
    repo.write("app/db.py", (
        "def connect():\n"
        "    return None\n"
        "\n"
        "def find(conn, name):\n"
        "    return conn.execute(f\"SELECT * FROM users WHERE name = '{name}'\")\n"
    ))
    repo.stage()
    code = main(["--repo", str(repo.root), "--mode", "staged", "--offline", "--format", "json"])
    import json
    found = {(f["file_path"], f["start_line"], f["rule_id"], f["severity"])
             for f in json.loads(capsys.readouterr().out)["findings"]}
    assert code == 1
    assert found == {
        ("app/deploy.py", 3, "secrets.hardcoded", "error"),
        ("app/deploy.py", 6, "python.shell-injection", "error"),
        ("app/db.py", 5, "python.sql-injection", "error"),
    }


@pytest.mark.parametrize(("path", "new"), [
    ("README.md", "# service\n\nHow to deploy: run `make deploy`.\n"),
    ("app/db.py", "def connect():\n    return  None\n"),
])
def test_acceptance_docs_or_whitespace_change_is_silent(
        repo: GitFixture, capsys: pytest.CaptureFixture[str], path: str, new: str) -> None:
    _acceptance_repo(repo)
    repo.write(path, new)
    repo.stage()
    code = main(["--repo", str(repo.root), "--mode", "staged", "--offline"])
    out = capsys.readouterr().out
    assert code == 0
    assert "findings: 0 error, 0 warning, 0 info" in out


def test_python_that_does_not_parse_is_named_in_the_notes() -> None:
    result = review("app/legacy.py", 'import os\nprint "x"\nos.system("ls " + x)\n')
    assert result.notes == ("app/legacy.py is not Python 3 that parses (Python 2: a print "
                            "statement on line 2): checked with line patterns only",)
    assert [f.rule_id for f in result.findings] == ["python.shell-injection"]
    assert review("app/ok.py", "x = 1\n").notes == ()


def test_a_build_line_is_reported_when_only_it_changed() -> None:
    old = ('import subprocess\ndef run(path):\n    cmd = ["convert", path]\n'
           "    subprocess.Popen(cmd, shell=True)\n")
    new = old.replace('["convert", path]', '"convert %s" % path')
    [finding] = findings("app/run.py", new, old)
    assert (finding.start_line, finding.severity) == (3, "error")
    assert "used by `subprocess.Popen` on line 4" in finding.message


# Every kind of block a statement can sit in: (the code before the sink, its indent).
_BLOCKS = {
    "if": ("    if p:\n", 8),
    "for": ("    for _ in p:\n", 8),
    "while": ("    while p:\n", 8),
    "with": ("    with open(p):\n", 8),
    "try": ("    try:\n", 8),
    "except": ("    try:\n        pass\n    except OSError:\n", 8),
    "finally": ("    try:\n        pass\n    finally:\n", 8),
    "else": ("    if p:\n        pass\n    else:\n", 8),
    "match case": ("    match p:\n        case 'x':\n", 12),
    "nested": ("    match p:\n        case _:\n            try:\n                pass\n"
               "            except OSError:\n", 16),
}


@pytest.mark.parametrize("block", list(_BLOCKS))
@pytest.mark.parametrize("added", ["the whole file", "the sink's line"])
def test_a_sink_is_found_in_every_kind_of_block(block: str, added: str) -> None:
    before, indent = _BLOCKS[block]
    new = (f"import os\n\n\ndef run(p):\n{before}{' ' * indent}os.system(f\"ls {{p}}\")\n"
           "    return p\n")
    old = None if added == "the whole file" else new.replace('f"ls {p}"', '"ls"')
    sink_line = new.splitlines().index(f"{' ' * indent}os.system(f\"ls {{p}}\")") + 1
    assert [(f.rule_id, f.start_line) for f in findings("app/run.py", new, old)] == [
        ("python.shell-injection", sink_line)]


def _many_files() -> dict[str, str]:
    files = {f"src/mod{n}.py": f"def f{n}(p):\n    import os\n    os.system('ls ' + p)\n"
             f"    token = 'ghp_{'a1B2' * 9}'\n    return token\n" for n in range(5)}
    files["src/broken.py"] = "print 'python 2'\n"
    files["tests/test_x.py"] = "def test_x(p):\n    eval(p)\n"
    files["web/app.js"] = "el.innerHTML = userInput;\n"
    return files


@pytest.mark.skipif(usable_processes(2) < 2, reason="forking needs Linux and a second CPU")
@pytest.mark.parametrize("processes", [2, 3])
def test_checking_in_processes_gives_the_result_of_one_process(
        monkeypatch: pytest.MonkeyPatch, processes: int) -> None:
    monkeypatch.setattr(rules_engine, "PARALLEL_MIN_CHARS", 0)
    files = _many_files()
    units = [unit for path, text in files.items() for unit in parse_units(make_diff(path, text))]

    def run(count: int) -> RulesResult:
        config = replace(Config(), limits=replace(Limits(), processes=count))
        return run_rules(units, files.get, config)

    alone, split = run(1), run(processes)
    assert split == alone
    assert {f.file_path for f in alone.findings} >= {"src/mod0.py", "src/mod4.py",
                                                     "web/app.js"}
    assert any("broken.py" in note for note in alone.notes)


def test_a_file_change_shown_for_debugging_leaves_out_the_whole_file() -> None:
    """Its memo holds the parsed file (text included) and it shares the whole change: a
    repr in a traceback or a test failure shows the file's own hunks only."""
    unseen = "NOT_IN_THE_HUNK = 1\n"
    change = FileChange(path="a.py", language="python", tags=frozenset(), units=(),
                        read_new=lambda: unseen, memo={"text": unseen})
    assert change.new_text == unseen
    assert repr(change) == ("FileChange(path='a.py', language='python', tags=frozenset(), "
                            "units=(), notes=[])")


def test_a_checked_file_lets_go_of_its_tree_and_can_parse_again() -> None:
    change = FileChange(path="a.py", language="python", tags=frozenset(), units=(),
                        read_new=lambda: "x = 1\n")
    assert change.python_tree is not None
    change.memo["python_file"] = object()
    change.release()
    assert "_python_parse" not in change.__dict__ and not change.memo
    assert isinstance(change.python_tree, ast.Module)


@pytest.mark.skipif(usable_processes(2) < 2, reason="forking needs Linux and a second CPU")
def test_secrets_a_worker_finds_are_redacted_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """The redaction pass learns each secret from the findings the parent receives: a
    secret found in the worker's share is redacted like one found here."""
    monkeypatch.setattr(rules_engine, "PARALLEL_MIN_CHARS", 0)
    tokens = {f"src/k{n}.py": f"ghp_{chr(97 + n) * 4}{'Z9y8' * 8}" for n in range(4)}
    files = {path: f'TOKEN = "{token}"\n' for path, token in tokens.items()}
    units = [unit for path, text in files.items() for unit in parse_units(make_diff(path, text))]
    config = replace(Config(), limits=replace(Limits(), processes=2))
    result = run_rules(units, files.get, config)
    assert {f.file_path for f in result.findings if f.category == "secrets"} == set(tokens)
    assert secret_values(result.units, result.findings) >= set(tokens.values())
    dumped = "".join(f.to_json() for f in result.findings)
    assert not any(token in dumped for token in tokens.values())


def test_a_containment_check_under_a_condition_names_it_by_line_unless_it_is_a_name() -> None:
    """The message quotes a flag by its dotted name, never an expression (which could hold
    data): anything else is named by its line."""
    source = ("from aiohttp.web import FileResponse\nclass Static:\n"
              "    async def _handle(self, request):\n"
              "        path = self._directory.joinpath(request.match_info['name']).resolve()\n"
              "        if self.mode == 'strict':\n"
              "            path.relative_to(self._directory)\n"
              "        return FileResponse(path)\n")
    [found] = findings("web/static.py", source)
    assert "runs only when the condition on line 5 holds" in found.message
    assert "strict" not in found.message


@pytest.mark.parametrize("nested", [
    "x = " + "-" * 10_000 + "1\n",  # MemoryError from the parser
    "x = " + "-\\\n" * 10_000 + "1\n",  # the same over many lines
    "x = " + "not " * 3_000 + "y\n",  # RecursionError
])
def test_source_nested_too_deeply_to_parse_is_a_note_not_a_crash(nested: str) -> None:
    key = "AKIA" + "Q" * 16
    code = f"import os\nos.system(cmd)\nAWS_KEY = '{key}'\n{nested}"
    result = review("app/evil.py", code)
    assert {"secrets.hardcoded", "python.shell-injection"} <= {f.rule_id for f in result.findings}
    # A long line does not make the file minified: it is checked, and says why by patterns.
    assert any("app/evil.py is nested too deeply for the parser" in note
               for note in result.notes)


def test_a_rule_that_cannot_follow_nesting_this_deep_is_a_note_not_a_crash() -> None:
    deep = "-" * 500 + "1"
    code = (f"import os, hashlib\n\n\ndef view(request: {deep}):\n    os.system(request.x)\n"
            f"hashlib.md5({deep})\nAWS_KEY = '{'AKIA' + 'Q' * 16}'\n")
    result = review("app/evil.py", code)
    assert "secrets.hardcoded" in {f.rule_id for f in result.findings}
    assert any("is nested too deeply for `python.weak-hash`" in note
               for note in result.notes), result.notes


@pytest.mark.parametrize(("comment", "quiet"), [
    ("# nosec", True),
    ("# nosec B102", True),
    ("# nosec: B307, B102", True),
    ("# nosec B608", False),  # another test of bandit's: not this finding
    ("# nosecure", False),
])
def test_bandits_nosec_quiets_what_bandits_tests_find(comment: str, quiet: bool) -> None:
    """A bandit user's `# nosec` markers keep working: bare, or naming the bandit test that
    finds what the rule finds; a secret is never quieted by one."""
    code = f"def run(code):\n    exec(  {comment}\n        code)\nKEY = 'AKIA{'Q' * 16}'  # nosec\n"
    found = {f.rule_id for f in review("app/run.py", code).findings}
    assert ("python.eval-exec" not in found) is quiet
    assert "secrets.hardcoded" in found
