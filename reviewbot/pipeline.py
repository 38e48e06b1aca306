"""The stages of docs/ARCHITECTURE.md run in order, each one's output written as an artifact."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from reviewbot.artifacts import RunDir, create_run_dir, new_run_id
from reviewbot.config import Config
from reviewbot.context import build_bundle
from reviewbot.context.sources import RepoSource
from reviewbot.diff import collect, new_side_reader
from reviewbot.fusion import fuse
from reviewbot.git import GitRepo
from reviewbot.index import build_planner_index, build_review_index
from reviewbot.model import StructuredCaller
from reviewbot.planner import plan
from reviewbot.report import clip_code
from reviewbot.rules import run_rules
from reviewbot.rules.secrets import secret_values
from reviewbot.schema import (
    SEVERITY_RANK,
    ChangeRequest,
    DiffResult,
    Finding,
    FusedPlan,
    ModelCallLog,
    ReviewIndex,
    ReviewUnit,
    RunReport,
    RunStats,
    Severity,
)

Progress = Callable[[str], None]


def _silent(message: str) -> None:
    del message


@dataclass(frozen=True)
class ReviewOutcome:
    report: RunReport
    run_dir: RunDir
    diff: DiffResult
    index: ReviewIndex
    fused: FusedPlan
    # (path, line) -> new-side text of the lines findings point at (secrets left out).
    code: dict[tuple[str, int], str]


def run_review(repo: GitRepo, request: ChangeRequest, config: Config, output_dir: Path,
               progress: Progress = _silent, caller: StructuredCaller | None = None,
               notify: Progress = _silent) -> ReviewOutcome:
    started = time.monotonic()
    now = datetime.now(UTC)
    run_dir = create_run_dir(output_dir, new_run_id(now), config.output_origin)

    progress("reading the change")
    diff = collect(repo, request)
    run_dir.write("diff", diff)

    progress(f"checking {len(diff.units)} units")
    rules = run_rules(diff.units, new_side_reader(repo, diff), config, diff.history)
    run_dir.write("rules", rules)

    reviewed = diff.model_copy(update={"units": rules.units})
    index = build_review_index(reviewed, timestamp=now.isoformat(timespec="seconds"))
    run_dir.write("review_index", index)
    planner_index = build_planner_index(index)
    run_dir.write("planner_index", planner_index)

    progress("planning" + (" with the model" if caller else ""))
    llm_plan = plan(index, planner_index, caller)
    run_dir.write("llm_plan", llm_plan)
    for notice in llm_plan.notices:
        notify(notice)
    fused = fuse(rules.units, llm_plan)
    run_dir.write("fused_plan", fused)

    progress("gathering context")
    bundle = build_bundle(fused, rules.units, rules.findings, RepoSource(repo, diff), config,
                          secret_values(rules.units, rules.findings))
    run_dir.write("context_bundle", bundle)
    if caller is not None:
        run_dir.write("model_calls", ModelCallLog(calls=tuple(caller.calls)))

    findings = rules.findings
    report = RunReport(
        run_id=run_dir.run_id,
        findings=findings,
        units=index.units,
        stats=_stats(index, findings, started),
    )
    run_dir.write("report", report)
    return ReviewOutcome(report=report, run_dir=run_dir, diff=diff, index=index, fused=fused,
                         code=finding_code(rules.units, findings))


def finding_code(units: Iterable[ReviewUnit],
                 findings: Iterable[Finding]) -> dict[tuple[str, int], str]:
    """The added lines findings point at, for reporters to show. Never a secret's line."""
    def lines(kept: Iterable[Finding]) -> set[tuple[str, int]]:
        return {(f.file_path, n) for f in kept for n in range(f.start_line, f.end_line + 1)}

    findings = list(findings)
    wanted = lines(findings) - lines(f for f in findings if f.category == "secrets")
    code: dict[tuple[str, int], str] = {}
    for unit in units:
        for line in unit.hunk.added() if unit.hunk else ():
            key = (unit.file_path, line.new_lineno or 0)
            if key in wanted:
                code[key] = clip_code(line.text.rstrip("\r"))
    return code


def fails(findings: tuple[Finding, ...], fail_level: Severity) -> bool:
    """Whether any finding is at or above the level that fails the run."""
    threshold = SEVERITY_RANK[fail_level]
    return any(SEVERITY_RANK[f.severity] >= threshold for f in findings)


def _stats(index: ReviewIndex, findings: tuple[Finding, ...], started: float) -> RunStats:
    by_severity = Counter(f.severity for f in findings)
    return RunStats(
        files=index.review_metadata.total_files,
        units=index.review_metadata.total_changes,
        added_lines=index.summary.total_lines.added,
        removed_lines=index.summary.total_lines.removed,
        findings={level: by_severity.get(level, 0) for level in ("error", "warning", "info")},
        duration_ms=round((time.monotonic() - started) * 1000),
    )
