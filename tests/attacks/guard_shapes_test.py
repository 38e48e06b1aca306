"""The pull-request author knows guard-removed and takes a guard away in a shape it did not
read: the exit taken from under a check that stays, a check that checks nothing put in its
place, the guard's lines pasted into a page, a comment or a docstring to pass for moved,
cosmetic edits spending the rule's budget first, or a plain deletion with nothing added. Each
is reported as the plain deletion is; the near misses stay quiet. A finding about a removed
line names that line of the base, in every format (and on both forges:
tests/github/removed_lines_test.py, tests/gitlab/removed_lines_test.py)."""

from __future__ import annotations

import json

import pytest

from reviewbot.cli import main
from reviewbot.config import Config
from reviewbot.diff.parse import parse_units
from reviewbot.rules import run_rules
from reviewbot.schema.findings import Finding
from tests.conftest import GitFixture
from tests.rules.conftest import findings, make_diff

GUARD = ("guard-removed", "warning")
HEAD = "def read(full):\n    check_root()\n"
GUARDED = HEAD + "    if not is_safe(BASE, full):\n        raise Forbidden()\n"
TAIL = "    data = open(full).read()\n    return data\n"
JS_OLD = ("function read(full) {\n  checkRoot();\n  if (!isSafe(BASE, full)) {\n"
          "    throw new Error('outside');\n  }\n  return fs.readFileSync(full);\n}\n")


def _guards(path: str, old: str, new: str) -> list[Finding]:
    return [f for f in findings(path, new, old) if f.rule_id == "guard-removed"]


def _levels(path: str, old: str, new: str) -> set[tuple[str, str]]:
    return {(f.rule_id, f.severity) for f in _guards(path, old, new)}


TWINS = [
    ("the exit replaced, the check kept", GUARDED + TAIL,
     HEAD + "    if not is_safe(BASE, full):\n        log.warning('outside: %s', full)\n" + TAIL),
    ("the exit deleted, the check kept", GUARDED + "        audit(full)\n" + TAIL,
     HEAD + "    if not is_safe(BASE, full):\n        audit(full)\n" + TAIL),
    ("a vacuous check in its place", GUARDED + TAIL,
     HEAD + "    if not full:\n        raise Forbidden()\n" + TAIL),
    ("a None check in its place", GUARDED + TAIL,
     HEAD + "    if full is None:\n        raise Forbidden()\n" + TAIL),
    ("the check re-spaced without its exit", GUARDED + TAIL,
     HEAD + "    if not is_safe(BASE,  full):\n        pass\n" + TAIL),
    ("a one-line guard deleted", HEAD + "    if not is_safe(BASE, full): raise Forbidden()\n"
     + TAIL, HEAD + TAIL),
    ("an unrelated line added beside the deletion", GUARDED + TAIL,
     HEAD + "    log.debug('reading')\n" + TAIL),
]


@pytest.mark.parametrize(("old", "new"), [pytest.param(o, n, id=name) for name, o, n in TWINS])
def test_a_guard_taken_away_in_another_shape(old: str, new: str) -> None:
    """The plain case: the guard deleted with nothing added. Each twin takes the same guard
    away and is reported at the same level."""
    assert _levels("app/files.py", GUARDED + TAIL, HEAD + TAIL) == {GUARD}
    assert _levels("app/files.py", old, new) == {GUARD}


@pytest.mark.parametrize("new", [
    JS_OLD.replace("throw new Error('outside');", "console.warn('outside');"),
    JS_OLD.replace("  if (!isSafe(BASE, full)) {\n    throw new Error('outside');\n  }\n", ""),
    JS_OLD.replace("!isSafe(BASE, full)", "!full"),
])
def test_a_guard_taken_away_in_javascript(new: str) -> None:
    assert _levels("web/files.js", JS_OLD, new) == {GUARD}


@pytest.mark.parametrize("new", [
    HEAD + "    if not full.startswith(BASE):\n        raise Forbidden()\n" + TAIL,
    HEAD + "    if not is_safe(BASE, full):\n        raise PermissionError(full)\n" + TAIL,
    HEAD + "    if not is_safe(BASE, full):\n        if strict:\n            raise Forbidden()\n"
    "        return None\n" + TAIL,
    HEAD + "    ensure_safe(BASE, full)\n    is_safe(BASE, full)\n" + TAIL,
    HEAD + "    if '..' in full:\n        raise Forbidden()\n" + TAIL,
    "def other(path):\n    return 1\n",
])
def test_near_the_guard_kept_or_rewritten(new: str) -> None:
    assert _levels("app/files.py", GUARDED + TAIL, new) == set()


