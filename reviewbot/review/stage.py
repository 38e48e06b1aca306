"""Steps 7 and 8 as stage functions: the reviews (the agent's conversations and the one-call
reviews, several at once) and the verifier."""

from __future__ import annotations

import os
import threading
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

import msgspec

from reviewbot.config import Config
from reviewbot.context import diff_clipped
from reviewbot.context.search import SearchBudget, Searcher
from reviewbot.diff.lines import DiffIndex
from reviewbot.levels import SEVERITY_RANK
from reviewbot.model.messages import user
from reviewbot.model.pool import run_in_pool
from reviewbot.model.servers import FILE, remember_without_tools, without_tools_since
from reviewbot.model.session import ModelSession
from reviewbot.progress.events import Events
from reviewbot.repo.source import RepoSource
from reviewbot.review.agent import Bounds, Conversation, ToolsUnsupported
from reviewbot.review.change import Batch, ChangeOutcome, OneCall, batches, fits_one_call
from reviewbot.review.prompts import PROMPT_VERSION, Guidance, read_guidance, unit_prompt
from reviewbot.review.route import route
from reviewbot.review.suggest import MAX_SUGGESTIONS, Suggestion, suggest, wants_suggestion
from reviewbot.review.tools import Toolbox
from reviewbot.review.verify import check, dropped, merge, reanchored, to_finding
from reviewbot.schema.bundles import BundleItem, ContextBundle
from reviewbot.schema.findings import Finding
from reviewbot.schema.reviews import (
    BOUND_STOPS,
    Dropped,
    ReviewResult,
    SuggestionStats,
    UnitReview,
    VerifiedFindings,
)
from reviewbot.schema.units import ReviewUnit
from reviewbot.store.cache import ResultCache
from reviewbot.store.paths import user_cache_folder
from reviewbot.text.redaction import redact_strings
from reviewbot.text.words import counted

# A conversation takes a few small units of one file together, up to this much context.
GROUP_TOKENS = 4000
GROUP_UNITS = 3
AGENT_SEARCHES = 60
_PRIORITY = {"high": 0, "medium": 1, "low": 2}
# Why a conversation's units count as not reviewed: the run's bounds stopped it first.
_BUDGET_REASONS = ("call_cap", "deadline", "token_budget")


@dataclass(frozen=True)
class Group:
    units: tuple[ReviewUnit, ...]
    items: tuple[BundleItem, ...]

    @property
    def unit_ids(self) -> tuple[str, ...]:
        return tuple(unit.unit_id for unit in self.units)


def groups(units: Sequence[ReviewUnit], bundle: ContextBundle) -> list[Group]:
    """Bundle items, consecutive ones of a file grouped while small; riskiest first."""
    by_id = {unit.unit_id: unit for unit in units}
    found: list[Group] = []
    for item in bundle.items:
        unit = by_id[item.unit_id]
        last = found[-1] if found else None
        if (last is not None and last.units[0].file_path == unit.file_path
                and len(last.units) < GROUP_UNITS
                and sum(i.tokens for i in last.items) + item.tokens <= GROUP_TOKENS):
            found[-1] = Group((*last.units, unit), (*last.items, item))
        else:
            found.append(Group((unit,), (item,)))
    return sorted(found, key=lambda g: min(_PRIORITY[u.agent_decision.priority]
                                           for u in g.units))


