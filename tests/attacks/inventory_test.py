"""The inventory of quietenings (tests/attacks/__init__.py) names real tests."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

from reviewbot.schema.findings import QuietKind
from tests.attacks import LONG, QUIETENINGS, RECORDED, REFUSED

HERE = Path(__file__).parent


def _tests_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {node.name for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def test_every_quietening_names_a_test_that_exists() -> None:
    """Each place where a tag or a classification lowers or skips a rule has a test where
    the change tries to trigger it: a renamed or deleted test cannot leave one untried."""
    missing = []
    for what, row in QUIETENINGS.items():
        file, _, name = row.test.partition("::")
        path = (HERE / file).resolve()
        if not path.is_file() or (name and name not in _tests_in(path)):
            missing.append(f"{what}: {row.test}")
    assert missing == []


def test_every_quietening_says_who_decides_it_and_where_it_is_shown() -> None:
    """No quietening in silence: each row names who decides it and where a reviewer sees
    it; a row that removes or lowers findings names the kind the run records them under,
    and every kind the run can record is tried by some row."""
    deciders = {"base", "change", "user", "forge"}
    assert {what for what, row in QUIETENINGS.items()
            if row.decided_by not in deciders or not row.shown} == set()
    assert {what for what, row in QUIETENINGS.items()
            if row.kind is not None and row.shown not in (RECORDED, REFUSED, LONG)
            and not row.shown.startswith(RECORDED)} == set()
    assert set(get_args(QuietKind)) - {row.kind for row in QUIETENINGS.values()} == set()
