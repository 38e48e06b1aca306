"""The change's author tries to lose findings through what decides a file's language, what a
file is, what a suppression is and what is read as staged: nothing other than the base, or
the finding's own comment, decides; and what is quietened is shown (the terminal, JSON,
SARIF, the summaries)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from reviewbot.cli import main
from reviewbot.config import Config
from reviewbot.diff.parse import parse_units
from reviewbot.rules import RULES, run_rules, scanners
from reviewbot.schema.units import HistoryLine
from tests.conftest import GitFixture
from tests.report.formats_test import validate_sarif
from tests.rules.conftest import make_diff, review

DEPLOY = ("#!/usr/bin/env python3\nimport subprocess\nimport sys\n\n"
          + "".join(f"# step {n}\n" for n in range(5, 25))
          + "def deploy(host):\n    pass\n\n\ndeploy(sys.argv[1])\n")
INJECTION = '    subprocess.run(f"ssh {host}", shell=True)'
HELPERS = 'import os\n\n\ndef clean(name):\n    os.system("rm -rf /tmp/cache/" + name)\n'
AWS_KEY = "AKIA" + "QWERTYUIOPASDFGH"


def _run(repo: GitFixture, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["--repo", str(repo.root), "--offline", *args])
    out, _ = capsys.readouterr()
    return code, out


def _json(repo: GitFixture, capsys: pytest.CaptureFixture[str],
          *args: str) -> tuple[int, dict[str, object]]:
    code, out = _run(repo, capsys, "--format", "json", *args)
    return code, json.loads(out)


def _rules(doc: dict[str, object]) -> list[tuple[str, str, int]]:
    findings = doc["findings"]
    assert isinstance(findings, list)
    return [(f["rule_id"], f["file_path"], f["start_line"]) for f in findings]


def _feature(repo: GitFixture) -> str:
    """A base commit of what is there, and a branch for the change."""
    base = repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    return base


# --- 1. a script's language comes from the file, not from the diff's shape ----------------

@pytest.mark.parametrize("mode", ["staged", "pr"])
def test_a_scripts_language_is_its_first_line_wherever_the_diff_starts(
        repo: GitFixture, capsys: pytest.CaptureFixture[str], mode: str) -> None:
    """An extensionless `#!/usr/bin/env python3` script edited at line 26 is Python: the
    shell injection there is an error in the hook and in a pull request alike."""
    repo.write("bin/deploy", DEPLOY)
    base = _feature(repo)
    repo.write("bin/deploy", DEPLOY.replace("    pass", INJECTION))
    repo.stage()
    if mode == "pr":
        repo.commit("edit")
    code, doc = _json(repo, capsys, "--mode", mode, *(["--base", base] if mode == "pr" else []))
    assert (code, _rules(doc)) == (1, [("python.shell-injection", "bin/deploy", 26)])


# --- 2. a symlink is reviewed as what it is imported or run as ----------------------------

def test_a_link_the_change_adds_makes_its_target_code(repo: GitFixture,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """`app/helpers.py -> ../data/helpers.txt`: `import app.helpers` runs the text file, so
    the change that adds the link is reviewed as adding its whole content as Python, even
    when the text file was already there (the finding is outside the diff's lines and says
    which link makes it code)."""
    repo.write("data/helpers.txt", HELPERS)
    repo.write("app/__init__.py", "")
    base = _feature(repo)
    (repo.root / "app" / "helpers.py").symlink_to("../data/helpers.txt")
    repo.commit("link")
    code, doc = _json(repo, capsys, "--mode", "pr", "--base", base)
    assert (code, _rules(doc)) == (1, [("python.shell-injection", "data/helpers.txt", 5)])
    [finding] = doc["findings"]  # type: ignore[misc]
    assert finding["in_diff"] is False and "symlink app/helpers.py" in finding["message"]


@pytest.mark.parametrize("link_is_new", [True, False])
def test_a_text_file_a_link_makes_code_is_reviewed_as_code(
        repo: GitFixture, capsys: pytest.CaptureFixture[str], link_is_new: bool) -> None:
    """The text file the link leads to is what is imported: its added lines are Python,
    whether the link comes with them or was already there."""
    repo.write("data/helpers.txt", "import os\n")
    repo.write("app/__init__.py", "")
    if not link_is_new:
        (repo.root / "app" / "helpers.py").symlink_to("../data/helpers.txt")
    repo.commit("base")
    if link_is_new:
        (repo.root / "app" / "helpers.py").symlink_to("../data/helpers.txt")
    repo.write("data/helpers.txt", HELPERS)
    repo.stage()
    code, doc = _json(repo, capsys, "--mode", "staged")
    assert (code, _rules(doc)) == (1, [("python.shell-injection", "data/helpers.txt", 5)])


@pytest.mark.parametrize("target", ["vendor/helpers.py", "data/helpers\nx.txt"])
def test_a_link_makes_code_of_a_file_whatever_its_own_kind_or_name(
        repo: GitFixture, capsys: pytest.CaptureFixture[str], target: str) -> None:
    """The target's own kind (a new file under the base's `vendor/`: secrets only) or a
    name git shows over two lines does not decide what the link makes of it: imported as
    `app/helpers.py`, it is app code."""
    repo.write("vendor/README.md", "vendored\n")
    repo.write("app/__init__.py", "")
    base = _feature(repo)
    repo.write(target, HELPERS)
    (repo.root / "app" / "helpers.py").symlink_to(f"../{target}")
    repo.commit("link")
    code, doc = _json(repo, capsys, "--mode", "pr", "--base", base)
    assert (code, [(rule, line) for rule, _, line in _rules(doc)]) == (
        1, [("python.shell-injection", 5)])


def test_a_link_out_of_the_repository_is_said(repo: GitFixture,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    repo.commit("base")
    (repo.root / "run.py").symlink_to("/etc/hostname")
    repo.stage()
    main(["--repo", str(repo.root), "--offline", "--mode", "staged"])
    assert "run.py is a symlink that leads out of the repository" in capsys.readouterr().err


# --- 3. a suppression counts only in a comment ----------------------------------------------

SHELL_IN = 'import subprocess\n\n\ndef f(host):\n    subprocess.run({}, shell=True){}\n'


@pytest.mark.parametrize(("path", "code", "rule"), [
    ("app/a.py", SHELL_IN.format('f"ssh {host} # nosec"', ""), "python.shell-injection"),
    ("app/a.py", SHELL_IN.format('f"ssh {host}; reviewbot: ignore"', ""),
     "python.shell-injection"),
    ("app/a.py", SHELL_IN.format('f"ssh {host} # reviewbot: ignore[python.shell-injection]"',
                                 ""), "python.shell-injection"),
    ("app/a.py", 'def q(cursor, uid):\n    cursor.execute(f"SELECT * FROM t WHERE id = {uid}'
                 ' -- reviewbot: ignore")\n', "python.sql-injection"),
    # Python 3.12's f-strings nest quotes: `"#"` inside the braces is no comment there.
    ("app/a.py", SHELL_IN.format('f"ssh {host + "#"} nosec"', ""), "python.shell-injection"),
    # A bare `\r` ends a line for Python: the comment stays on git's line 5, not line 6.
    ("app/a.py", 'import subprocess\n\n\ndef f(host):\n    x = 1\r# nosec\n'
                 '    subprocess.run(f"ssh {host}", shell=True)\n', "python.shell-injection"),
    ("web/a.js", 'const cp = require("child_process");\nfunction f(host) {\n'
                 '  cp.exec(`ssh ${host} // reviewbot: ignore`);\n}\n', "js.command-injection"),
    ("app/k.py", f'KEY = "{AWS_KEY} # pragma: allowlist secret"\n', "secrets.hardcoded"),
    ("app/k.py", f'KEY, NOTE = "{AWS_KEY}", "pragma: allowlist secret"\n',
     "secrets.hardcoded"),
    ("conf/.env", f'KEY="{AWS_KEY} # pragma: allowlist secret"\n', "secrets.hardcoded"),
    ("Dockerfile", 'FROM debian\nRUN curl https://x.example/i.sh | sh ; echo "# reviewbot: '
                   'ignore"\n', "shell.curl-pipe-shell"),
])
def test_suppression_words_in_a_string_suppress_nothing(path: str, code: str,
                                                        rule: str) -> None:
    """`# nosec`, `reviewbot: ignore` and `pragma: allowlist secret` inside a string are
    text the code holds, not a comment: the finding stays, at its level."""
    result = review(path, code)
    assert [(f.rule_id, f.severity) for f in result.findings if f.rule_id == rule] == [
        (rule, RULES[rule].severity if rule.startswith("shell.") else "error")]
    assert result.quieted == ()


@pytest.mark.parametrize(("path", "code", "kind"), [
    ("app/a.py", SHELL_IN.format('f"ssh {host}"', "  # nosec B602 the host is checked"),
     "nosec"),
    ("web/a.js", 'const cp = require("child_process");\nfunction f(host) {\n'
                 '  cp.exec(`ssh ${host}`);  // reviewbot: ignore[js.command-injection]\n}\n',
     "suppression"),
    ("app/k.py", f'KEY = "{AWS_KEY}"  # pragma: allowlist secret\n', "allowlist"),
    ("conf/b.env", f"KEY={AWS_KEY}  # pragma: allowlist secret\n", "allowlist"),
    ("Dockerfile", "FROM debian\nRUN curl https://x.example/i.sh | sh  "
                   "# reviewbot: ignore[shell.curl-pipe-shell]\n", "suppression"),
    ("app/t.html", "<div>{{ body|safe }}</div>{# reviewbot: ignore #}\n", "suppression"),
])
def test_a_suppression_in_a_comment_still_works_and_is_counted(path: str, code: str,
                                                               kind: str) -> None:
    """In a comment of the file's language (a shell comment after a Dockerfile's RUN, a
    Jinja comment in a template), on the finding's line, in the hook: it still quietens the
    finding, and the finding is known, decided by the change."""
    result = review(path, code)
    [quieted] = result.quieted
    assert (quieted.kind, quieted.decided_by) == (kind, "change")
    assert quieted.finding.rule_id not in {f.rule_id for f in result.findings}


# --- 4. a base suppression covers only what it covered at the base ------------------------

QUERY = ('def q(cursor, uid):\n    cursor.execute(  # nosec B608\n'
         '        "SELECT * FROM users WHERE id = 1"\n    )\n')


def test_a_base_suppression_does_not_cover_a_statement_the_change_alters() -> None:
    """The base's `# nosec` on a constant query's first line does not silence the injection
    a change makes of its continuation line; the finding says why."""
    new = QUERY.replace('"SELECT * FROM users WHERE id = 1"',
                        'f"SELECT * FROM users WHERE id = {uid}"')
    result = review("app/db.py", new, QUERY)
    assert [(f.rule_id, f.severity, f.start_line) for f in result.findings] == [
        ("python.sql-injection", "error", 2)]
    assert "The suppression on line 2 is the base's" in result.findings[0].message
    # Suppressed again on its first line, in the change: quiet, and said to be the change's.
    again = new.replace("# nosec B608", "# nosec B608 uid is an int")
    result = review("app/db.py", again, QUERY)
    assert result.findings == ()
    assert [(q.kind, q.decided_by, q.justification) for q in result.quieted] == [
        ("nosec", "change", "uid is an int")]


def test_a_suppression_on_a_line_of_many_lines_covers_nothing(
        repo: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    """With old Mac line endings a file is one line to git and many to Python: a `# nosec`
    anywhere in it would be "on the line" of every finding. It covers nothing, and says so."""
    repo.commit("base")
    repo.write("mac.py", 'import subprocess\r\r\rdef f(host):\r'
                         '    subprocess.run(f"ssh {host}", shell=True)\r# nosec\r\n')
    repo.stage()
    code, doc = _json(repo, capsys, "--mode", "staged")
    assert (code, _rules(doc)) == (1, [("python.shell-injection", "mac.py", 1)])
    assert "holds more than one line of code" in doc["findings"][0]["message"]  # type: ignore[index]


@pytest.mark.parametrize("comment", ["# reviewbot: ignore[js.eval", "# reviewbot: ignored",
                                     "# reviewbot: ignores all"])
def test_a_suppression_that_names_nothing_suppresses_nothing(comment: str) -> None:
    """`ignore[js.eval` with no `]` is not a bare `ignore` that would quieten every rule on
    the line while reading as if it named one."""
    result = review("app/a.py", SHELL_IN.format('f"ssh {host}"', f"  {comment}"))
    assert [f.rule_id for f in result.findings] == ["python.shell-injection"]


def _needs(tool: str) -> None:
    if scanners.find_executable(tool) is None:
        pytest.skip(f"{tool} is not installed (pip install 'reviewbot[scanners]')")


SCRIPT = "#!/bin/bash\n# shellcheck disable=SC2086\necho start\n"


def test_an_analyzers_own_suppression_counts_only_on_a_line_the_change_adds() -> None:
    """shellcheck reads `# shellcheck disable=SC2086` above a script's first command as
    covering the whole file: the base's covers nothing the change brings, and the change's
    own is recorded like any suppression."""
    _needs("shellcheck")
    new = SCRIPT + "rm -rf $1/cache\n"
    result = review("bin/clean.sh", new, SCRIPT)
    assert ("shellcheck", "shellcheck SC2086", 4) in {
        (f.rule_id, f.title, f.start_line) for f in result.findings}
    result = review("bin/clean.sh", new)
    assert "shellcheck SC2086" not in {f.title for f in result.findings}
    assert [(q.finding.title, q.kind, q.decided_by, q.justification)
            for q in result.quieted if q.finding.rule_id == "shellcheck"] == [
        ("shellcheck SC2086", "suppression", "change", "shellcheck disable=SC2086")]


def test_a_zizmor_ignore_comment_is_counted() -> None:
    _needs("zizmor")
    workflow = ("on: issues\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
                '      - run: echo "${{ github.event.issue.title }}"  '
                "# zizmor: ignore[template-injection]\n")
    result = review(".github/workflows/t.yml", workflow)
    assert "zizmor template-injection" not in {f.title for f in result.findings}
    assert ("zizmor template-injection", "suppression", "change") in {
        (q.finding.title, q.kind, q.decided_by) for q in result.quieted}


# --- 7. staged content is the index's -------------------------------------------------------

def test_staged_content_is_read_from_the_index(repo: GitFixture,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """`git diff --cached` reads a file from the work tree when its stat data says it is
    unchanged: a work-tree copy that differs from the index (or cannot be read) must not
    be what is reviewed. The index holds the injection; the work tree, same size and time,
    does not."""
    repo.git("config", "core.trustctime", "false")
    repo.write("a.py", "x = 1\n")
    repo.commit("base")
    staged = 'import os\nos.system("rm -rf /tmp/" + input())\n'
    path = repo.write("a.py", staged)
    past = time.time() - 1000
    os.utime(path, (past, past))
    repo.stage("a.py")
    with path.open("r+") as handle:  # in place: the same inode, size and mtime
        handle.write("#" * (len(staged) - 1) + "\n")
    os.utime(path, (past, past))
    code, doc = _json(repo, capsys, "--mode", "staged")
    assert (code, _rules(doc)) == (1, [("python.shell-injection", "a.py", 2)])


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_an_unreadable_staged_file_is_not_reviewed_as_empty(
        repo: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    repo.git("config", "core.trustctime", "false")
    repo.write("a.py", "x = 1\n")
    repo.commit("base")
    path = repo.write("a.py", 'import os\nos.system("rm -rf /tmp/" + input())\n')
    past = time.time() - 1000
    os.utime(path, (past, past))
    repo.stage("a.py")
    path.chmod(0)
    try:
        code, doc = _json(repo, capsys, "--mode", "staged")
    finally:
        path.chmod(0o644)
    assert (code, _rules(doc)) == (1, [("python.shell-injection", "a.py", 2)])


def test_an_unmerged_index_stops_and_says_why(repo: GitFixture,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    repo.write("a.py", "x = 1\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "other")
    repo.write("a.py", "x = 2\n")
    repo.commit("other")
    repo.git("checkout", "-q", "-")
    repo.write("a.py", "x = 3\n")
    repo.commit("mine")
    repo.git("merge", "other", check=False)
    code = main(["--repo", str(repo.root), "--offline", "--mode", "staged"])
    assert code == 2
    assert "unmerged paths" in capsys.readouterr().err


# --- 8. an ignore glob over a name the change chooses ---------------------------------------

def test_a_base_ignore_glob_over_a_new_name_is_named_and_secrets_are_still_checked(
        repo: GitFixture, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Under the base's `ignore = ["*_pb2.py"]`, a new `api/pay_pb2.py` keeps the base's
    decision (its injection does not fail the run) but is named wherever the reviewer
    looks, its injection is known (JSON, SARIF as suppressed), and a key in it is an
    error."""
    repo.write(".reviewbot.toml", 'ignore = ["*_pb2.py"]\n')
    base = _feature(repo)
    repo.write("api/pay_pb2.py", "import os\n\n\ndef pay(name):\n"
                                 '    os.system("pay " + name)\n')
    repo.commit("pay")
    code, doc = _json(repo, capsys, "--mode", "pr", "--base", base)
    assert (code, doc["findings"]) == (0, [])
    assert [(q["finding"]["rule_id"], q["kind"], q["decided_by"], q["justification"])
            for q in doc["quieted"]] == [  # type: ignore[union-attr]
        ("python.shell-injection", "ignore", "base", "*_pb2.py")]
    assert doc["quieted_files"] == [{"file_path": "api/pay_pb2.py", "kind": "ignore",
                                     "decided_by": "base", "justification": "*_pb2.py",
                                     "new": True}]
    code, out = _run(repo, capsys, "--mode", "pr", "--base", base)
    assert "new files checked for secrets only: api/pay_pb2.py (`ignore` glob `*_pb2.py`, " \
           "decided by the base)" in out
    code, out = _run(repo, capsys, "--mode", "pr", "--base", base, "--format", "markdown")
    assert "**New files checked for secrets only:** `api/pay_pb2.py`" in out
    code, out = _run(repo, capsys, "--mode", "pr", "--base", base, "--format", "sarif")
    sarif = json.loads(out)
    validate_sarif(sarif)
    [result] = sarif["runs"][0]["results"]
    assert result["suppressions"][0]["kind"] == "external"
    repo.write("api/pay_pb2.py", f'KEY = "{AWS_KEY}"\n')
    repo.commit("key")
    code, doc = _json(repo, capsys, "--mode", "pr", "--base", base)
    assert (code, _rules(doc)) == (1, [("secrets.hardcoded", "api/pay_pb2.py", 1)])


