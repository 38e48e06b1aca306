"""The floors of docs/ARCHITECTURE.md hold in the code: every import between reviewbot's
packages and root modules runs down a floor, never up or across one, and every package and
root module stands on exactly one floor. The floors are read from the doc itself, so the
doc and the code cannot drift apart in silence."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import reviewbot

PACKAGE = Path(reviewbot.__file__).parent
DOC = PACKAGE.parent / "docs" / "ARCHITECTURE.md"


def floors(doc: str) -> dict[str, int]:
    """Package or root module -> its floor (0 the top), from the doc's `floors` block."""
    block = re.search(r"```floors\n(.*?)```", doc, re.S)
    assert block is not None, f"{DOC} has no ```floors block"
    found: dict[str, int] = {}
    for number, line in enumerate(line for line in block.group(1).splitlines() if line.strip()):
        names = line.split("|", 1)[0].split()
        for name in names:
            assert name not in found, f"{name} stands on two floors"
            found[name] = number
    return found


def unit_of(module: str) -> str:
    """The package or root module a dotted module name belongs to (`__init__`: the root
    package itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _source_units() -> dict[Path, str]:
    return {path: unit_of(".".join(("reviewbot", *path.relative_to(PACKAGE).with_suffix("").parts)))
            for path in PACKAGE.rglob("*.py")}


def _module(path: Path) -> tuple[str, bool]:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def imported(path: Path) -> list[tuple[int, str]]:
    """Every reviewbot module a file imports (at the top, in a function, for type checking
    only), as (line, dotted name); `from reviewbot import x` names x."""
    module, is_package = _module(path)
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = module.split(".") if is_package else module.split(".")[:-1]
                base = ".".join([*here[:len(here) - node.level + 1], *filter(None, [node.module])])
            if base == "reviewbot":
                found += [(node.lineno, f"reviewbot.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, base))
    return [(line, name) for line, name in found if name.split(".")[0] == "reviewbot"]


def _target(name: str) -> str:
    """The unit an imported name lands in: `reviewbot.__version__` is the root package."""
    unit = unit_of(name)
    exists = (PACKAGE / unit).is_dir() or (PACKAGE / f"{unit}.py").is_file()
    return unit if exists else "__init__"


def wrong_imports(floor: dict[str, int]) -> list[str]:
    wrong = []
    for path, unit in sorted(_source_units().items()):
        for line, name in imported(path):
            target = _target(name)
            if target == unit or target not in floor or unit not in floor:
                continue
            if floor[target] <= floor[unit]:
                way = "up" if floor[target] < floor[unit] else "across"
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {unit} imports "
                             f"{name}, {way} a floor")
    return wrong


def test_every_package_stands_on_one_floor() -> None:
    floor = floors(DOC.read_text(encoding="utf-8"))
    units = set(_source_units().values())
    assert sorted(units - floor.keys()) == [], "packages or root modules on no floor of the doc"
    assert sorted(floor.keys() - units) == [], "floors of the doc name what does not exist"


def test_no_import_runs_up_or_across_a_floor() -> None:
    assert wrong_imports(floors(DOC.read_text(encoding="utf-8"))) == []


@pytest.mark.parametrize(("source", "names"), [
    ("from reviewbot.run.pipeline import run_review\n", ["reviewbot.run.pipeline"]),
    ("def f():\n    from reviewbot import __version__\n", ["reviewbot.__version__"]),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from reviewbot.report import x\n",
     ["reviewbot.report"]),
    ("from ..run import pipeline\n", ["reviewbot.run"]),
    ("from . import tagging\n", ["reviewbot.rules"]),
    ("import reviewbot.store.cache\nimport os\n", ["reviewbot.store.cache"]),
])
def test_every_shape_of_import_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       source: str, names: list[str]) -> None:
    """An import the check could not see would let a floor erode: relative, local and
    type-checking imports are read too."""
    package = tmp_path / "reviewbot"
    (package / "rules").mkdir(parents=True)
    path = package / "rules" / "probe.py"
    path.write_text(source)
    monkeypatch.setattr(f"{__name__}.PACKAGE", package)
    assert [name for _, name in imported(path)] == names


def test_an_upward_import_is_caught() -> None:
    """The check finds what it is for: a stage importing the conductor above it."""
    floor = floors(DOC.read_text(encoding="utf-8"))
    assert floor["rules"] > floor["run"]
    wrong = [f for f in wrong_imports({**floor, "run": floor["rules"] + 1})
             if " imports reviewbot.rules" in f]
    assert wrong and all(f.startswith("reviewbot/run/") for f in wrong)
