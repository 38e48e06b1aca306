"""Bounding what a model answers: text and lists longer than a limit are cut, not refused
(a long but useful answer is still used), and a cut text says how much was cut. Every text
a model writes loses its control characters and bidi overrides here (`terminal.visible`),
before any stage or reporter sees it.

For pydantic `BeforeValidator`s on the reply models (`reviewbot/plan/reply.py`,
`reviewbot/review/replies.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import Field

from reviewbot.text.terminal import visible


def visible_text(value: object) -> object:
    return visible(value) if isinstance(value, str) else value


def clipped_text(limit: int) -> Callable[[object], object]:
    def clip(value: object) -> object:
        if isinstance(value, str) and len(value) > limit:
            value = value[:limit] + f"... [{len(value) - limit:,} characters cut]"
        return visible_text(value)
    return clip


def clipped_list(limit: int) -> Callable[[object], object]:
    def clip(value: object) -> object:
        return value[:limit] if isinstance(value, list | tuple) else value
    return clip


def shown_bound(**bounds: int) -> Any:
    """A bound the model is shown in its JSON schema (`maxLength`, `maxItems`) but that is not
    enforced by refusing (the clipping validators above cut what is over it). Servers that
    compile the schema into a grammar (llama.cpp) then stop a string or a list there instead
    of letting a small model write until its reply is cut."""
    return Field(json_schema_extra=dict(bounds))
