"""The stages of docs/ARCHITECTURE.md as an ordered list, each one's output written as an
artifact, each runnable from the artifacts of the ones before it.

`run_review` runs them all for a change; `rerun` loads a finished run's artifacts up to a
stage and runs the rest again (with another model, say) into a new run folder.
"""

from __future__ import annotations

import time
import traceback
from base64 import b64encode
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import msgspec
from msgspec.structs import replace

from reviewbot.config import Config
from reviewbot.diff.parse import collect
from reviewbot.errors import ArtifactError, UsageError
from reviewbot.levels import SEVERITY_RANK, Severity
from reviewbot.plan.fusion import fuse
from reviewbot.plan.indexes import build_planner_index, build_review_index
from reviewbot.plan.planner import plan
from reviewbot.progress.events import Events
from reviewbot.repo.git import GitRepo
from reviewbot.repo.source import RepoSource
from reviewbot.report import clip_code
from reviewbot.rules import run_rules
from reviewbot.rules.secrets import secret_values
from reviewbot.run.artifacts import RunDir, create_run_dir, load_artifact, new_run_id
from reviewbot.schema.bundles import ContextBundle
from reviewbot.schema.findings import Finding, RulesResult
from reviewbot.schema.plans import FusedPlan, LlmPlan, PlannerIndex, ReviewIndex
from reviewbot.schema.reviews import BOUND_STOPS, ReviewResult, VerifiedFindings
from reviewbot.schema.runs import ChangeDescription, ModelStats, RunReport, RunStats
from reviewbot.schema.units import ChangeRequest, DiffResult, ReviewUnit
from reviewbot.store.cache import ResultCache
from reviewbot.store.paths import git_dir_problem, private_folders
from reviewbot.text.private_keys import block_lines
from reviewbot.text.redaction import Redactor

if TYPE_CHECKING:
    from reviewbot.model import ModelSession


class RunContext(msgspec.Struct, frozen=True):
    """What every stage may use: the repository, the config, where artifacts go, the events,
    the model session (None offline) and the run's redaction pass."""

    repo: GitRepo
    request: ChangeRequest
    config: Config
    run_dir: RunDir
    events: Events
    session: ModelSession | None
    redactor: Redactor
    now: datetime
    started: float
    cache: ResultCache | None = None
    # Build the context bundle offline too (for a later rerun with a model).
    keep_context: bool = False
    _sources: dict[str, RepoSource] = msgspec.field(default_factory=dict)

    def source(self, diff: DiffResult) -> RepoSource:
        """The one reader of the change's files, shared by the stages (its cache too)."""
        key = f"{diff.base_rev}:{diff.head_rev}:{diff.request.mode}"
        if key not in self._sources:
            self._sources[key] = RepoSource(
                self.repo, diff, private=private_folders(self.repo.root, self.run_dir.path.parent))
        return self._sources[key]


class RunState(msgspec.Struct, frozen=True):
    """What the stages have produced so far."""

    diff: DiffResult | None = None
    rules: RulesResult | None = None
    index: ReviewIndex | None = None
    planner_index: PlannerIndex | None = None
    llm_plan: LlmPlan | None = None
    fused: FusedPlan | None = None
    bundle: ContextBundle | None = None
    review: ReviewResult | None = None
    verified: VerifiedFindings | None = None
    report: RunReport | None = None

    def need(self, name: str) -> object:
        value = getattr(self, name)
        if value is None:
            raise ArtifactError(f"the {name} stage has not run")
        return value


StageRun = Callable[[RunContext, RunState], RunState]


class Stage(msgspec.Struct, frozen=True):
    name: str
    # The state fields it fills and the artifacts it writes (the same names, but for index).
    fills: tuple[str, ...]
    artifacts: tuple[str, ...]
    progress: Callable[[RunState], str]
    run: StageRun


def _diff(ctx: RunContext, state: RunState) -> RunState:
    """The change, read. Its artifact is written by the rules stage, once the secrets the
    rules find (a bare high-entropy value only detect-secrets knows) are values the
    redaction pass masks: written here, it would hold them in clear."""
    diff = collect(ctx.repo, ctx.request)
    ctx.redactor.add(_multiline_secrets(diff.units))
    for note in diff.notes:
        ctx.events.notice(note)
    return replace(state, diff=diff)


