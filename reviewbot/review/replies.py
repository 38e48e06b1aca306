"""A finding as the model sends it (the `record_finding` tool's arguments, an item of a
structured answer): validated and bounded by pydantic, which also writes the JSON schema
the model is given, then kept as the run's own `RecordedFinding` record.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from reviewbot.lazy_re import lazy_re
from reviewbot.levels import Severity
from reviewbot.model.replies import clipped_list, clipped_text, shown_bound, visible_text
from reviewbot.schema.records import Category
from reviewbot.schema.reviews import (
    MAX_PATH_CHARS,
    MAX_TEXT_CHARS,
    MAX_TITLE_CHARS,
    RecordedFinding,
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


# What a description of a change may say (`review/describe.py`, and a pull request's one-call
# review).
MAX_DESCRIBED_FILES = 60
MAX_OVERVIEW_CHARS = 400
MAX_FILE_CHARS = 160


class FileWhat(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: Annotated[str, BeforeValidator(clipped_text(500))]
    what: Annotated[str, BeforeValidator(visible_text),
                    BeforeValidator(clipped_text(MAX_FILE_CHARS)),
                    shown_bound(maxLength=MAX_FILE_CHARS)]


# What a one-call review of a change may report: defects, never style (a small model asked
# for "anything worth knowing" remarks on docstrings of a clean rename).
ChangeCategory = Literal["bug", "security", "performance"]
ChangeSeverity = Literal["error", "warning"]
_CHANGE_CATEGORIES = frozenset(get_args(ChangeCategory))
_CHANGE_SEVERITIES = frozenset(get_args(ChangeSeverity))
# Short by schema: on a CPU a reply's tokens cost ten times a prompt's, and a grammar ends
# each text at its bound.
MAX_CHANGE_FINDINGS = 3
MAX_PROBLEM_CHARS = 60
MAX_EXPLANATION_CHARS = 200
MAX_FIX_CHARS = 120
MAX_CODE_CHARS = 120
# A description in the same call: a sentence, and a phrase a file.
MAX_CALL_OVERVIEW_CHARS = 240
MAX_CALL_FILE_CHARS = 100


class ChangeFinding(BaseModel):
    """One defect, as a one-call review reports it: a numbered line, the code there, the
    defect's name, one sentence on what goes wrong. Short by schema: a grammar-constrained
    server stops each text at its bound."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True, title="Defect")

    file_path: Annotated[str, BeforeValidator(clipped_text(MAX_PATH_CHARS))]
    line: int = Field(ge=1)
    code: Annotated[str, BeforeValidator(clipped_text(MAX_CODE_CHARS)),
                    shown_bound(maxLength=MAX_CODE_CHARS)] = ""
    problem: Annotated[str, BeforeValidator(clipped_text(MAX_PROBLEM_CHARS)),
                       shown_bound(maxLength=MAX_PROBLEM_CHARS)] = Field(min_length=1)
    category: ChangeCategory
    severity: ChangeSeverity
    explanation: Annotated[str, BeforeValidator(clipped_text(MAX_EXPLANATION_CHARS)),
                           shown_bound(maxLength=MAX_EXPLANATION_CHARS)] = Field(min_length=1)
    fix: Annotated[str, BeforeValidator(clipped_text(MAX_FIX_CHARS)),
                   shown_bound(maxLength=MAX_FIX_CHARS)] = ""

    def recorded(self, shown: str) -> RecordedFinding:
        """As the agent's record: `shown` is the code at `line` as the model was shown it,
        the evidence when the model quoted none."""
        evidence = _unnumbered(self.code).strip() or shown.strip() or self.problem
        return RecordedFinding(
            file_path=self.file_path, start_line=self.line, end_line=self.line,
            severity=self.severity, category=self.category, title=self.problem.strip(),
            message=self.explanation.strip(), evidence=evidence[:MAX_TEXT_CHARS],
            fix_description=self.fix.strip())


def _defects_only(value: object) -> object:
    """A remark of a kind a one-call review may not make (style, maintainability, info) is
    dropped, not a reason to refuse the whole answer and ask again."""
    if not isinstance(value, list):
        return value
    return [item for item in value if not isinstance(item, dict)
            or (item.get("category") in _CHANGE_CATEGORIES
                and item.get("severity") in _CHANGE_SEVERITIES)][:MAX_CHANGE_FINDINGS]


_Defects = Annotated[list[ChangeFinding], BeforeValidator(_defects_only),
                     shown_bound(maxItems=MAX_CHANGE_FINDINGS)]


class ChangeReply(BaseModel):
    """A one-call review's answer: the defects (most changes have none)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    findings: _Defects = Field(default_factory=list)


class DescribedChangeReply(BaseModel):
    """A pull request's one-call review: what it does (for the walkthrough), then its
    defects. The description comes first: the model reads the change before judging it."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    overview: Annotated[str, BeforeValidator(clipped_text(MAX_CALL_OVERVIEW_CHARS)),
                        shown_bound(maxLength=MAX_CALL_OVERVIEW_CHARS)] = ""
    files: Annotated[list[FileWhat], BeforeValidator(clipped_list(MAX_DESCRIBED_FILES)),
                     shown_bound(maxItems=MAX_DESCRIBED_FILES)] = Field(default_factory=list)
    findings: _Defects = Field(default_factory=list)


def change_schema(reply: type[BaseModel], paths: Sequence[str]) -> dict[str, Any]:
    """The schema sent for one call: a finding's file (and a described file) one of the
    call's paths, so a grammar-constrained server cannot name another."""
    shown: dict[str, Any] = _without_descriptions(copy.deepcopy(reply.model_json_schema()))
    finding = shown["$defs"]["ChangeFinding"]
    finding["properties"]["file_path"]["enum"] = list(paths)
    # Shown as required, so a grammar has the model write them (the reply model still
    # takes an answer without them).
    finding["required"] = list(finding["properties"])
    if "FileWhat" in shown["$defs"]:
        shown["$defs"]["FileWhat"]["properties"]["path"]["enum"] = list(paths)
        shown["$defs"]["FileWhat"]["properties"]["what"]["maxLength"] = MAX_CALL_FILE_CHARS
        shown["properties"]["files"]["maxItems"] = len(paths)
    return shown


def _without_descriptions(schema: Any) -> Any:
    """The schema without the classes' docstrings: they are for people, not the model."""
    if isinstance(schema, dict):
        return {key: _without_descriptions(value) for key, value in schema.items()
                if key != "description"}
    if isinstance(schema, list):
        return [_without_descriptions(value) for value in schema]
    return schema


# A line as the prompt shows it: its diff mark, its number, a bar (`+   12 | code`).
_SHOWN_LINE = lazy_re(r"^[+\- ]?\s*\d+ \| ?", re.MULTILINE)


def _unnumbered(code: str) -> str:
    """The code a model copied with the marks and numbers it was shown, without them."""
    return _SHOWN_LINE.sub("", code)
