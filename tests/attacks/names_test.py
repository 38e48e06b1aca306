"""The pull-request author names files so that reviewbot reviews them less: vendored,
generated, test code, documentation. A name counts only when the base declares it
(reviewbot/rules/quieting.py)."""

from __future__ import annotations

import json

import pytest

from reviewbot.cli import main
from reviewbot.config import Config
from reviewbot.diff.parse import parse_units
from reviewbot.rules import run_rules
from reviewbot.schema.findings import Finding
from reviewbot.schema.units import HistoryLine
from tests.conftest import GitFixture
from tests.rules.conftest import Base, make_diff, review

SHELL = 'import subprocess\n\n\ndef pay(p):\n    subprocess.run(f"ls {p}", shell=True)\n'
AWS_KEY = 'KEY = "AKIA' + 'QWERTYUIOPASDFGH"\n'


def _only(path: str, new: str, old: str | None = None, base: Base | None = None,
          rule: str = "python.shell-injection") -> Finding:
    [found] = [f for f in review(path, new, old, base=base).findings if f.rule_id == rule]
    return found


@pytest.mark.parametrize("path", [
    "external/payments.py", "vendor/pay.py", "lib/third_party/pay.py",
    "node_modules/pay/index.py", "dist/pay.py", "tests/pay.py", "app/fixtures/pay.py",
    "testing/pay.py",
])
def test_an_invented_folder(path: str) -> None:
    """A folder the change adds (`external/`, `tests/`) cannot make its code vendored or test
    code: the shell injection stays an error, says why, and the unit is not tagged so the
    planner would skip it."""
    result = review(path, SHELL, base=Base())
    [found] = [f for f in result.findings if f.rule_id == "python.shell-injection"]
    assert found.severity == "error"
    assert "Reviewed as ordinary code" in found.message
    assert "but the change adds that" in found.message
    assert not {"vendored", "generated", "test_file"} & set(result.units[0].tags)


@pytest.mark.parametrize(("path", "folder", "severity", "tag"), [
    ("vendor/pay.py", "vendor", None, "vendored"),
    ("lib/third_party/pay.py", "lib/third_party", None, "vendored"),
    ("tests/pay.py", "tests", "warning", "test_file"),
])
def test_a_folder_the_base_has_still_declares(path: str, folder: str, severity: str | None,
                                              tag: str) -> None:
    """What the repository already keeps in `vendor/` or `tests/` keeps its kind for a new
    file there: the quietening users rely on still works when the base declares it."""
    result = review(path, SHELL, base=Base(folder))
    shell = [f for f in result.findings if f.rule_id == "python.shell-injection"]
    assert [f.severity for f in shell] == ([severity] if severity else [])
    assert tag in result.units[0].tags
    assert all("Reviewed as ordinary code" not in f.message for f in result.findings)


def test_an_existing_file_keeps_its_kind() -> None:
    """A file the base already had under a vendored name is still checked for secrets only:
    the repository declared it by keeping it there."""
    old = "import subprocess\n"
    result = review("vendor/lib/run.py", SHELL, old, base=Base())
    assert [f.rule_id for f in result.findings] == []


def test_a_rename_into_vendor() -> None:
    """Moving a module into a folder the base does not have (`app/pay.py` to
    `vendor/pay.py`) is a name the change gives it: still reviewed in full."""
    diff = (b"diff --git a/app/pay.py b/vendor/pay.py\nsimilarity index 80%\n"
            b"rename from app/pay.py\nrename to vendor/pay.py\n"
            b"--- a/app/pay.py\n+++ b/vendor/pay.py\n@@ -1,4 +1,5 @@\n"
            b" import subprocess\n \n \n def pay(p):\n"
            b'+    subprocess.run(f"ls {p}", shell=True)\n')
    units = parse_units(diff)
    result = run_rules(units, lambda p: SHELL if p == "vendor/pay.py" else None, Config(),
                       project=Base("app"))
    assert [(f.rule_id, f.severity) for f in result.findings] == [
        ("python.shell-injection", "error")]


