"""The author's own config in the hook: the repository's file is read from the work tree
there, so whatever it quietens is the change's word unless HEAD (the hook's base) holds the
file as it is, whether the edit is staged, unstaged or never committed."""

from __future__ import annotations

import json

import pytest

from reviewbot.cli import main
from tests.conftest import GitFixture

INJECTION = 'import os\n\n\ndef clean(name):\n    os.system("rm -rf /tmp/" + name)\n'
IGNORE = 'ignore = ["app/*"]\n'
TABLE = '[project]\nname = "x"\n\n[tool.reviewbot]\n' + IGNORE


@pytest.mark.parametrize(("at_head", "staged", "unstaged", "decided_by"), [
    ({}, {}, {".reviewbot.toml": IGNORE}, "change"),  # never committed
    ({".reviewbot.toml": 'fail_level = "error"\n'}, {}, {".reviewbot.toml": IGNORE}, "change"),
    ({"pyproject.toml": '[project]\nname = "x"\n'}, {}, {"pyproject.toml": TABLE}, "change"),
    ({}, {".reviewbot.toml": IGNORE}, {}, "change"),
    # Near misses: the file as HEAD holds it is the base's, staged beside the change or not.
    ({".reviewbot.toml": IGNORE}, {}, {}, "base"),
    ({"pyproject.toml": TABLE}, {"README.md": "x\n"}, {}, "base"),
])
def test_a_config_the_work_tree_holds_is_the_changes_unless_head_has_it(
        repo: GitFixture, capsys: pytest.CaptureFixture[str], at_head: dict[str, str],
        staged: dict[str, str], unstaged: dict[str, str], decided_by: str) -> None:
    """An `ignore` the hook reads from an untracked or unstaged `.reviewbot.toml` (or
    pyproject table) quietens the staged injection, and says the change decided it: the
    base, HEAD, does not hold it."""
    for path, text in at_head.items():
        repo.write(path, text)
    repo.commit("base")
    for path, text in {**staged, "app/h.py": INJECTION}.items():
        repo.write(path, text)
    repo.stage()
    for path, text in unstaged.items():
        repo.write(path, text)
    main(["--repo", str(repo.root), "--offline", "--mode", "staged", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["findings"] == []
    assert [(q["finding"]["rule_id"], q["kind"], q["decided_by"]) for q in doc["quieted"]] == [
        ("python.shell-injection", "ignore", decided_by)]


def test_an_error_the_changes_config_quietens_is_said_first(
        repo: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    """Like a suppression the change adds, an error its own config keeps from being reported
    is named first, with its file and line; the base's is counted only."""
    repo.commit("base")
    repo.write("app/h.py", INJECTION)
    repo.stage()
    repo.write(".reviewbot.toml", '[rules]\n"python.shell-injection" = "off"\n')
    assert main(["--repo", str(repo.root), "--offline", "--mode", "staged"]) == 0
    out = capsys.readouterr().out
    assert "quietened by the change: app/h.py:5 error python.shell-injection (a rule " \
           "setting" in out
    repo.commit("config")
    repo.write("app/g.py", INJECTION)
    repo.stage()
    assert main(["--repo", str(repo.root), "--offline", "--mode", "staged"]) == 0
    out = capsys.readouterr().out
    assert "quietened by the change" not in out
    assert "quietened: 1 by the base (a rule setting: 1 not reported)" in out