@dataclass
class Reviewer:
    """Step 7 for one run: the mode the server supports, the cache, the conversations (run
    by several workers at once)."""

    session: ModelSession
    source: RepoSource
    config: Config
    events: Events
    index: DiffIndex
    guidance: Guidance
    cache: ResultCache | None = None
    bounds: Bounds = field(default_factory=Bounds)
    mode: str = "tools"

    def __post_init__(self) -> None:
        self._searches = SearchBudget(left=AGENT_SEARCHES)
        self._lock = threading.Lock()
        settings = self.session.settings
        since = without_tools_since(settings.endpoint, settings.model)
        if since is not None and self.mode == "tools":
            self.mode = "structured"
            self.events.notice(f"{settings.model} at {settings.endpoint} refused tool calls "
                               f"({since}): reviewing with one structured answer per unit "
                               f"(delete {user_cache_folder(os.environ) / FILE} to try again)")

    def review(self, group: Group, findings: Mapping[str | None, Sequence[Finding]],
               ) -> UnitReview:
        own = [f for unit_id in group.unit_ids for f in findings.get(unit_id, ())]
        path = group.units[0].file_path
        prompt = unit_prompt(group.units, group.items, own,
                             self.guidance.for_path(self.config, path))
        key = self.session.fingerprint(PROMPT_VERSION, [user(prompt)],
                                       self.guidance.text(), *group.unit_ids)
        cached = self._cached(key)
        if cached is not None:
            return cached
        review = self._converse(group, prompt)
        if self.cache is not None and review.stop_reason == "finished":
            self.cache.put("review", key, redact_strings(review.to_data(),
                                                         self.session.redactor))
        return review

    def _cached(self, key: str) -> UnitReview | None:
        data = self.cache.get("review", key) if self.cache is not None else None
        if data is None:
            return None
        try:
            return UnitReview.from_data(data).replace(cached=True)
        except msgspec.ValidationError:
            return None

    def _converse(self, group: Group, prompt: str) -> UnitReview:
        if self.mode == "tools":
            try:
                review = self._conversation(group).with_tools(prompt)
            except ToolsUnsupported as exc:
                self._fall_back(str(exc))
            else:
                if review.stop_reason != "no_tool_calls" or review.tool_calls:
                    return review
                # The model chose not to call a tool: this unit gets a structured answer,
                # and the run stays in tools mode (the server can do them).
                answer = self._conversation(group).structured(prompt)
                return answer.replace(turns=review.turns + answer.turns,
                                      tokens=review.tokens + answer.tokens)
        return self._conversation(group).structured(prompt)

    def _fall_back(self, why: str) -> None:
        with self._lock:
            if self.mode == "structured":
                return
            self.mode = "structured"
        settings = self.session.settings
        remember_without_tools(settings.endpoint, settings.model)
        self.events.notice(f"the model server does not do tool calls ({why}); reviewing with "
                           "one structured answer per unit instead (remembered for this "
                           "endpoint and model)")

    def _conversation(self, group: Group) -> Conversation:
        path = group.units[0].file_path
        toolbox = Toolbox(source=self.source,
                          searcher=Searcher(self.source, path, self._searches),
                          redactor=self.session.redactor)
        return Conversation(session=self.session, unit_ids=group.unit_ids, file_path=path,
                            toolbox=toolbox, index=self.index, read=self.source.rules_text,
                            events=self.events, bounds=self.bounds)


def review_units(session: ModelSession | None, units: Sequence[ReviewUnit],
                 bundle: ContextBundle, findings: Sequence[Finding], source: RepoSource,
                 config: Config, events: Events,
                 cache: ResultCache | None = None) -> ReviewResult:
    """Step 7: the agent's conversations for the units where the rules see risk, one call
    for the others (a few for a large change), several at once; why each other unit had
    none. The result's order is the jobs' order, whatever order the replies came in."""
    kept = {item.unit_id for item in bundle.items}
    skipped = {u.unit_id: "skipped_by_plan" for u in units if u.unit_id not in kept}
    if session is None:
        return ReviewResult(skipped={**skipped, **dict.fromkeys(kept, "offline")})
    index = DiffIndex.from_units(units)
    guidance = read_guidance(source, config)
    reviewer = Reviewer(session=session, source=source, config=config, events=events,
                        index=index, guidance=guidance, cache=cache,
                        bounds=Bounds.from_limits(config.limits))
    # Each review is told its own units' rule findings: looked up, never filtered from all
    # of them (10,000 units made that the stage's whole time).
    by_unit: dict[str | None, list[Finding]] = defaultdict(list)
    for finding in findings:
        by_unit[finding.unit_id].append(finding)
    to_agent, to_one_call = route(units, bundle.items, by_unit,
                                  whole=_read_whole(units, bundle, config))
    agent_groups = groups([unit for unit, _ in to_agent],
                          bundle.replace(items=tuple(item for _, item in to_agent)))
    calls = batches([unit for unit, _ in to_one_call], [item for _, item in to_one_call])
    # A pull request read whole in one call is described by it: no call of its own.
    describe = source.diff.request.mode == "pr" and len(calls) == 1 and not agent_groups
    jobs = _Jobs(reviewer=reviewer, one_call=OneCall(session=session, index=index,
                                                      read=source.rules_text, cache=cache),
                 findings=by_unit, describe=describe, total=len(agent_groups) + len(calls))
    results = run_in_pool([partial(jobs.agent, group) for group in agent_groups]
                          + [partial(jobs.call, batch) for batch in calls],
                          session.settings.concurrency)
    reviews: list[UnitReview] = []
    for outcome in results:
        review = outcome.review
        reason = review.stop_reason.removeprefix("model_unavailable: ")
        if review.turns == 0 and not review.cached and reason != review.stop_reason:
            skipped.update(dict.fromkeys(review.unit_ids, reason))
        else:
            reviews.append(review)
    _say_what_went_unreviewed(skipped, len(kept), events)
    _say_what_a_bound_ended(reviews, events)
    description = next((o.description for o in results if o.description is not None), None)
    return ReviewResult(reviews=tuple(reviews), skipped=skipped, mode=reviewer.mode,
                        description=description)


