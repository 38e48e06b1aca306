"""What the planner and the reviewer may answer, as the JSON schemas a server is shown."""

from __future__ import annotations

from typing import Any

import pytest

from reviewbot.plan.reply import PlanReply
from reviewbot.review import replies


def _bounds_beside_unions(node: Any, path: str = "") -> list[str]:
    """Where a bound sits beside `anyOf`: llama.cpp's grammar reads it only inside a branch,
    so the string or list it bounds is unbounded there."""
    found: list[str] = []
    if isinstance(node, dict):
        if "anyOf" in node and {"maxLength", "maxItems"} & node.keys():
            found.append(path)
        for key, value in node.items():
            found += _bounds_beside_unions(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _bounds_beside_unions(value, f"{path}[{index}]")
    return found


SCHEMAS = {
    "plan": PlanReply.shown_for(["a", "b"]),
    **{name: model.model_json_schema() for name, model in vars(replies).items()
       if isinstance(model, type) and hasattr(model, "model_json_schema")
       and model.__module__ == replies.__name__},
}


@pytest.mark.parametrize("schema", SCHEMAS.values(), ids=SCHEMAS.keys())
def test_every_bound_is_where_a_grammar_reads_it(schema: dict[str, Any]) -> None:
    """A planner's `details` bounded beside `anyOf` let SmolLM2 write until its reply was
    cut twice (512, then 1,024 tokens) on the real llama.cpp server."""
    assert _bounds_beside_unions(schema) == []


def test_details_are_bounded_and_may_be_left_out() -> None:
    details = SCHEMAS["plan"]["$defs"]["PlanRequest"]["properties"]["details"]
    assert {"maxLength": 200, "type": "string"} in details["anyOf"]


def test_a_unit_is_shown_room_for_a_few_requests() -> None:
    item = SCHEMAS["plan"]["$defs"]["PlanItem"]["properties"]
    assert item["extra_requests"]["maxItems"] == 4
