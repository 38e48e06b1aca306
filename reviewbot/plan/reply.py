"""What the planner model must answer: validated and bounded before anything uses it, then
turned into the run's own `PlanItem` records (`reviewbot/schema/plans.py`).

Imported only when a model plans: pydantic (which also writes the JSON schema the model is
given) stays out of the offline hook.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict

from reviewbot.model.replies import clipped_list, clipped_text, shown_bound
from reviewbot.schema import plans
from reviewbot.schema.records import ContextLevel
from reviewbot.schema.units import RequestType

# What a model may say, in size: longer text is cut (and says so), longer lists are cut.
MAX_REASON_CHARS = 300
MAX_DETAILS_CHARS = 200
MAX_REQUESTS_PER_ITEM = 16
MAX_PLAN_ITEMS = 1000


# The requests a unit's plan is shown room for (a grammar stops the list there).
SHOWN_REQUESTS_PER_ITEM = 4


class _Reply(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class PlanRequest(_Reply):
    type: RequestType
    # The bound on the string itself: on the union it would sit beside `anyOf`, where
    # llama.cpp's grammar does not look, and a small model wrote details until it was cut.
    details: Annotated[str, BeforeValidator(clipped_text(MAX_DETAILS_CHARS)),
                       shown_bound(maxLength=MAX_DETAILS_CHARS)] | None = None


class PlanItem(_Reply):
    unit_id: Annotated[str, BeforeValidator(clipped_text(64)), shown_bound(maxLength=64)]
    llm_context_level: ContextLevel
    extra_requests: Annotated[tuple[PlanRequest, ...],
                              BeforeValidator(clipped_list(MAX_REQUESTS_PER_ITEM)),
                              shown_bound(maxItems=MAX_REQUESTS_PER_ITEM)] = ()
    skip_review: bool = False
    reason: Annotated[str, BeforeValidator(clipped_text(MAX_REASON_CHARS)),
                      shown_bound(maxLength=MAX_REASON_CHARS)] = ""


class PlanReply(_Reply):
    """The planner's whole answer for one batch of units."""

    plan: Annotated[tuple[PlanItem, ...], BeforeValidator(clipped_list(MAX_PLAN_ITEMS)),
                    shown_bound(maxItems=MAX_PLAN_ITEMS)]

    def items(self) -> tuple[plans.PlanItem, ...]:
        return tuple(plans.PlanItem.from_data(item.model_dump()) for item in self.plan)

    @classmethod
    def shown_for(cls, unit_ids: Sequence[str]) -> dict[str, Any]:
        """The JSON schema sent for one batch: at most one item per unit, and a unit id one
        of the batch's. A server that compiles it into a grammar (llama.cpp) cannot let a
        model invent units; the answer is still validated by this class, and fusion keeps
        only the batch's units."""
        shown = copy.deepcopy(cls.model_json_schema())
        shown["properties"]["plan"]["maxItems"] = len(unit_ids)
        # A unit needs a few requests; shown sixteen, a small model wrote sixteen long ones
        # for each unit until its reply was cut (an answer past sixteen is still clipped).
        item = shown["$defs"]["PlanItem"]["properties"]
        item["extra_requests"]["maxItems"] = SHOWN_REQUESTS_PER_ITEM
        unit_id = shown["$defs"]["PlanItem"]["properties"]["unit_id"]
        unit_id.pop("maxLength", None)
        unit_id["enum"] = list(unit_ids)
        return shown
