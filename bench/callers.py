"""Callers of changed functions on real changes: are the files that call them in the bundle,
and what does the bundle cost next to sending the files in full?

The changes are the Python release pairs of bench/corpus.py plus Django 4.2.10 -> 5.0.
For every unit whose rules ask for callers (a changed signature, a removed or moved
definition), the truth is every Python file of the new release with a call of the name in
its syntax tree (`name(...)`, `obj.name(...)`), parsed with `ast`, independent of the
search reviewbot uses. Names called from more than MAX_TRUTH_FILES files (`get`, `run`)
are left out and counted: no reviewer reads 200 call sites of `get`.

Compared: the files among the bundle's call sites (the rules' plan, default budgets), and
the files a plain `git grep -l "NAME("` lists. Token ratio: the unit's bundle against the
changed file plus every file that names the symbol, in full.

    python bench/callers.py [--cache bench/.cache] [--package NAME ...]
"""

from __future__ import annotations

import argparse
import ast
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from corpus import PAIRS, add_package_option, only, release_repo

from reviewbot.code.path_kinds import path_tags
from reviewbot.config import Config
from reviewbot.context import build_item
from reviewbot.context.budget import estimate_tokens
from reviewbot.diff.parse import collect
from reviewbot.plan.fusion import fuse
from reviewbot.plan.indexes import build_planner_index, build_review_index
from reviewbot.plan.planner import plan
from reviewbot.repo.git import open_repo
from reviewbot.repo.source import RepoSource
from reviewbot.rules import run_rules
from reviewbot.schema.units import ChangeRequest

MAX_TRUTH_FILES = 50
CHANGES = (*((p[1], p[2], p[3]) for p in PAIRS if p[0] == "pypi"), ("django", "4.2.10", "5.0"))
_NOISE = frozenset({"vendored", "generated"})


@dataclass
class Symbol:
    change: str
    name: str
    truth: set[str]
    ours: set[str]
    grep: set[str]


@dataclass
class UnitCost:
    bundle_tokens: int
    full_tokens: int


def calls_by_file(root: Path) -> dict[str, set[str]]:
    """Every Python file's called names (the last part of the callee)."""
    found: dict[str, set[str]] = {}
    for path in root.rglob("*.py"):
        relative = path.relative_to(root).as_posix()
        if ".git/" in relative or _NOISE & set(path_tags(relative)):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError):
            continue
        found[relative] = {
            node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            for node in ast.walk(tree) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name | ast.Attribute)}
    return found


def grep_files(root: Path, needle: str, *, word: bool = False) -> set[str]:
    out = subprocess.run(["git", "grep", "-l", "-F", *(["-w"] if word else []), needle, "HEAD",
                          "--", "*.py"], cwd=root, capture_output=True, text=True, check=False)
    return {line.split(":", 1)[1] for line in out.stdout.splitlines() if ":" in line}


def review_change(package: str, old: str, new: str, cache: Path,
                  work: Path) -> tuple[list[Symbol], list[UnitCost], int]:
    root = release_repo("pypi", package, old, new, cache, work / f"{package}-{new}")
    repo = open_repo(root)
    diff = collect(repo, ChangeRequest(mode="pr", base="HEAD~1"))
    source = RepoSource(repo, diff)
    rules = run_rules(diff.units, source.rules_text, Config())
    index = build_review_index(diff.replace(units=rules.units), "bench")
    fused = {i.unit_id: i for i in fuse(rules.units, plan(index, build_planner_index(index),
                                                           None)).plan}
    calls = calls_by_file(root)
    symbols: list[Symbol] = []
    costs: list[UnitCost] = []
    ambiguous = 0
    budget = Config().limits.context_unit_tokens
    for unit in rules.units:
        planned = fused.get(unit.unit_id)
        names = [r.symbol for r in planned.extra_requests
                 if r.type == "search_callers" and r.symbol] if planned else []
        if unit.language != "python" or not names or planned is None:
            continue
        item = build_item(unit, planned, [], source, budget)
        naming = {unit.file_path}.union(*(grep_files(root, n, word=True) for n in names))
        costs.append(UnitCost(item.tokens, sum(estimate_tokens(source.new_text(p) or "")
                                               for p in naming)))
        for name in names:
            truth = {path for path, called in calls.items() if name in called}
            if len(truth) > MAX_TRUTH_FILES:
                ambiguous += 1
                continue
            # This name's call sites alone (the unit's item merges every name's).
            alone = planned.replace(extra_requests=tuple(
                r for r in planned.extra_requests
                if r.type != "search_callers" or r.symbol == name))
            ours = {c.file_path for c in build_item(unit, alone, [], source, budget).callers}
            symbols.append(Symbol(change=f"{package} {old} -> {new}", name=name, truth=truth,
                                  ours=ours, grep=grep_files(root, f"{name}(")))
    return symbols, costs, ambiguous


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path(__file__).parent / ".cache")
    add_package_option(parser)
    args = parser.parse_args()
    changes = only(CHANGES, lambda change: change[0], args.packages)
    work = Path(tempfile.mkdtemp(prefix="reviewbot-callers-"))
    symbols: list[Symbol] = []
    costs: list[UnitCost] = []
    ambiguous = 0
    try:
        for package, old, new in changes:
            print(f"{package} {old} -> {new} ...", file=sys.stderr)
            found, cost, skipped = review_change(package, old, new, args.cache, work)
            symbols += found
            costs += cost
            ambiguous += skipped
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with_callers = [s for s in symbols if s.truth]
    truth = sum(len(s.truth) for s in with_callers)
    ours = sum(len(s.truth & s.ours) for s in with_callers)
    grep = sum(len(s.truth & s.grep) for s in with_callers)
    print(f"{len(symbols)} changed or removed functions in {len(changes)} changes "
          f"({len(with_callers)} with callers; {ambiguous} names called from more than "
          f"{MAX_TRUTH_FILES} files left out)")
    print("| measure | reviewbot bundle | git grep -l 'NAME(' |")
    print("| --- | ---: | ---: |")
    print(f"| caller files found (of {truth}) | {ours} ({100 * ours / max(truth, 1):.0f}%) | "
          f"{grep} ({100 * grep / max(truth, 1):.0f}%) |")
    extra = sum(len(s.ours - s.truth) for s in with_callers)
    extra_grep = sum(len(s.grep - s.truth) for s in with_callers)
    print(f"| files listed that do not call it | {extra} | {extra_grep} |")
    tokens = sum(c.bundle_tokens for c in costs)
    full = sum(c.full_tokens for c in costs)
    print(f"| tokens of {len(costs)} units: bundle / (changed file + files naming the "
          f"symbols, in full) | {tokens:,} / {full:,} = {tokens / max(full, 1):.2f} | |")
    for s in with_callers:
        missed = sorted(s.truth - s.ours)
        if missed:
            print(f"  missed  {s.change} {s.name}: {', '.join(missed[:5])}"
                  + (f" (+{len(missed) - 5})" if len(missed) > 5 else ""))


if __name__ == "__main__":
    main()
