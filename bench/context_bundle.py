"""Context-bundle cost on a large real repository: time for 100 units, and tokens per unit
against sending each unit's whole changed file.

The repository is Django (its release wheel, 3,645 files with translations); the
change is the pull request from one release to the next. The offline pipeline runs up to
fusion, then the bundle is built for 100 Python units the fused plan keeps, taken evenly
across the change: once with the rules' plan, once with every unit also asking for the
callers of the function it changes (as a model's plan may), to price repository search.

    python bench/context_bundle.py [--units 100] [--cache bench/.cache]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import release_repo

from reviewbot.config import Config
from reviewbot.context import build_bundle
from reviewbot.context.budget import estimate_tokens
from reviewbot.diff.parse import collect
from reviewbot.plan.fusion import executable_request, fuse
from reviewbot.plan.indexes import build_planner_index, build_review_index
from reviewbot.plan.planner import plan
from reviewbot.repo.git import open_repo
from reviewbot.repo.source import RepoSource
from reviewbot.rules import run_rules
from reviewbot.schema.findings import RulesResult
from reviewbot.schema.plans import FusedPlan
from reviewbot.schema.units import ChangeRequest, ExtraRequest

OLD, NEW = "4.2.10", "5.0"


def build_repo(work: Path, cache: Path) -> Path:
    return release_repo("pypi", "django", OLD, NEW, cache, work / "django")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=int, default=100)
    parser.add_argument("--cache", type=Path, default=Path(__file__).parent / ".cache")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="reviewbot-bundle-"))
    try:
        root = build_repo(work, args.cache)
        files = int(subprocess.run(["git", "ls-files"], cwd=root, capture_output=True,
                                   text=True, check=True).stdout.count("\n"))
        repo = open_repo(root)
        diff = collect(repo, ChangeRequest(mode="pr", base="HEAD~1"))
        rules = run_rules(diff.units, RepoSource(repo, diff).rules_text, Config())
        index = build_review_index(diff.replace(units=rules.units), "bench")
        fused = fuse(rules.units, plan(index, build_planner_index(index), None))
        languages = {u.unit_id: u.language for u in rules.units}
        code = [i for i in fused.plan if not i.skip_review and languages[i.unit_id] == "python"]
        # Evenly across the change, not just its first files (locale files sort first).
        step = max(len(code) // args.units, 1)
        kept = code[::step][:args.units]
        by_id = {u.unit_id: u for u in rules.units}
        asking = [i.replace(extra_requests=(*i.extra_requests, request))
                  if (request := executable_request(by_id[i.unit_id],
                                                    ExtraRequest(type="search_callers")))
                  else i for i in kept]
        print(f"Django {OLD} -> {NEW}: {files:,} tracked files, {len(diff.units):,} units in "
              f"the change; bundles for {len(kept)} Python units")
        print("| measure | rules' plan | + callers for every unit |")
        print("| --- | ---: | ---: |")
        rows = [measure(FusedPlan(plan=tuple(p)), rules, RepoSource(repo, diff))
                for p in (kept, asking)]
        for label in rows[0]:
            print(f"| {label} | {rows[0][label]} | {rows[1][label]} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(fused: FusedPlan, rules: RulesResult, source: RepoSource) -> dict[str, str]:
    started = time.perf_counter()
    bundle = build_bundle(fused, rules.units, rules.findings, source, Config())
    seconds = time.perf_counter() - started
    by_id = {u.unit_id: u for u in rules.units}
    ours = [i.tokens for i in bundle.items]
    full = [estimate_tokens(source.new_text(by_id[i.unit_id].file_path) or "")
            for i in bundle.items]
    count = max(len(bundle.items), 1)
    return {
        "bundle time": f"{seconds:.2f} s",
        "per unit": f"{1000 * seconds / count:.0f} ms",
        "tokens per unit, bundle (mean / median)":
            f"{statistics.mean(ours):,.0f} / {statistics.median(ours):,.0f}",
        "tokens per unit, whole changed file (mean / median)":
            f"{statistics.mean(full):,.0f} / {statistics.median(full):,.0f}",
        "bundle / whole file": f"{sum(ours) / max(sum(full), 1):.2f}",
        "units with their full planned context": str(bundle.stats.full_context_units),
        "units that got call sites": str(sum(1 for i in bundle.items if i.callers)),
        "call sites found (total)": str(sum(len(i.callers) for i in bundle.items)),
    }


if __name__ == "__main__":
    main()
