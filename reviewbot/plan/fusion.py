"""Step 5: merge the rule plan and the model plan (seed 004 section 3), as a pure function.

- Units the rules rate high or medium risk are always reviewed, whatever the model says
  (`rule_high_confidence_fallback`).
- A low-risk unit the model skips is dropped when the rules are not confident about it
  either (`dropped_by_fusion_low_confidence`); otherwise the model's skip stands.
- The final context level is the wider of the two when the rules are confident, the
  model's when they are not.
- The model's extra requests come first; the rules' fill in when the model gives none, and
  for high- and medium-risk units they are kept as well (a reviewer never loses the rule
  findings or the callers where they matter most). Every request leaves fusion executable:
  `details` becomes the `symbol` or `keyword` the context stage searches for, inferred from
  the hunk when the model gave none (the gap 004 admits). A needle that is not something a
  reviewer would search for (a NUL, a newline, 33 KB of text) is dropped and reported, and a
  unit keeps at most MAX_REQUESTS_PER_UNIT requests.
"""

from __future__ import annotations

from collections.abc import Sequence

from reviewbot.code.definitions import changed_config_keys, changed_signatures, definition_name
from reviewbot.lazy_re import lazy_re
from reviewbot.schema.plans import FusedItem, FusedPlan, LlmPlan, PlanItem
from reviewbot.schema.records import CONTEXT_LEVELS, ContextLevel
from reviewbot.schema.units import KEYWORD_REQUESTS, SYMBOL_REQUESTS, ExtraRequest, ReviewUnit

CONFIDENT = 0.7
MAX_REQUESTS_PER_UNIT = 8
MAX_NEEDLE_CHARS = 100
# A symbol: an identifier, possibly qualified (`Cart.total`, `pkg::fn`, `$el`).
_SYMBOL = lazy_re(r"^[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*$")
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
    from_model = [ExtraRequest(type=r.type, details=r.details)
                  for r in (item.extra_requests if item else ())]
    keep_rules = not from_model or unit.agent_decision.priority in ("high", "medium")
    proposed = from_model + (list(unit.rule_extra_requests) if keep_rules else [])
    executable: list[ExtraRequest] = []
    lost: list[str] = []
    for request in proposed:
        ready = executable_request(unit, request)
        if ready is None:
            lost.append(f"{unit.unit_id}: {request.type} ({_why_not(request)})")
        elif any(_same(ready, other) for other in executable):
            continue
        elif len(executable) >= MAX_REQUESTS_PER_UNIT:
            lost.append(f"{unit.unit_id}: {request.type} (over {MAX_REQUESTS_PER_UNIT} "
                        "requests for one unit)")
        else:
            executable.append(ready)
    return tuple(executable), lost


def _same(a: ExtraRequest, b: ExtraRequest) -> bool:
    """The same fetch, whoever asked for it and however they described it."""
    return (a.type, a.symbol, a.keyword) == (b.type, b.symbol, b.keyword)


def _why_not(request: ExtraRequest) -> str:
    details = (request.details or "").strip()
    return "not a searchable name" if details else "nothing to search for"


def executable_request(unit: ReviewUnit, request: ExtraRequest) -> ExtraRequest | None:
    """The request with the `symbol` or `keyword` the context stage needs, or None when
    there is nothing sensible to search for."""
    details = (request.details or "").strip() or None
    if request.type in SYMBOL_REQUESTS:
        symbol = request.symbol or details or infer_symbol(unit)
        if not symbol or len(symbol) > MAX_NEEDLE_CHARS or not _SYMBOL.match(symbol):
            return None
        return request.replace(symbol=symbol, details=symbol)
    if request.type in KEYWORD_REQUESTS:
        keyword = request.keyword or details or infer_keyword(unit)
        if not keyword or len(keyword) > MAX_NEEDLE_CHARS or not keyword.isprintable():
            return None
        return request.replace(keyword=keyword, details=keyword)
    return request.replace(details=None)


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
