"""A finding as the model sends it (the `record_finding` tool's arguments, an item of a
structured answer): validated and bounded by pydantic, which also writes the JSON schema
the model is given, then kept as the run's own `RecordedFinding` record.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from reviewbot.model.replies import visible_text
from reviewbot.schema import (
    MAX_PATH_CHARS,
    MAX_TEXT_CHARS,
    MAX_TITLE_CHARS,
    Category,
    RecordedFinding,
    Severity,
)

# A model's words, without control characters or bidi overrides (the file path is checked
# against the change's paths instead, by the verifier).
_Visible = Annotated[str, BeforeValidator(visible_text)]


class FindingArgs(BaseModel):
    """The same fields and bounds as `RecordedFinding` (which checks them again when a
    cached review is read), with pydantic's schema for the model."""

    # The title is the name the model has always seen in its schema.
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True,
                              title="RecordedFinding")

    file_path: str = Field(min_length=1, max_length=MAX_PATH_CHARS)
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    severity: Severity
    category: Category
    title: _Visible = Field(min_length=1, max_length=MAX_TITLE_CHARS)
    message: _Visible = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    evidence: _Visible = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    fix_description: _Visible = Field(default="", max_length=MAX_TEXT_CHARS)

    def recorded(self) -> RecordedFinding:
        return RecordedFinding(**self.model_dump())