def _read_whole(units: Sequence[ReviewUnit], bundle: ContextBundle, config: Config) -> bool:
    """Whether the change is read whole in one call, its risky units too: every hunk is
    shown whole and the code fits one call (review/change.py CALL_TOKENS), and the user has
    not asked for the agent on small changes. A hunk its item cuts is no small change: what
    the cut hides only the agent's tools can read."""
    if config.limits.small_change_agent:
        return False
    by_id = {unit.unit_id: unit for unit in units}
    return (not any(diff_clipped(by_id[item.unit_id]) for item in bundle.items)
            and fits_one_call(bundle.items))


@dataclass
class _Jobs:
    """What each review job runs (in the pool's workers): a conversation, or a call."""

    reviewer: Reviewer
    one_call: OneCall
    findings: Mapping[str | None, Sequence[Finding]]
    describe: bool
    total: int

    def __post_init__(self) -> None:
        self._done = iter(range(1, self.total + 1))  # next() under the GIL: one count each

    def agent(self, group: Group) -> ChangeOutcome:
        try:
            review = self.reviewer.review(group, self.findings)
        except Exception as exc:  # one conversation never ends the run
            self.reviewer.events.notice(f"the review of {group.units[0].file_path} failed "
                                        f"({type(exc).__name__}); its units have no model "
                                        "review")
            review = UnitReview(unit_ids=group.unit_ids, file_path=group.units[0].file_path,
                                mode="tools", stop_reason="model_unavailable: review_failed")
        self._announce(review)
        return ChangeOutcome(review)

    def call(self, batch: Batch) -> ChangeOutcome:
        reviewer = self.reviewer
        try:
            guidance = list(dict.fromkeys(
                part for path in batch.paths
                for part in reviewer.guidance.for_path(reviewer.config, path)))
            outcome = self.one_call.review(batch, self.findings, guidance,
                                           reviewer.guidance.text(), self.describe)
        except Exception as exc:  # one call never ends the run
            reviewer.events.notice(f"the review of {batch.paths[0]} failed "
                                   f"({type(exc).__name__}); its units have no model review")
            outcome = ChangeOutcome(UnitReview(
                unit_ids=batch.unit_ids, file_path=batch.paths[0], mode="change",
                stop_reason="model_unavailable: review_failed"))
        self._announce(outcome.review)
        return outcome

    def _announce(self, review: UnitReview) -> None:
        if review.turns or review.cached:
            self.reviewer.events.emit(
                "unit_reviewed", f"reviewed {review.file_path} "
                                 f"({counted(len(review.recorded), 'finding')}; "
                                 f"{next(self._done)} of {self.total} reviews)",
                unit_ids=list(review.unit_ids), findings=len(review.recorded),
                stop_reason=review.stop_reason, cached=review.cached)