@pytest.mark.parametrize(("path", "code", "rule", "severity"), [
    ("app/test_payments.py", SHELL, "python.shell-injection", "error"),
    ("app/payments_test.py", SHELL, "python.shell-injection", "error"),
    ("conftest.py", SHELL, "python.shell-injection", "error"),
    ("api/pay_pb2.py", SHELL, "python.shell-injection", "error"),
    ("web/pay.min.js", "el.innerHTML = location.hash;\n", "js.inner-html", "warning"),
    ("web/pay.test.js", "console.log(token);\n", "js.console-log", "info"),
    ("web/pay.generated.py", SHELL, "python.shell-injection", "error"),
])
def test_a_name_alone_declares_nothing(path: str, code: str, rule: str, severity: str) -> None:
    """A kind given by a new file's own name (`test_x.py`, `x_pb2.py`, `x.min.js`) is a name
    the change invents: the file is reviewed as ordinary code, however the base looks."""
    found = _only(path, code, base=Base(everything=True), rule=rule)
    assert found.severity == severity
    assert "Reviewed as ordinary code" in found.message


@pytest.mark.parametrize("path", ["authors/views.py", "licenses/api.py",
                                  "app/changelog_service.py", "docs/conf.py",
                                  "readme_handler.py"])
def test_code_named_like_docs(path: str) -> None:
    """Code is never documentation, whatever its name or folder: a hard-coded AWS key in
    `authors/views.py` is an error, and login code there is security sensitive."""
    result = review(path, AWS_KEY + "def login(password):\n    pass\n",
                    base=Base(everything=True))
    assert [(f.rule_id, f.severity) for f in result.findings] == [("secrets.hardcoded", "error")]
    assert "docs" not in result.units[0].tags
    assert "security_sensitive" in result.units[0].tags


def test_prose_is_documentation_wherever_it_is() -> None:
    """A Markdown page is documentation by what it is: an example key in it stays a
    warning (the documented quietening), new page or not."""
    found = _only("notes/setup.md", f"Use `{AWS_KEY.strip()}`\n", base=Base(),
                  rule="secrets.hardcoded")
    assert found.severity == "warning"


def test_a_banner_the_change_adds() -> None:
    """A "Code generated ... DO NOT EDIT" banner the change writes, in a new file or on top
    of an existing one, does not make it generated: it is reviewed, and says so."""
    banner = "# Code generated by protoc. DO NOT EDIT.\n"
    new_file = _only("api/client.py", banner + SHELL, base=Base(everything=True))
    assert new_file.severity == "error"
    assert "banner" in new_file.message
    on_top = _only("api/client.py", banner + SHELL, SHELL.replace(', shell=True', ''),
                   base=Base(everything=True))
    assert on_top.severity == "error"


def test_a_banner_the_base_had_still_declares() -> None:
    """A generated file whose banner the base already had stays checked for secrets only."""
    banner = "# Code generated by protoc. DO NOT EDIT.\n"
    old = banner + "import subprocess\n\n\ndef pay(p):\n    pass\n"
    result = review("api/client.py", banner + SHELL, old)
    assert [f.rule_id for f in result.findings] == []
    assert "generated" in result.units[0].tags


_BANNER = "# The table below is generated by tables.py: do not edit it by hand.\n"
_ABOVE = "".join(f"X{n} = {n}\n" for n in range(10))
_BELOW = "import subprocess\n\n\ndef pay(p):\n    pass\n"


@pytest.mark.parametrize(("old", "new", "generated"), [
    # The change deletes what stood above a banner further down: it now heads the file.
    (_ABOVE + _BANNER + _BELOW, _BANNER + SHELL, False),
    # Keeps the first lines and deletes below them, so the hunks do not show the top.
    ("A = 1\nB = 2\nC = 3\nD = 4\n" + _ABOVE + _BANNER + _BELOW,
     "A = 1\nB = 2\nC = 3\nD = 4\n" + _BANNER + SHELL, False),
    # Near misses: a banner the base had on top stays, under an edit above or below it.
    (_BANNER + _ABOVE + _BELOW, _BANNER + _ABOVE + SHELL, True),
    ("A = 1\n" + _BANNER + _ABOVE + _BELOW, "A = 2\n" + _BANNER + SHELL, True),
    ("A = 1\nB = 2\n" + _BANNER + _ABOVE + _BELOW, "B = 2\n" + _BANNER + SHELL, True),
])
def test_a_banner_the_change_moves_to_the_top(old: str, new: str, generated: bool) -> None:
    """A "generated ... do not edit" line the base had further down does not make the file
    generated when the change brings it to the top by deleting what stood above it: only
    a banner the base's file had at its top declares it."""
    result = review("app/table.py", new, old)
    assert ("generated" in result.units[0].tags) is generated
    severities = [f.severity for f in result.findings if f.rule_id == "python.shell-injection"]
    quieted = [(q.kind, q.decided_by) for q in result.quieted]
    if generated:
        assert (severities, quieted) == ([], [("generated", "base")])
    else:
        assert (severities, quieted) == (["error"], [])
        assert "its banner would make it generated code" in result.findings[0].message


