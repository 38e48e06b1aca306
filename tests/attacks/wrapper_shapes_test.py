"""The pull-request author keeps a project wrapper from being followed: calls into other
project modules made first, to spend a budget of reads; the wrapper's module padded past the
size parsed whole; a decoy definition of the same name (in a string, or a method of another
class). Each twin's call is reported as the plain call is, by the same rule at the same
severity."""

from __future__ import annotations

import pytest

from reviewbot.config import Config
from reviewbot.diff.parse import parse_units
from reviewbot.rules import run_rules
from reviewbot.rules.imported import MAX_MODULE_CHARS
from tests.rules.conftest import make_diff
from tests.rules.wrappers_test import UTILS, Project

CALL = "    utils.run_command(f\"ping -c1 {request.args['h']}\")\n"
VIEW = "from flask import request\nfrom pkg import utils\n{imports}\n\ndef ping():\n{calls}"


def _found(imports: str, calls: str, files: dict[str, str]) -> list[tuple[str, str, int]]:
    new = VIEW.format(imports=imports, calls=calls)
    units = parse_units(make_diff("pkg/views.py", new))
    result = run_rules(units, lambda p: new if p == "pkg/views.py" else None, Config(),
                       project=Project(files))
    return [(f.rule_id, f.severity, f.start_line) for f in result.findings
            if "run_command" in f.message]


DECOYS = 20
TWINS = {
    "calls into other modules first": (
        "".join(f"from pkg import mod{n}\n" for n in range(DECOYS)),
        "".join(f"    mod{n}.run(f'x {{request.args}}')\n" for n in range(DECOYS)),
        {f"pkg/mod{n}.py": "def run(x):\n    return x\n" for n in range(DECOYS)}),
    "the wrapper's module padded past the size parsed whole": (
        "", "", {"pkg/utils.py": UTILS + ("# padding " + "x" * 90 + "\n") * (
            MAX_MODULE_CHARS // 50)}),
    "a padded module with a decoy definition in a string": (
        "", "", {"pkg/utils.py": UTILS + "'''\ndef run_command(command):\n    pass\n'''\n"
                 + "X = '" + "x" * MAX_MODULE_CHARS + "'\n"}),
    "a method of another class by the same name": (
        "", "", {"pkg/utils.py": UTILS + "\n\nclass Quiet:\n"
                 "    def run_command(self, command):\n        return None\n"}),
    "the wrapper handed on by the package's __init__": (
        "", "", {"pkg/utils.py": "from pkg.shell import run_command\n",
                 "pkg/shell.py": UTILS}),
    "handed on twice, relatively": (
        "", "", {"pkg/utils.py": "from .inner import run_command\n",
                 "pkg/inner.py": "from .shell import run_command as run_command\n",
                 "pkg/shell.py": UTILS}),
    "an earlier definition the module replaces": (
        "", "", {"pkg/utils.py": "def run_command(command):\n    return None\n\n\n" + UTILS}),
}


@pytest.mark.parametrize(("imports", "decoys", "files"), TWINS.values(), ids=TWINS.keys())
def test_a_project_wrapper_is_followed_whatever_comes_first(
        imports: str, decoys: str, files: dict[str, str]) -> None:
    plain = _found("", CALL, {"pkg/utils.py": UTILS})
    assert [(rule, severity) for rule, severity, _ in plain] == [
        ("python.shell-injection", "error")]
    found = _found(imports, decoys + CALL, {"pkg/utils.py": UTILS, **files})
    assert [(rule, severity) for rule, severity, _ in found] == [
        ("python.shell-injection", "error")]
