"""Stages 3-5's contracts: the review index, the planner's slim index, the plan, the fused plan."""

from __future__ import annotations

from typing import Literal

from msgspec import field

from reviewbot.schema.records import ContextLevel, Frozen, Mode
from reviewbot.schema.units import ExtraRequest, IndexUnit, RequestType, UnitShape


class ReviewMetadata(Frozen, frozen=True, kw_only=True):
    mode: Mode
    base_branch: str | None = None
    total_files: int
    total_changes: int
    timestamp: str


class TotalLines(Frozen, frozen=True, kw_only=True):
    added: int = 0
    removed: int = 0


class IndexSummary(Frozen, frozen=True, kw_only=True):
    changes_by_type: dict[str, int]
    total_lines: TotalLines
    files_changed: tuple[str, ...]


class ReviewIndex(Frozen, frozen=True, kw_only=True):
    review_metadata: ReviewMetadata
    summary: IndexSummary
    units: tuple[IndexUnit, ...]


class PlannerRequest(Frozen, frozen=True, kw_only=True):
    """An extra request as the planner sees it: only its type (docs/ARCHITECTURE.md)."""

    type: RequestType


class PlannerUnit(UnitShape, frozen=True, kw_only=True):
    rule_extra_requests: tuple[PlannerRequest, ...] = ()


class PlannerIndex(Frozen, frozen=True, kw_only=True):
    review_metadata: ReviewMetadata
    summary: IndexSummary
    units: tuple[PlannerUnit, ...]


PlanSource = Literal["model", "heuristic"]


class PlanRequest(Frozen, frozen=True, kw_only=True):
    type: RequestType
    details: str | None = None


class PlanItem(Frozen, frozen=True, kw_only=True):
    """The planner's decision for one unit (seed 004 section 2, llm_plan). A model's answer
    is validated and bounded by `reviewbot.plan.reply.PlanReply` before it becomes one."""

    unit_id: str
    llm_context_level: ContextLevel
    extra_requests: tuple[PlanRequest, ...] = ()
    skip_review: bool = False
    reason: str = ""


class LlmPlan(Frozen, frozen=True, kw_only=True):
    """Step 4: a plan item per unit, from the model or from the heuristic planner."""

    plan: tuple[PlanItem, ...]
    # Where each unit's item came from; heuristic items say why in their reason.
    sources: dict[str, PlanSource] = field(default_factory=dict)
    notices: tuple[str, ...] = ()


class FusedItem(Frozen, frozen=True, kw_only=True):
    unit_id: str
    rule_context_level: ContextLevel
    rule_confidence: float
    llm_context_level: ContextLevel
    final_context_level: ContextLevel
    extra_requests: tuple[ExtraRequest, ...] = ()
    skip_review: bool = False
    reason: str = ""


class FusedPlan(Frozen, frozen=True, kw_only=True):
    """Step 5: the rule plan and the model plan merged (seed 004 section 3)."""

    plan: tuple[FusedItem, ...]
    # Unit ids the model named that are not in the change.
    ignored_plan_ids: tuple[str, ...] = ()
    # Requests fusion could not make executable (no symbol or keyword to search for).
    dropped_requests: tuple[str, ...] = ()