def test_history_quiet_by_name() -> None:
    """A secret some pushed commit added and a later one removed, in a test file whose
    folder the change invented, is an error like anywhere else; and so it is in one the base
    declares: a known token format in test code is a key all the same."""
    units = parse_units(make_diff("tests/test_keys.py", "x = 1\n"))
    line = HistoryLine(commit="a" * 40, file_path="tests/test_keys.py", line=1,
                       text=AWS_KEY.strip())
    gone = HistoryLine(commit="b" * 40, file_path="tests/gone.py", line=1,
                       text=AWS_KEY.strip())
    result = run_rules(units, lambda p: "x = 1\n", Config(), history=[line, gone],
                       project=Base())
    assert {(f.file_path, f.severity) for f in result.findings} == {
        ("tests/test_keys.py", "error"), ("tests/gone.py", "error")}
    declared = run_rules(units, lambda p: "x = 1\n", Config(), history=[line],
                         project=Base("tests"))
    # A known token format is an error in test code whoever declared it (docs/RULES.md).
    assert [f.severity for f in declared.findings] == ["error"]


def test_guard_removed_under_docs() -> None:
    """A module under `doc/` is code: an escape taken off a value there is reported."""
    old = "from html import escape\n\n\ndef page(name):\n    return escape(name)\n"
    new = "from html import escape\n\n\ndef page(name):\n    return name\n"
    assert "guard-removed" in {f.rule_id for f in review("doc/helpers.py", new, old).findings}


def test_names_through_a_real_pull_request(repo: GitFixture,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """End to end on a real repository: what the base has (`tests/`, `vendor/`) declares;
    folders and names the pull request invents do not, and the check fails on them."""
    repo.write("tests/test_old.py", "def test_a():\n    pass\n")
    repo.write("vendor/old.py", "x = 1\n")
    repo.write("app/__init__.py", "")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("tests/test_pay.py", SHELL)
    repo.write("vendor/pay.py", SHELL)
    repo.write("external/payments.py", SHELL)
    repo.write("app/pay_pb2.py", SHELL)
    repo.write("authors/views.py", AWS_KEY)
    repo.commit("feature")
    code = main(["--repo", str(repo.root), "--mode", "pr", "--base", "main", "--offline",
                 "--format", "json"])
    found = {(f["file_path"], f["severity"]) for f in json.loads(capsys.readouterr().out)[
        "findings"]}
    assert code == 1
    assert found == {("tests/test_pay.py", "warning"), ("external/payments.py", "error"),
                     ("app/pay_pb2.py", "error"), ("authors/views.py", "error")}


@pytest.mark.parametrize("empty_commit", [False, True], ids=["no commit", "an empty one"])
def test_a_first_commit_declares_its_own_layout(repo: GitFixture, empty_commit: bool,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """With no base at all (a repository's first commit), or a base whose tree is empty (an
    empty first commit, as `git commit --allow-empty` makes), there is no change apart from
    the repository: its `tests/` folder is test code as it reads. A base that holds any file
    is a base (the test above)."""
    if empty_commit:
        repo.git("commit", "-q", "--allow-empty", "-m", "empty")
    repo.write("tests/test_pay.py", SHELL)
    repo.git("add", "-A")
    main(["--repo", str(repo.root), "--mode", "staged", "--format", "json"])
    found = json.loads(capsys.readouterr().out)["findings"]
    assert [(f["rule_id"], f["severity"]) for f in found] == [
        ("python.shell-injection", "warning")]


def test_a_markdown_page_in_the_pushed_history_is_documentation() -> None:
    """A Markdown page is documentation by what it is, in the pushed history as in the
    change: its example key is a warning there too."""
    units = parse_units(make_diff("app/x.py", "x = 1\n"))
    line = HistoryLine(commit="a" * 40, file_path="notes/setup.md", line=1,
                       text=AWS_KEY.strip())
    result = run_rules(units, lambda p: "x = 1\n", Config(), history=[line], project=Base())
    assert [f.severity for f in result.findings] == ["warning"]
