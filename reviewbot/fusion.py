"""Step 5: merge the rule plan and the model plan (seed 004 section 3), as a pure function.

- Units the rules rate high or medium risk are always reviewed, whatever the model says
  (`rule_high_confidence_fallback`).
- A low-risk unit the model skips is dropped when the rules are not confident about it
  either (`dropped_by_fusion_low_confidence`); otherwise the model's skip stands.
- The final context level is the wider of the two when the rules are confident, the
  model's when they are not.
- The model's extra requests win; the rules' fill in when the model gives none. Every
  request leaves fusion executable: `details` becomes the `symbol` or `keyword` the context
  stage searches for, inferred from the hunk when the model gave none (the gap 004 admits).
"""

from __future__ import annotations

from collections.abc import Sequence

from reviewbot.code.definitions import changed_config_keys, changed_signatures, definition_name
from reviewbot.schema import (
    CONTEXT_LEVELS,
    KEYWORD_REQUESTS,
    SYMBOL_REQUESTS,
    ContextLevel,
    ExtraRequest,
    FusedItem,
    FusedPlan,
    LlmPlan,
    PlanItem,
    ReviewUnit,
)

CONFIDENT = 0.7
HIGH_CONFIDENCE_FALLBACK = "rule_high_confidence_fallback"
DROPPED_LOW_CONFIDENCE = "dropped_by_fusion_low_confidence"


def fuse(units: Sequence[ReviewUnit], llm_plan: LlmPlan) -> FusedPlan:
    by_id = {item.unit_id: item for item in llm_plan.plan}
    known = {unit.unit_id for unit in units}
    items: list[FusedItem] = []
    dropped: list[str] = []
    for unit in units:
        item, lost = fuse_unit(unit, by_id.get(unit.unit_id))
        items.append(item)
        dropped += lost
    ignored = tuple(dict.fromkeys(i.unit_id for i in llm_plan.plan if i.unit_id not in known))
    return FusedPlan(plan=tuple(items), ignored_plan_ids=ignored, dropped_requests=tuple(dropped))


def fuse_unit(unit: ReviewUnit, item: PlanItem | None) -> tuple[FusedItem, list[str]]:
    """The fused decision for one unit, and the requests that could not be made executable."""
    model_level = item.llm_context_level if item else unit.rule_context_level
    risky = unit.agent_decision.priority in ("high", "medium")
    confident = unit.rule_confidence >= CONFIDENT
    model_skips = bool(item and item.skip_review)
    reason = item.reason if item and item.reason else "no_model_plan"
    if model_skips and risky:
        skip, reason = False, HIGH_CONFIDENCE_FALLBACK
    elif model_skips and not confident:
        skip, reason = True, DROPPED_LOW_CONFIDENCE
    else:
        skip = model_skips
    level = _wider(unit.rule_context_level, model_level) if confident else model_level
    requests, lost = _requests(unit, item)
    return FusedItem(
        unit_id=unit.unit_id, rule_context_level=unit.rule_context_level,
        rule_confidence=unit.rule_confidence, llm_context_level=model_level,
        final_context_level=level, extra_requests=requests, skip_review=skip, reason=reason,
    ), lost


def _wider(a: ContextLevel, b: ContextLevel) -> ContextLevel:
    return max(a, b, key=CONTEXT_LEVELS.index)


def _requests(unit: ReviewUnit,
              item: PlanItem | None) -> tuple[tuple[ExtraRequest, ...], list[str]]:
    proposed = ([ExtraRequest(type=r.type, details=r.details) for r in item.extra_requests]
                if item and item.extra_requests else list(unit.rule_extra_requests))
    executable: list[ExtraRequest] = []
    lost: list[str] = []
    for request in proposed:
        ready = executable_request(unit, request)
        if ready is None:
            lost.append(f"{unit.unit_id}: {request.type} (nothing to search for)")
        elif ready not in executable:
            executable.append(ready)
    return tuple(executable), lost


def executable_request(unit: ReviewUnit, request: ExtraRequest) -> ExtraRequest | None:
    """The request with the `symbol` or `keyword` the context stage needs, or None."""
    details = (request.details or "").strip() or None
    if request.type in SYMBOL_REQUESTS:
        symbol = request.symbol or details or infer_symbol(unit)
        return request.model_copy(update={"symbol": symbol}) if symbol else None
    if request.type in KEYWORD_REQUESTS:
        keyword = request.keyword or details or infer_keyword(unit)
        return request.model_copy(update={"keyword": keyword}) if keyword else None
    return request


def infer_symbol(unit: ReviewUnit) -> str | None:
    """The function the hunk changes: a changed definition, else the enclosing one."""
    changed = changed_signatures(unit)
    if changed:
        return changed[0]
    if unit.hunk is None:
        return None
    # The nearest definition at or above the first changed line, else the first one the
    # change adds or removes, else git's hunk header.
    nearest: str | None = None
    for line in unit.hunk.lines:
        nearest = definition_name(line.text) or nearest
        if line.kind != "ctx":
            break
    defined = (definition_name(line.text) for line in unit.hunk.lines if line.kind != "ctx")
    return nearest or next((n for n in defined if n), None) or definition_name(unit.hunk.section)


def infer_keyword(unit: ReviewUnit) -> str | None:
    keys = changed_config_keys(unit)
    return keys[0] if keys else infer_symbol(unit)
