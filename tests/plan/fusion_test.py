"""Step 5 as a pure function: (rule fields, model plan) -> fused decision and reason."""

from __future__ import annotations

from typing import Any

import pytest

from reviewbot.plan.fusion import fuse, fuse_unit
from reviewbot.plan.reply import PlanReply
from reviewbot.schema.plans import LlmPlan, PlanItem, PlanRequest
from reviewbot.schema.units import AgentDecision, ExtraRequest, ReviewUnit
from tests.rules.conftest import review

PAY_OLD = "def pay(amount):\n    return charge(amount)\n"
PAY_NEW = "def pay(amount, currency):\n    return charge(amount, currency)\n"


def unit(priority: str, confidence: float, level: str = "function",
         requests: tuple[ExtraRequest, ...] = ()) -> ReviewUnit:
    [base] = review("src/pay.py", PAY_NEW, PAY_OLD).units
    return base.replace(
        agent_decision=AgentDecision(context_level=level, priority=priority),  # type: ignore[arg-type]
        rule_confidence=confidence, rule_context_level=level, rule_extra_requests=requests)


def model(u: ReviewUnit, level: str, skip: bool = False, reason: str = "model reason",
          requests: tuple[tuple[str, str | None], ...] = ()) -> PlanItem:
    return PlanItem(unit_id=u.unit_id, llm_context_level=level, skip_review=skip,  # type: ignore[arg-type]
                    reason=reason, extra_requests=tuple(
                        PlanRequest(type=t, details=d) for t, d in requests))  # type: ignore[arg-type]


# (rule priority, rule confidence, rule level, model level, model skips) ->
# (final level, skip, reason)
TABLE: list[tuple[str, float, str, str, bool, tuple[str, bool, str]]] = [
    ("high", 0.95, "function", "diff_only", True,
     ("function", False, "rule_high_confidence_fallback")),
    ("medium", 0.5, "function", "diff_only", True,
     ("diff_only", False, "rule_high_confidence_fallback")),
    ("low", 0.4, "function", "diff_only", True,
     ("diff_only", True, "dropped_by_fusion_low_confidence")),
    ("low", 0.9, "diff_only", "diff_only", True, ("diff_only", True, "model reason")),
    ("low", 0.9, "diff_only", "file_context", False, ("file_context", False, "model reason")),
    ("high", 0.85, "file_context", "function", False,
     ("file_context", False, "model reason")),  # confident rules: the wider level
    ("medium", 0.5, "file_context", "function", False,
     ("function", False, "model reason")),  # unsure rules: the model's level
    ("medium", 0.7, "function", "full_file", False, ("full_file", False, "model reason")),
]


@pytest.mark.parametrize(("priority", "confidence", "rule_level", "model_level", "skips",
                          "expected"), TABLE)
def test_fusion_table(priority: str, confidence: float, rule_level: str, model_level: str,
                      skips: bool, expected: tuple[str, bool, str]) -> None:
    u = unit(priority, confidence, rule_level)
    fused, _ = fuse_unit(u, model(u, model_level, skips))
    assert (fused.final_context_level, fused.skip_review, fused.reason) == expected
    assert (fused.rule_context_level, fused.llm_context_level) == (rule_level, model_level)


def test_no_model_item_keeps_the_rule_plan() -> None:
    u = unit("medium", 0.5, "function", (ExtraRequest(type="previous_version"),))
    fused, _ = fuse_unit(u, None)
    assert (fused.final_context_level, fused.skip_review, fused.reason) == (
        "function", False, "no_model_plan")
    assert [r.type for r in fused.extra_requests] == ["previous_version"]


def test_model_requests_come_first_and_risky_units_keep_the_rules_requests() -> None:
    rule_requests = (ExtraRequest(type="scanner_issues"),
                     ExtraRequest(type="search_callers", details="pay", symbol="pay"))
    risky = unit("high", 0.9, requests=rule_requests)
    with_model = fuse_unit(risky, model(risky, "function", requests=(("search", "charge"),)))[0]
    assert [(r.type, r.keyword or r.symbol) for r in with_model.extra_requests] == [
        ("search", "charge"), ("scanner_issues", None), ("search_callers", "pay")]
    quiet = unit("low", 0.9, requests=rule_requests)
    model_only = fuse_unit(quiet, model(quiet, "function", requests=(("search", "charge"),)))[0]
    assert [r.type for r in model_only.extra_requests] == ["search"]
    without = fuse_unit(quiet, model(quiet, "function"))[0]
    assert [r.type for r in without.extra_requests] == ["scanner_issues", "search_callers"]


