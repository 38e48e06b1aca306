"""Stages 7-8's contracts: the model calls made, what the reviewer recorded and what was refused,
and the findings as verified."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, field

from reviewbot.levels import Severity
from reviewbot.schema.findings import Finding
from reviewbot.schema.records import Category, Frozen
from reviewbot.schema.runs import ChangeDescription


class ModelCall(Frozen, frozen=True, kw_only=True):
    """One HTTP request to a model: what a run spent, never what it sent or the key."""

    purpose: str
    model: str
    # The answer being sought (2: after an invalid answer), and the HTTP retry within it.
    attempt: int
    retry: int = 0
    outcome: str
    latency_ms: int
    tokens_in: int = 0
    tokens_out: int = 0
    cached_tokens: int = 0
    unit_id: str | None = None
    error: str | None = None


class ModelTotals(Frozen, frozen=True, kw_only=True):
    requests: int = 0
    ok: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cached_tokens: int = 0
    latency_ms: int = 0


class ModelCallLog(Frozen, frozen=True, kw_only=True):
    calls: tuple[ModelCall, ...] = ()
    totals: ModelTotals = field(default_factory=ModelTotals)


MAX_PATH_CHARS = 500


MAX_TITLE_CHARS = 120


MAX_TEXT_CHARS = 2000


class RecordedFinding(Frozen, frozen=True, kw_only=True):
    """A finding as the model recorded it, after `reviewbot.review.replies.FindingArgs`
    validated and bounded it (the bounds are checked again when a cached review is read)."""

    file_path: Annotated[str, Meta(min_length=1, max_length=MAX_PATH_CHARS)]
    start_line: Annotated[int, Meta(ge=1)]
    end_line: Annotated[int, Meta(ge=1)]
    severity: Severity
    category: Category
    title: Annotated[str, Meta(min_length=1, max_length=MAX_TITLE_CHARS)]
    message: Annotated[str, Meta(min_length=1, max_length=MAX_TEXT_CHARS)]
    # The exact code the finding is about, copied from the lines it names.
    evidence: Annotated[str, Meta(min_length=1, max_length=MAX_TEXT_CHARS)]
    fix_description: Annotated[str, Meta(max_length=MAX_TEXT_CHARS)] = ""


class Rejection(Frozen, frozen=True, kw_only=True):
    finding: RecordedFinding
    reason: str
    round: int


# tools: the agent's conversation; structured: one answer per unit from a server without
# tools; change: several units (a whole small change) read in one structured call.
ReviewMode = Literal["tools", "structured", "change"]


# Why a conversation ended before it finished: a bound, and its units were reviewed in part.
BOUND_STOPS = frozenset({"turn_limit", "tool_call_limit", "token_limit", "deadline"})


class UnitReview(Frozen, frozen=True, kw_only=True):
    """Step 7 for one unit (or a few related units of one file): one conversation."""

    unit_ids: tuple[str, ...]
    file_path: str
    mode: ReviewMode
    turns: int = 0
    tool_calls: int = 0
    tokens: int = 0
    # Findings that passed the in-conversation checks, as the model recorded them.
    recorded: tuple[RecordedFinding, ...] = ()
    # Findings sent back to the model (and why), round by round.
    rejected: tuple[Rejection, ...] = ()
    verification_rounds: int = 0
    # finished | turn_limit | tool_call_limit | token_limit | deadline | no_tool_calls |
    # repeated_answer | model_unavailable: <reason>
    stop_reason: str = "finished"
    summary: str = ""
    # Taken from the result cache: no model call was made for it in this run.
    cached: bool = False
    # Tool calls the model wrote as text, recovered and run like the others.
    text_tool_calls: int = 0


class ReviewResult(Frozen, frozen=True, kw_only=True):
    """Step 7: every conversation, and the units no model reviewed (with the reason)."""

    reviews: tuple[UnitReview, ...] = ()
    skipped: dict[str, str] = field(default_factory=dict)
    mode: str = "offline"
    notices: tuple[str, ...] = ()
    # A pull request's description, when the one call that read the whole change gave it.
    description: ChangeDescription | None = None


class Reanchored(Frozen, frozen=True, kw_only=True):
    title: str
    file_path: str
    from_lines: tuple[int, int]
    to_lines: tuple[int, int]


class Dropped(Frozen, frozen=True, kw_only=True):
    title: str
    file_path: str
    reason: str


class SuggestionStats(Frozen, frozen=True, kw_only=True):
    asked: int = 0
    attached: int = 0
    rejected: dict[str, int] = field(default_factory=dict)


class VerifiedFindings(Frozen, frozen=True, kw_only=True):
    """Step 8: the model's findings anchored to the diff, deduplicated, with suggestions."""

    findings: tuple[Finding, ...] = ()
    reanchored: tuple[Reanchored, ...] = ()
    dropped: tuple[Dropped, ...] = ()
    # Model findings that restated another finding ("<title> -> <rule id or title>").
    merged: tuple[str, ...] = ()
    # Findings kept at the lines the model numbered, their quote not being in the file.
    by_line: tuple[str, ...] = ()
    suggestions: SuggestionStats = field(default_factory=SuggestionStats)