def _multiline_secrets(units: Iterable[ReviewUnit]) -> set[str]:
    """Lines of private-key blocks on either side of the hunks (one string per line in the
    artifacts, so the pass must know them as values)."""
    found: set[str] = set()
    for unit in units:
        lines = unit.hunk.lines if unit.hunk else ()
        for side in (("add", "ctx"), ("del", "ctx")):
            found |= block_lines([line.text for line in lines if line.kind in side])
    return found


def _rules(ctx: RunContext, state: RunState) -> RunState:
    diff = cast(DiffResult, state.need("diff"))
    source = ctx.source(diff)
    rules = run_rules(diff.units, source.rules_text, ctx.config, diff.history, source,
                      read_old=source.rules_old_text, links=diff.links)
    for note in rules.notes:
        ctx.events.notice(note)
    # From here on, what the rules found is redacted wherever it appears: in every file (one
    # the config ignores too), quietened or not.
    ctx.redactor.add(found_secrets(diff, rules))
    ctx.run_dir.write("diff", diff)
    # The hunks are step 1's: step 2's artifact does not hold them twice (load_state puts
    # them back), which halves the artifacts of a large change.
    ctx.run_dir.write("rules", rules.replace(units=tuple(
        unit.replace(hunk=None) for unit in rules.units)))
    return replace(state, rules=rules)


def found_secrets(diff: DiffResult, rules: RulesResult) -> set[str]:
    return secret_values(diff.units, (*rules.findings, *(q.finding for q in rules.quieted)))


def _index(ctx: RunContext, state: RunState) -> RunState:
    diff = cast(DiffResult, state.need("diff"))
    rules = cast(RulesResult, state.need("rules"))
    reviewed = diff.replace(units=rules.units)
    index = build_review_index(reviewed, timestamp=ctx.now.isoformat(timespec="seconds"))
    planner_index = build_planner_index(index)
    ctx.run_dir.write("review_index", index)
    ctx.run_dir.write("planner_index", planner_index)
    return replace(state, index=index, planner_index=planner_index)


def _plan(ctx: RunContext, state: RunState) -> RunState:
    index = cast(ReviewIndex, state.need("index"))
    llm_plan = plan(index, cast(PlannerIndex, state.need("planner_index")), ctx.session,
                    cache=ctx.cache)
    ctx.run_dir.write("llm_plan", llm_plan)
    for notice in llm_plan.notices:
        ctx.events.notice(notice)
    from_model = sum(1 for source in llm_plan.sources.values() if source == "model")
    ctx.events.emit("planner_update", f"planned {len(llm_plan.plan)} units",
                    units=len(llm_plan.plan), model_units=from_model)
    return replace(state, llm_plan=llm_plan)


def _fuse(ctx: RunContext, state: RunState) -> RunState:
    rules = cast(RulesResult, state.need("rules"))
    fused = fuse(rules.units, cast(LlmPlan, state.need("llm_plan")))
    ctx.run_dir.write("fused_plan", fused)
    return replace(state, fused=fused)


NOT_BUILT = ("offline: no model reads it (--keep-context builds it, or `reviewbot rerun "
             "RUN_DIR --from context`)")


def _context(ctx: RunContext, state: RunState) -> RunState:
    diff = cast(DiffResult, state.need("diff"))
    rules = cast(RulesResult, state.need("rules"))
    if ctx.session is None and not ctx.keep_context:
        # A third of an offline hook's time at scale went into bundles nothing read.
        bundle = ContextBundle(not_built=NOT_BUILT)
        ctx.run_dir.write("context_bundle", bundle)
        return replace(state, bundle=bundle)
    from reviewbot.context import build_bundle  # the offline hook builds none: not imported

    bundle = build_bundle(cast(FusedPlan, state.need("fused")), rules.units, rules.findings,
                          ctx.source(diff), ctx.config, ctx.redactor)
    ctx.run_dir.write("context_bundle", bundle)
    return replace(state, bundle=bundle)


def _review(ctx: RunContext, state: RunState) -> RunState:
    diff = cast(DiffResult, state.need("diff"))
    rules = cast(RulesResult, state.need("rules"))
    bundle = cast(ContextBundle, state.need("bundle"))
    if ctx.session is None:  # offline: say why no unit had a model review, load no agent
        fused = cast(FusedPlan, state.need("fused"))
        kept = {item.unit_id for item in fused.plan if not item.skip_review}
        review = ReviewResult(skipped={u.unit_id: "offline" if u.unit_id in kept
                                       else "skipped_by_plan" for u in rules.units})
        ctx.run_dir.write("review", review)
        return replace(state, review=review)
    from reviewbot.review.stage import review_units

    review = review_units(ctx.session, rules.units, bundle, rules.findings, ctx.source(diff),
                          ctx.config, ctx.events, ctx.cache)
    ctx.run_dir.write("review", review)
    return replace(state, review=review)


