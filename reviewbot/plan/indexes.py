"""Step 3: review_index (units in full, no diff text) and the slim planner_index.

Seed 004 section 6: the planner sees no diff text and no rule notes, so it plans
from the shape of the change and cannot be steered by what the diff says.
"""

from __future__ import annotations

from reviewbot.schema.plans import (
    IndexSummary,
    PlannerIndex,
    PlannerRequest,
    PlannerUnit,
    ReviewIndex,
    ReviewMetadata,
    TotalLines,
)
from reviewbot.schema.units import DiffResult, IndexUnit, ReviewUnit

_PATCH_TYPES = ("add", "modify", "delete", "rename", "binary", "mode")


def build_review_index(diff: DiffResult, timestamp: str) -> ReviewIndex:
    units = tuple(index_unit(unit) for unit in diff.units)
    files = _files_in_order(diff.units)
    metadata = ReviewMetadata(
        mode=diff.request.mode,
        base_branch=diff.base_branch,
        total_files=len(files),
        total_changes=len(units),
        timestamp=timestamp,
    )
    return ReviewIndex(review_metadata=metadata, summary=_summary(diff.units), units=units)


def index_unit(unit: ReviewUnit) -> IndexUnit:
    return IndexUnit(**{name: getattr(unit, name) for name in IndexUnit.field_names()})


def build_planner_index(index: ReviewIndex) -> PlannerIndex:
    units = tuple(
        PlannerUnit(
            unit_id=unit.unit_id,
            file_path=unit.file_path,
            patch_type=unit.patch_type,
            tags=unit.tags,
            metrics=unit.metrics,
            rule_context_level=unit.rule_context_level,
            rule_confidence=unit.rule_confidence,
            line_numbers=unit.line_numbers,
            rule_extra_requests=tuple(
                PlannerRequest(type=request.type) for request in unit.rule_extra_requests),
        )
        for unit in index.units
    )
    return PlannerIndex(review_metadata=index.review_metadata, summary=index.summary, units=units)


def _files_in_order(units: tuple[ReviewUnit, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(unit.file_path for unit in units))


def _summary(units: tuple[ReviewUnit, ...]) -> IndexSummary:
    # Counted per file: every unit of a file shares its patch type.
    by_type = dict.fromkeys(_PATCH_TYPES, 0)
    first_units = {unit.file_path: unit for unit in reversed(units)}
    for unit in first_units.values():
        by_type[unit.patch_type] += 1
    return IndexSummary(
        changes_by_type=by_type,
        total_lines=TotalLines(
            added=sum(u.metrics.added_lines for u in units),
            removed=sum(u.metrics.removed_lines for u in units),
        ),
        files_changed=_files_in_order(units),
    )