def _say_what_a_bound_ended(reviews: Sequence[UnitReview], events: Events) -> None:
    ended = Counter(r.stop_reason for r in reviews if r.stop_reason in BOUND_STOPS)
    if ended:
        why = ", ".join(f"{count} {bound}" for bound, count in ended.most_common())
        events.notice(f"{sum(ended.values())} model conversation(s) ended on a bound ({why}): "
                      "their units were reviewed in part ([limits] unit_turns, "
                      "unit_tool_calls, unit_tokens and unit_seconds set the bounds)")


def _say_what_went_unreviewed(skipped: Mapping[str, str], kept: int, events: Events) -> None:
    """One notice when the model reviewed fewer units than the plan kept, and why."""
    missed = Counter(reason for reason in skipped.values() if reason != "skipped_by_plan")
    if missed:
        why = ", ".join(f"{count} {reason}" for reason, count in missed.most_common())
        events.notice(f"the model reviewed {kept - sum(missed.values())} of the "
                      f"{counted(kept, 'unit')} "
                      f"the plan kept ({why}); the rules' findings stand for the others")


def verify_findings(review: ReviewResult, units: Sequence[ReviewUnit],
                    rule_findings: Sequence[Finding], source: RepoSource,
                    session: ModelSession | None,
                    cache: ResultCache | None = None) -> VerifiedFindings:
    """Step 8: anchor every recorded finding, merge duplicates, attach suggestions."""
    index = DiffIndex.from_units(units)
    found: list[Finding] = []
    moved, lost, by_line = [], [], []
    for conversation in review.reviews:
        # A finding sent back and recorded the same way again is one finding dropped once
        # (with its last reason), not once per round.
        last = {(r.finding.title, r.finding.file_path, r.finding.start_line): r
                for r in conversation.rejected}
        lost += [Dropped(title=r.finding.title, file_path=r.finding.file_path,
                         reason=f"failed verification (round {r.round}): {r.reason}")
                 for r in last.values()]
        for recorded in conversation.recorded:
            verdict = check(recorded, index, source.rules_text)
            if not verdict.ok:
                lost.append(dropped(verdict))
                continue
            if verdict.moved:
                moved.append(reanchored(verdict))
            if verdict.by_line:
                by_line.append(recorded.title)
            unit = index.unit_at(recorded.file_path, verdict.start) or conversation.unit_ids[0]
            found.append(to_finding(verdict, unit))
    kept, merged = merge(found, rule_findings)
    kept, stats = _with_suggestions(kept, session, source, units, cache)
    return VerifiedFindings(findings=tuple(kept), reanchored=tuple(moved), dropped=tuple(lost),
                            merged=tuple(merged), by_line=tuple(by_line), suggestions=stats)


def _with_suggestions(findings: list[Finding], session: ModelSession | None,
                      source: RepoSource, units: Sequence[ReviewUnit],
                      cache: ResultCache | None) -> tuple[list[Finding], SuggestionStats]:
    if session is None:
        return findings, SuggestionStats()
    languages = {unit.file_path: unit.language for unit in units}
    wanted = sorted((f for f in findings if wants_suggestion(f)),
                    key=lambda f: -SEVERITY_RANK[f.severity])[:MAX_SUGGESTIONS]

    def job(finding: Finding) -> Suggestion:
        text = source.rules_text(finding.file_path)
        if text is None:
            return Suggestion(None, "unreadable")
        return suggest(session, finding, text, languages.get(finding.file_path, "text"), cache)

    results = run_in_pool([partial(job, f) for f in wanted], session.settings.concurrency)
    rejected: dict[str, int] = {}
    attached: dict[int, str] = {}
    for finding, result in zip(wanted, results, strict=True):
        if result.replacement is not None:
            attached[id(finding)] = result.replacement
        else:
            rejected[result.outcome] = rejected.get(result.outcome, 0) + 1
    with_code = [f.replace(replacement=attached[id(f)]) if id(f) in attached
                 else f for f in findings]
    return with_code, SuggestionStats(asked=len(wanted), attached=len(attached),
                                      rejected=rejected)
