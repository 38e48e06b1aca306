"""What reporters say about model findings' rule ids (`model.<category>`)."""

from __future__ import annotations

from typing import get_args

from reviewbot.schema.findings import RuleMeta
from reviewbot.schema.records import Category


def model_rule_metadata() -> dict[str, RuleMeta]:
    """What reporters say about model findings' ids (`model.<category>`)."""
    return {f"model.{category}": RuleMeta(
        id=f"model.{category}", title=f"Review model: {category}", severity="warning",
        category=category, rationale="Found by the review model and checked against the "
        "change: the file is in the change and the quoted code is at the lines named.")
        for category in get_args(Category)}