def test_a_guard_deleted_by_a_pure_deletion_sits_on_its_removed_line() -> None:
    """Nothing added: the finding is on the removed `if` line (its base number), anchored in
    the new file where the removal sits."""
    [finding] = _guards("app/files.py", GUARDED + TAIL, HEAD + TAIL)
    assert (finding.base_line, finding.start_line) == (3, 3)
    assert "line 3 of the base" in finding.message and "`full`" in finding.message


PASTES = {
    "a Markdown code block": ("docs/notes.md", "# Notes\n\n```python\n"
                              "    if not is_safe(BASE, full):\n        raise Forbidden()\n```\n"),
    "a docstring": ("app/helpers.py", 'def helper():\n    """How to guard:\n\n'
                    "    if not is_safe(BASE, full):\n        raise Forbidden()\n"
                    '    """\n'),
    "comments": ("app/helpers.py", "# if not is_safe(BASE, full):\n#     raise Forbidden()\n"),
    "another language": ("web/guard.js", "    if not is_safe(BASE, full):\n"
                         "        raise Forbidden()\n"),
    "a line without its exit": ("app/helpers.py", "def helper(full):\n"
                                "    if not is_safe(BASE, full):\n        pass\n"),
}


@pytest.mark.parametrize("where", list(PASTES))
def test_the_guard_pasted_elsewhere_is_not_moved(where: str) -> None:
    """A guard's lines count as moved only as code, with their exit, in a file of the same
    language: pasted into a page, a docstring, comments or another language they are text."""
    path, pasted = PASTES[where]
    old, new = GUARDED + TAIL, HEAD + TAIL
    diff = make_diff("app/files.py", new, old) + make_diff(path, pasted)
    texts = {"app/files.py": new, path: pasted}
    result = run_rules(parse_units(diff), texts.get, Config())
    assert [f.rule_id for f in result.findings if f.file_path == "app/files.py"] == [
        "guard-removed"]


def test_near_the_guard_moved_as_code() -> None:
    moved = "def helper(full):\n    if not is_safe(BASE, full):\n        raise Forbidden()\n"
    old, new = GUARDED + TAIL, HEAD + "    helper(full)\n" + TAIL
    diff = make_diff("app/files.py", new, old) + make_diff("app/helpers.py", moved)
    texts = {"app/files.py": new, "app/helpers.py": moved}
    assert run_rules(parse_units(diff), texts.get, Config()).findings == ()


@pytest.mark.parametrize("cosmetic", ["    x{i} = escape( v{i} )\n",
                                      "    x{i} = html.escape(v{i})\n",
                                      "    x{i} = escape(v{i})  # checked\n"])
def test_cosmetic_edits_spend_nothing(cosmetic: str) -> None:
    """Sixty guarded lines reformatted before the real removal: each is still guarded and
    spends nothing of the hunk's budget, so the removal after them is reported."""
    old = ("def f(name):\n" + "".join(f"    x{i} = escape(v{i})\n" for i in range(60))
           + "    y = escape(name)\n    return y\n")
    new = ("def f(name):\n" + "".join(cosmetic.format(i=i) for i in range(60))
           + "    y = name\n    return y\n")
    found = _guards("app/page.py", old, new)
    assert [(f.start_line, "`name`" in f.message) for f in found] == [(62, True)]


def test_a_guard_removed_next_to_a_line_padded_past_the_limit() -> None:
    """A long line is read as its code: padding the added line does not hide that it keeps
    the value without its guard."""
    old = "def f(name):\n    return escape(name)\n"
    new = "def f(name):\n    return name  # " + "x" * 1500 + "\n"
    assert _levels("app/page.py", old, new) == {GUARD}


def _deleting(repo: GitFixture) -> tuple[str, str]:
    repo.write("app/files.py", GUARDED + TAIL)
    base = repo.commit("base")
    repo.write("app/files.py", HEAD + TAIL)
    repo.commit("drop the guard")
    return base, "HEAD"


def test_the_terminal_json_and_sarif_name_the_base_line(
        repo: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    base, head = _deleting(repo)
    args = ["--repo", str(repo.root), "--mode", "pr", "--base", base, "--head", head,
            "--offline"]
    assert main([*args, "--format", "json"]) == 0
    [finding] = json.loads(capsys.readouterr().out)["findings"]
    assert (finding["rule_id"], finding["base_line"], finding["start_line"]) == (
        "guard-removed", 3, 3)
    main([*args, "--format", "text"])
    assert "(removed line 3 of the base)" in capsys.readouterr().out
    main([*args, "--format", "sarif"])
    [result] = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    assert result["properties"]["baseLine"] == 3
    assert "line 3 of the base" in result["message"]["text"]