def test_a_secret_in_the_pushed_history_of_an_ignored_file_is_found() -> None:
    """Secrets are checked in every file: one a commit of the range adds to an ignored file
    and the next removes is still in the history being pushed; an allowlist pragma in a
    string of that line allows nothing."""
    units = parse_units(make_diff("api/pay_pb2.py", "KEY = None\n"))
    lines = [HistoryLine(commit="a" * 40, file_path="api/pay_pb2.py", line=1,
                         text=f'KEY = "{AWS_KEY}"'),
             HistoryLine(commit="b" * 40, file_path="app/k.py", line=1,
                         text=f'KEY = "{AWS_KEY} # pragma: allowlist secret"'),
             HistoryLine(commit="c" * 40, file_path="app/ok.py", line=1,
                         text=f'KEY = "{AWS_KEY}"  # pragma: allowlist secret')]
    result = run_rules(units, lambda p: "KEY = None\n", Config(ignore=("*_pb2.py",)),
                       history=lines)
    assert [(f.rule_id, f.file_path) for f in result.findings] == [
        ("secrets.in-history", "api/pay_pb2.py"), ("secrets.in-history", "app/k.py")]
    assert [(q.finding.file_path, q.kind, q.decided_by) for q in result.quieted] == [
        ("app/ok.py", "allowlist", "change")]


# --- the class: every suppression the change adds is shown ---------------------------------

def test_a_suppression_the_change_adds_on_an_error_is_said_first(
        repo: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    """"0 error" is no longer the whole story: the terminal and the Markdown summary name the
    change's suppressed error, its file and line, before anything else about quietenings."""
    repo.commit("base")
    repo.write("app/run.py", SHELL_IN.format('f"ssh {host}"', "  # nosec"))
    repo.stage()
    code, out = _run(repo, capsys, "--mode", "staged")
    assert code == 0
    assert ("quietened by the change: app/run.py:5 error python.shell-injection (`nosec`)"
            in out)
    assert "quietened: 1 by the change (`nosec`: 1 not reported)" in out
    code, out = _run(repo, capsys, "--mode", "staged", "--format", "markdown")
    assert "**The change suppresses 1 error**" in out
    assert "- `app/run.py` L5 `python.shell-injection`" in out