def _verify(ctx: RunContext, state: RunState) -> RunState:
    diff = cast(DiffResult, state.need("diff"))
    rules = cast(RulesResult, state.need("rules"))
    review = cast(ReviewResult, state.need("review"))
    if not review.reviews:
        verified = VerifiedFindings()
        ctx.run_dir.write("verified", verified)
        return replace(state, verified=verified)
    from reviewbot.review.stage import verify_findings

    verified = verify_findings(review, rules.units,
                               rules.findings, ctx.source(diff), ctx.session,
                               ctx.cache)
    ctx.run_dir.write("verified", verified)
    return replace(state, verified=verified)


def _report(ctx: RunContext, state: RunState) -> RunState:
    index = cast(ReviewIndex, state.need("index"))
    rules = cast(RulesResult, state.need("rules"))
    verified = cast(VerifiedFindings, state.need("verified"))
    findings = tuple(sorted((*rules.findings, *verified.findings),
                            key=lambda f: (f.file_path, f.start_line, f.rule_id)))
    description = _description(ctx, state)
    if ctx.session is not None:
        ctx.run_dir.write("model_calls", ctx.session.ledger.log())
    stats = _stats(index, findings, ctx.started).replace(
        model=model_stats(state, ctx.session, ctx.config), ignored_units=rules.ignored_units,
        untracked_files=_left_out(ctx, index))
    report = RunReport(run_id=ctx.run_dir.run_id, findings=findings, units=index.units,
                       stats=stats, description=description, quieted=rules.quieted,
                       quieted_files=rules.quieted_files,
                       path_bytes=_path_bytes(cast(DiffResult, state.need("diff"))))
    ctx.run_dir.write("report", report)
    ctx.events.emit("final_report", f"{len(findings)} findings", findings=len(findings),
                    run_dir=str(ctx.run_dir.path))
    return replace(state, report=report)


def _path_bytes(diff: DiffResult) -> dict[str, str]:
    return {shown: b64encode(bytes.fromhex(raw)).decode() for shown, raw in
            diff.raw_paths.items()}


def _description(ctx: RunContext, state: RunState) -> ChangeDescription | None:
    """With a model, on a pull request: what the change does, for the walkthrough. A failure
    costs the walkthrough its words, never the report."""
    diff = state.diff
    if ctx.session is None or diff is None or diff.request.mode != "pr" or not diff.units:
        return None
    if state.review is not None and state.review.description is not None:
        return state.review.description  # the one call that read the whole change gave it
    from reviewbot.review.describe import describe_change

    try:
        return describe_change(ctx.session, diff.units, ctx.cache)
    except Exception as exc:  # the walkthrough is built without it
        ctx.events.notice(f"the model's description of the change failed "
                          f"({type(exc).__name__}); the walkthrough has the run's facts only")
        return None


def _units(state: RunState) -> int:
    return len(state.diff.units) if state.diff else 0


STAGES: tuple[Stage, ...] = (
    Stage("diff", ("diff",), ("diff",), lambda s: "reading the change", _diff),
    Stage("rules", ("rules",), ("rules",), lambda s: f"checking {_units(s)} units", _rules),
    Stage("index", ("index", "planner_index"), ("review_index", "planner_index"),
          lambda s: "indexing", _index),
    Stage("plan", ("llm_plan",), ("llm_plan",), lambda s: "planning", _plan),
    Stage("fuse", ("fused",), ("fused_plan",), lambda s: "fusing the plans", _fuse),
    Stage("context", ("bundle",), ("context_bundle",), lambda s: "gathering context",
          _context),
    Stage("review", ("review",), ("review",), lambda s: "reviewing with the model", _review),
    Stage("verify", ("verified",), ("verified",), lambda s: "verifying findings", _verify),
    Stage("report", ("report",), ("report",), lambda s: "writing the report", _report),
)
STAGE_NAMES = tuple(stage.name for stage in STAGES)
# Stages a finished run can run again from its artifacts (the earlier ones read git).
RERUNNABLE = STAGE_NAMES[STAGE_NAMES.index("plan"):]


class ReviewOutcome(msgspec.Struct, frozen=True):
    report: RunReport
    run_dir: RunDir
    state: RunState
    request: ChangeRequest
    # (path, line) -> new-side text of the lines findings point at (secrets left out).
    code: dict[tuple[str, int], str]


