"""The inventory of quietenings (tests/attacks/__init__.py) names real tests."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.attacks import QUIETENINGS

HERE = Path(__file__).parent


def _tests_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {node.name for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def test_every_quietening_names_a_test_that_exists() -> None:
    """Each place where a tag or a classification lowers or skips a rule has a test where
    the change tries to trigger it: a renamed or deleted test cannot leave one untried."""
    missing = []
    for what, where in QUIETENINGS.items():
        file, _, name = where.partition("::")
        path = (HERE / file).resolve()
        if not path.is_file() or (name and name not in _tests_in(path)):
            missing.append(f"{what}: {where}")
    assert missing == []