@pytest.mark.parametrize(("details", "kept"), [
    ("x" * 33_000, []),
    ("pay\0rm -rf", []),
    ("line one\nline two", []),
    # Not a name, but a fine keyword: git grep gets it after -e, never as an option.
    ("--output=/tmp/x", [("search", "--output=/tmp/x")]),
])
def test_needles_a_reviewer_would_not_search_for_are_dropped(
        details: str, kept: list[tuple[str, str]]) -> None:
    u = unit("low", 0.9)
    fused, lost = fuse_unit(u, model(u, "function", requests=(("search_callers", details),
                                                             ("search", details))))
    assert [(r.type, r.symbol or r.keyword) for r in fused.extra_requests] == kept
    assert len(lost) == 2 - len(kept)
    assert all("not a searchable name" in reason for reason in lost)


def test_a_unit_keeps_at_most_eight_requests() -> None:
    u = unit("low", 0.9)
    asks = [{"type": "search", "details": f"word{n}"} for n in range(2000)]
    [item] = PlanReply.model_validate({"plan": [{
        "unit_id": u.unit_id, "llm_context_level": "function", "extra_requests": asks}]}).items()
    assert len(item.extra_requests) == 16  # a model's plan item holds at most 16
    fused, lost = fuse_unit(u, item)
    assert len(fused.extra_requests) == 8
    assert len(lost) == 8 and "over 8 requests for one unit" in lost[0]


@pytest.mark.parametrize(("request_type", "details", "field", "expected"), [
    ("callers", "pay", "symbol", "pay"),
    ("search_callers", None, "symbol", "pay"),           # inferred: the changed def
    ("search_implementations", "", "symbol", "pay"),
    ("search_model_usage", "Invoice", "symbol", "Invoice"),
    ("search_class_methods", None, "symbol", "pay"),
    ("search", "charge", "keyword", "charge"),
    ("search", None, "keyword", "pay"),
    ("search_config_usage", "timeout", "keyword", "timeout"),
])
def test_details_become_symbol_or_keyword(request_type: str, details: str | None, field: str,
                                          expected: str) -> None:
    u = unit("high", 0.9)
    fused, lost = fuse_unit(u, model(u, "function", requests=((request_type, details),)))
    [request] = fused.extra_requests
    assert getattr(request, field) == expected and lost == []


def test_requests_with_nothing_to_search_for_are_dropped_and_reported() -> None:
    [u] = review("notes/todo.txt", "buy milk\n").units
    fused, lost = fuse_unit(u, model(u, "diff_only", requests=(
        ("search_callers", None), ("previous_version", None), ("scanner_issues", None))))
    assert [r.type for r in fused.extra_requests] == ["previous_version", "scanner_issues"]
    assert lost == [f"{u.unit_id}: search_callers (nothing to search for)"]


def test_symbol_from_the_enclosing_function_when_no_definition_changed() -> None:
    old = "def pay(amount):\n    fee = 1\n    return charge(amount) + fee\n"
    new = old.replace("fee = 1", "fee = 2")
    [u] = review("src/pay.py", new, old).units
    fused, _ = fuse_unit(u, model(u, "function", requests=(("search_callers", None),)))
    assert fused.extra_requests[0].symbol == "pay"


def test_fuse_ignores_unknown_unit_ids() -> None:
    u = unit("medium", 0.5)
    stranger: dict[str, Any] = {"unit_id": "not-in-change", "llm_context_level": "full_file"}
    plan = LlmPlan(plan=(model(u, "function"), PlanItem(**stranger)))
    fused = fuse([u], plan)
    assert [i.unit_id for i in fused.plan] == [u.unit_id]
    assert fused.ignored_plan_ids == ("not-in-change",)