def run_review(repo: GitRepo, request: ChangeRequest, config: Config, output_dir: Path,
               events: Events | None = None, session: ModelSession | None = None,
               redactor: Redactor | None = None, cache: ResultCache | None = None,
               keep_context: bool = False) -> ReviewOutcome:
    ctx = replace(_context_for(repo, request, config, output_dir, events, session, redactor),
                  cache=cache, keep_context=keep_context)
    try:
        return _finish(ctx, run_stages(ctx, RunState()))
    finally:
        ctx.run_dir.close()


def rerun(source: Path, from_stage: str, repo: GitRepo, config: Config, output_dir: Path,
          events: Events | None = None, session: ModelSession | None = None,
          redactor: Redactor | None = None, cache: ResultCache | None = None) -> ReviewOutcome:
    """A finished run's stages from `from_stage` on, again, into a new run folder."""
    if from_stage not in RERUNNABLE:
        raise UsageError(f"--from must be one of {', '.join(RERUNNABLE)}, not {from_stage!r} "
                         "(the earlier stages read git: run a new review for them).")
    state = load_state(source, from_stage)
    unbuilt = state.bundle is not None and state.bundle.not_built is not None
    if unbuilt:  # an offline run kept no bundle: build it from the repository first
        from_stage = "context"
        state = load_state(source, from_stage)
    diff = cast(DiffResult, state.need("diff"))
    ctx = replace(_context_for(repo, diff.request, config, output_dir, events, session,
                               redactor), cache=cache, keep_context=True)
    if unbuilt:
        ctx.events.notice(f"{source.name} kept no context bundle (an offline run): it is "
                          "built again from the repository first")
    try:
        # What the rules found is masked in the copies too (the earlier run's own artifacts
        # were written through its pass; this run's pass must know the same values).
        if state.rules is not None:
            ctx.redactor.add(found_secrets(diff, state.rules))
        for stage in STAGES[:STAGE_NAMES.index(from_stage)]:
            for name in stage.artifacts:
                ctx.run_dir.write(name, load_artifact(source / ctx.run_dir.file(name).name,
                                                      name))
        return _finish(ctx, run_stages(ctx, state, from_stage))
    finally:
        ctx.run_dir.close()


def load_state(run_dir: Path, before: str) -> RunState:
    """The state a run had when `before` started, from its artifacts."""
    if not run_dir.is_dir():
        raise ArtifactError(f"{run_dir} is not a run folder.")
    reader = RunDir(run_id=run_dir.name, path=run_dir)
    fields: dict[str, Any] = {}
    for stage in STAGES[:STAGE_NAMES.index(before)]:
        for field_name, artifact in zip(stage.fills, stage.artifacts, strict=True):
            fields[field_name] = reader.read(artifact)
    if "rules" in fields:
        hunks = {unit.unit_id: unit.hunk for unit in fields["diff"].units}
        fields["rules"] = fields["rules"].replace(units=tuple(
            unit.replace(hunk=hunks.get(unit.unit_id))
            for unit in fields["rules"].units))
    return RunState(**fields)


# The stages between the rules and the report: a failure in one of them (a model's reply no
# check foresaw, a tool call, a file the repository made hostile) costs the run its model
# review, never the rules' findings or the report.
_GUARDED = frozenset({"plan", "fuse", "context", "review", "verify"})


def run_stages(ctx: RunContext, state: RunState, start: str = STAGE_NAMES[0]) -> RunState:
    failed = False
    for stage in STAGES[STAGE_NAMES.index(start):]:
        if failed and stage.name in _GUARDED:
            continue
        ctx.events.emit("stage", stage.progress(state), stage=stage.name)
        if stage.name not in _GUARDED:
            state = stage.run(ctx, state)
            continue
        try:
            state = stage.run(ctx, state)
        except Exception as exc:  # the report must still come
            failed = True
            state = _without_model_review(ctx, state, stage.name, exc)
    return state


def _without_model_review(ctx: RunContext, state: RunState, stage: str,
                          exc: Exception) -> RunState:
    """What the report needs when a stage after the rules failed: no model review, no model
    findings, every unit skipped with the reason. The traceback goes to the run folder."""
    log = ctx.run_dir.write_text("error.log", ctx.redactor.text(traceback.format_exc()))
    where = f" (traceback in {log})" if log else ""
    ctx.events.notice(f"the {stage} stage failed ({type(exc).__name__}); the rules' findings "
                      f"are reported without a model review{where}")
    rules = cast(RulesResult, state.need("rules"))
    review = ReviewResult(skipped=dict.fromkeys((u.unit_id for u in rules.units),
                                                f"{stage}_failed"))
    verified = VerifiedFindings()
    ctx.run_dir.write("review", review)
    ctx.run_dir.write("verified", verified)
    return replace(state, review=review, verified=verified)


