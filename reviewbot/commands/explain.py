"""`reviewbot explain [RUN_DIR]`: a finished run's coverage and decisions, from its artifacts."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import cast

from reviewbot.errors import ArtifactError
from reviewbot.report import display_path
from reviewbot.report.quietened import text_lines
from reviewbot.run.artifacts import STEPS, load_artifact
from reviewbot.schema.findings import RulesResult
from reviewbot.schema.runs import RunReport
from reviewbot.schema.units import DiffResult, ReviewUnit
from reviewbot.text.words import counted

REPORT = "step9_report.json"


def explain(args: argparse.Namespace) -> int:
    if args.run_dir is not None and not args.run_dir.is_dir():
        raise ArtifactError(f"{args.run_dir} is not a folder; pass a run folder (they are in "
                            ".reviewbot/runs unless configured).")
    run_dir = args.run_dir or newest_run(default_runs_folder())
    # File names, notes and tags come from the reviewed repository: escaped, one line each.
    print("\n".join(display_path(line) for line in explain_lines(run_dir)))
    return 0


def default_runs_folder() -> Path:
    """The output folder of the repository here (its config's, else .reviewbot/runs)."""
    from reviewbot.config import load_config
    from reviewbot.errors import GitError
    from reviewbot.locations import DEFAULT_RUNS
    from reviewbot.repo.git import open_repo
    from reviewbot.store.paths import runs_folder

    try:
        root = open_repo(Path()).root
    except GitError:
        return DEFAULT_RUNS
    return runs_folder(root, load_config(root).output_dir)


def newest_run(runs: Path) -> Path:
    """The newest run that finished (wrote its report); a crashed run's folder is skipped."""
    folders = sorted(p for p in runs.glob("*") if p.is_dir()) if runs.is_dir() else []
    finished = [p for p in folders if (p / REPORT).is_file()]
    if not finished:
        unfinished = f" ({len(folders)} unfinished)" if folders else ""
        raise ArtifactError(f"no finished runs in {runs}{unfinished}; run reviewbot first, "
                            "or pass a run folder.")
    return finished[-1]


def explain_lines(run_dir: Path) -> list[str]:
    diff = cast(DiffResult, load_artifact(run_dir / "step1_diff.json", "diff"))
    rules = cast(RulesResult, load_artifact(run_dir / "step2_rules.json", "rules"))
    report = cast(RunReport, load_artifact(run_dir / "step9_report.json", "report"))
    request = diff.request
    if request.mode == "pr" and request.base_is_root:
        against = f"the empty tree (every commit up to {request.head or 'HEAD'}: a first push)"
    elif request.mode == "pr":
        against = f"{request.base}...{request.head or 'HEAD'}"
    else:
        against = diff.base_branch or "HEAD"
    lines = [
        f"run {report.run_id}: {request.mode} review against {against} "
        f"(base {diff.base_rev[:12]})",
        f"coverage: {counted(len(rules.units), 'unit')} in "
        f"{counted(report.stats.files, 'file')} reviewed, "
        f"{rules.ignored_units} ignored by config; "
        f"+{report.stats.added_lines} -{report.stats.removed_lines} lines",
        "priority: " + _counts(u.agent_decision.priority for u in rules.units),
        "context level: " + _counts(u.rule_context_level for u in rules.units),
        "tags: " + (_counts(t for u in rules.units for t in u.tags) or "none"),
        "findings: " + ", ".join(f"{n} {level}" for level, n in report.stats.findings.items()),
        *text_lines(report),
        "",
        "units:",
    ]
    for unit in sorted(rules.units, key=_priority_order):
        lines += _unit_lines(unit)
    written = [f"step{s}_{name}.json" for name, (s, _) in STEPS.items()
               if (run_dir / f"step{s}_{name}.json").exists()]
    lines += ["", f"artifacts in {run_dir}: {', '.join(written)}"]
    return lines


def _unit_lines(unit: ReviewUnit) -> list[str]:
    where = unit.line_numbers.new_compact or unit.line_numbers.old_compact or "whole file"
    tags = f" [{', '.join(unit.tags)}]" if unit.tags else ""
    lines = [f"  {unit.file_path} {where}  {unit.patch_type}  {unit.agent_decision.priority} "
             f"priority, {unit.rule_context_level}, confidence {unit.rule_confidence:.2f}{tags}"]
    if unit.rule_notes:
        lines.append(f"      why: {'; '.join(unit.rule_notes)}")
    if unit.rule_extra_requests:
        asks = [r.type + (f"({r.details})" if r.details else "") for r in unit.rule_extra_requests]
        lines.append(f"      context to fetch: {', '.join(asks)}")
    return lines


def _priority_order(unit: ReviewUnit) -> tuple[int, str]:
    return ({"high": 0, "medium": 1, "low": 2}[unit.agent_decision.priority], unit.file_path)


def _counts(values: object) -> str:
    counted = Counter(cast("list[str]", values))
    return ", ".join(f"{key} {n}" for key, n in counted.most_common())
