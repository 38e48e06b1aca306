"""Stage 6's contract: the code each unit needs, within budgets."""

from __future__ import annotations

from typing import Literal

from msgspec import field

from reviewbot.schema.records import ContextLevel, Frozen
from reviewbot.schema.units import ExtraRequest, LineNumbers

HitKind = Literal["definition", "call", "reference"]


class HunkRange(Frozen, frozen=True, kw_only=True):
    old_start: int
    old_length: int
    new_start: int
    new_length: int


class BundleMeta(Frozen, frozen=True, kw_only=True):
    file_path: str
    old_path: str | None = None
    language: str
    tags: tuple[str, ...] = ()
    hunk_range: HunkRange | None = None
    line_numbers: LineNumbers
    location: str


class CodeHit(Frozen, frozen=True, kw_only=True):
    """A place in the repository: a call site, a definition, a keyword hit."""

    file_path: str
    line: int
    text: str
    kind: HitKind = "reference"
    # The function around the hit, by dotted name, and its code (clipped).
    function: str | None = None
    snippet: str = ""


class BundleItem(Frozen, frozen=True, kw_only=True):
    """Everything a reviewer gets for one unit (seed 004 section 4)."""

    unit_id: str
    meta: BundleMeta
    final_context_level: ContextLevel
    extra_requests: tuple[ExtraRequest, ...] = ()
    diff: str = ""
    function_context: str | None = None
    file_context: str | None = None
    full_file: str | None = None
    previous_version: str | None = None
    callers: tuple[CodeHit, ...] = ()
    search_hits: tuple[CodeHit, ...] = ()
    class_methods: tuple[str, ...] = ()
    scanner_issues: tuple[str, ...] = ()
    # What the budget or the caps cut, in words ("dropped search_hits (812 tokens)").
    clipped: tuple[str, ...] = ()
    tokens: int = 0
    # Whether the unit got all the context its plan asked for.
    complete: bool = True


class BundleStats(Frozen, frozen=True, kw_only=True):
    units: int = 0
    skipped: int = 0
    full_context_units: int = 0
    tokens: int = 0
    unit_budget: int = 0
    run_budget: int = 0


class ContextBundle(Frozen, frozen=True, kw_only=True):
    """Step 6: the context for every unit the fused plan keeps."""

    items: tuple[BundleItem, ...] = ()
    stats: BundleStats = field(default_factory=BundleStats)
    # Why no bundle was built (an offline run: nothing reads it); None when it was.
    not_built: str | None = None