def _context_for(repo: GitRepo, request: ChangeRequest, config: Config, output_dir: Path,
                 events: Events | None, session: ModelSession | None,
                 redactor: Redactor | None) -> RunContext:
    """The run's context. One redaction pass for everything: the session's, the caller's,
    or a new one."""
    now = datetime.now(UTC)
    redactor = session.redactor if session is not None else (redactor or Redactor())
    events = events or Events()
    # A folder in the repository that the user did not choose (the default, or the
    # repository's config) must not lead the writes out of it through a committed symlink.
    guarded = not config.output_trusted and output_dir.is_relative_to(repo.root)
    run_dir = create_run_dir(output_dir, new_run_id(now), config.output_origin, redactor,
                             config.keep_runs, inside=repo.root if guarded else None,
                             notify=events.notice, tracked=repo.tracks,
                             in_git=lambda folder: git_dir_problem(folder, repo.root,
                                                                   repo.git_dirs))
    return RunContext(repo=repo, request=request, config=config, run_dir=run_dir,
                      events=events, session=session, redactor=redactor, now=now,
                      started=time.monotonic())


def _finish(ctx: RunContext, state: RunState) -> ReviewOutcome:
    report = cast(RunReport, state.need("report"))
    rules = cast(RulesResult, state.need("rules"))
    # Every file's units (one the config ignores too): a quietened finding's code is shown.
    units = state.diff.units if state.diff is not None else rules.units
    code = {key: ctx.redactor.text(line, literal_bare_values=False)
            for key, line in finding_code(units, (*report.findings, *(
                q.finding for q in report.quieted))).items()}
    return ReviewOutcome(report=report, run_dir=ctx.run_dir, state=state, request=ctx.request,
                         code=code)


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


def fails(findings: tuple[Finding, ...], fail_level: Severity,
          model_findings_block: bool = True) -> bool:
    """Whether any finding that counts is at or above the level that fails the run."""
    threshold = SEVERITY_RANK[fail_level]
    return any(SEVERITY_RANK[f.severity] >= threshold for f in findings
               if f.source == "rule" or model_findings_block)


def model_findings_block(config: Config, request: ChangeRequest) -> bool:
    """Model findings are advisory in the commit hook (staged, working) unless the config
    says otherwise; in pr mode they count like rule findings."""
    if config.model_findings_block is not None:
        return config.model_findings_block
    return request.mode == "pr"


def model_stats(state: RunState, session: ModelSession | None, config: Config) -> ModelStats:
    review = state.review
    reviews = review.reviews if review else ()
    bundle = state.bundle
    # How the units were read: "change" (one call), "tools" (the agent), "structured" (one
    # answer per unit), joined when a run used several ("change+tools").
    ways = "+".join(dict.fromkeys(r.mode for r in reviews))
    stats = ModelStats(
        mode=ways or (review.mode if review else "offline"),
        reviewed_units=sum(len(r.unit_ids) for r in reviews),
        cached_units=sum(len(r.unit_ids) for r in reviews if r.cached),
        partial_units=dict(Counter(r.stop_reason for r in reviews for _ in r.unit_ids
                                   if r.stop_reason in BOUND_STOPS)),
        skipped_units=dict(Counter((review.skipped if review else {}).values())),
        clipped_units=sum(1 for item in (bundle.items if bundle else ()) if not item.complete))
    if session is None:
        return stats
    log = session.ledger.log()
    totals = log.totals
    prices = config.model.prices
    return stats.replace(
        calls=totals.requests, tokens_in=totals.tokens_in,
        tokens_out=totals.tokens_out, cached_tokens=totals.cached_tokens,
        review_seconds=round(sum(c.latency_ms for c in log.calls
                                 if c.purpose == "review") / 1000, 1),
        cost=prices.cost(totals.tokens_in, totals.tokens_out, totals.cached_tokens)
        if prices else None)


def _left_out(ctx: RunContext, index: ReviewIndex) -> int:
    """The untracked files an empty working review did not look at: a new file is untracked
    until it is added, and "nothing to review" must not read as "nothing new"."""
    request = ctx.request
    if (request.mode != "working" or request.include_untracked or request.base_is_root
            or index.units):
        return 0
    return len(ctx.repo.untracked_files())


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
