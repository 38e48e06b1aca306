"""What the planner model must answer: validated and bounded before anything uses it, then
turned into the run's own `PlanItem` records (`reviewbot/schema.py`).

Imported only when a model plans: pydantic (which also writes the JSON schema the model is
given) stays out of the offline hook.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict

from reviewbot import schema
from reviewbot.model.replies import clipped_list, clipped_text
from reviewbot.schema import ContextLevel, RequestType

# What a model may say, in size: longer text is cut (and says so), longer lists are cut.
MAX_REASON_CHARS = 300
MAX_DETAILS_CHARS = 200
MAX_REQUESTS_PER_ITEM = 16
MAX_PLAN_ITEMS = 1000


class _Reply(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class PlanRequest(_Reply):
    type: RequestType
    details: Annotated[str | None, BeforeValidator(clipped_text(MAX_DETAILS_CHARS))] = None


class PlanItem(_Reply):
    unit_id: Annotated[str, BeforeValidator(clipped_text(64))]
    llm_context_level: ContextLevel
    extra_requests: Annotated[tuple[PlanRequest, ...],
                              BeforeValidator(clipped_list(MAX_REQUESTS_PER_ITEM))] = ()
    skip_review: bool = False
    reason: Annotated[str, BeforeValidator(clipped_text(MAX_REASON_CHARS))] = ""


class PlanReply(_Reply):
    """The planner's whole answer for one batch of units."""

    plan: Annotated[tuple[PlanItem, ...], BeforeValidator(clipped_list(MAX_PLAN_ITEMS))]

    def items(self) -> tuple[schema.PlanItem, ...]:
        return tuple(schema.PlanItem.from_data(item.model_dump()) for item in self.plan)
