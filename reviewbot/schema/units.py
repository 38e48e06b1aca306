"""Stage 1's contract: the change read into review units (hunks, their lines, metrics and line
numbers), what was asked to be diffed, and the diff's result."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, field

from reviewbot.schema.records import ContextLevel, Frozen, LineKind, Mode, PatchType, Priority, Tag


class DiffLine(Frozen, frozen=True, kw_only=True):
    """One line of a hunk with its line number on each side (None where absent)."""

    kind: LineKind
    text: str
    old_lineno: int | None = None
    new_lineno: int | None = None
    # git's "\ No newline at end of file" applied to this line.
    no_newline: bool = False


class Hunk(Frozen, frozen=True, kw_only=True):
    header: str
    old_start: int
    old_length: int
    new_start: int
    new_length: int
    section: str = ""
    lines: tuple[DiffLine, ...] = ()

    def added(self) -> tuple[DiffLine, ...]:
        return tuple(line for line in self.lines if line.kind == "add")

    def removed(self) -> tuple[DiffLine, ...]:
        return tuple(line for line in self.lines if line.kind == "del")

    def text(self) -> str:
        """The hunk as unified-diff text (header and body)."""
        marks = {"add": "+", "del": "-", "ctx": " "}
        body = "".join(f"{marks[line.kind]}{line.text}\n" for line in self.lines)
        return f"{self.header}\n{body}"


class Metrics(Frozen, frozen=True, kw_only=True):
    added_lines: int = 0
    removed_lines: int = 0
    # Hunks in the whole file, so a planner sees how scattered the file's change is.
    hunk_count: int = 0


class LineNumbers(Frozen, frozen=True, kw_only=True):
    """Compact ranges such as "L20-L35"; empty when that side has no lines."""

    new_compact: str = ""
    old_compact: str = ""


RequestType = Literal[
    "previous_version", "callers", "search_callers", "search", "search_config_usage",
    "search_implementations", "search_model_usage", "search_class_methods", "scanner_issues",
]


# Requests that need a symbol to search for, and those that need a keyword.
SYMBOL_REQUESTS: frozenset[str] = frozenset({
    "callers", "search_callers", "search_implementations", "search_model_usage",
    "search_class_methods",
})


KEYWORD_REQUESTS: frozenset[str] = frozenset({"search", "search_config_usage"})


class ExtraRequest(Frozen, frozen=True, kw_only=True):
    """A request for more context (docs/ARCHITECTURE.md lists the types the context stage runs)."""

    type: RequestType
    details: str | None = None
    symbol: str | None = None
    keyword: str | None = None


class AgentDecision(Frozen, frozen=True, kw_only=True):
    context_level: ContextLevel = "diff_only"
    priority: Priority = "low"


class UnitShape(Frozen, frozen=True, kw_only=True):
    """What every view of a unit shares: where it is, its kind, its size, its rule rating."""

    unit_id: str
    file_path: str
    patch_type: PatchType
    tags: tuple[Tag, ...] = ()
    metrics: Metrics = field(default_factory=Metrics)
    line_numbers: LineNumbers = field(default_factory=LineNumbers)
    # Rule fields: neutral until the rule stage fills them.
    rule_context_level: ContextLevel = "diff_only"
    rule_confidence: Annotated[float, Meta(ge=0.0, le=1.0)] = 0.0


# A unit's rule note that says why it is security sensitive: the reasons follow, by commas.
# The rules write it and the reports read it, so it belongs to the record both share.
SECURITY_NOTE = "security_sensitive: "


class IndexUnit(UnitShape, frozen=True, kw_only=True):
    """A unit in review_index: everything but the diff text (seed 004 section 6)."""

    old_path: str | None = None
    language: str = "text"
    rule_notes: tuple[str, ...] = ()
    rule_extra_requests: tuple[ExtraRequest, ...] = ()
    agent_decision: AgentDecision = field(default_factory=AgentDecision)

    @property
    def security_reasons(self) -> list[str]:
        """The reasons the unit's rule notes give for its security_sensitive tag."""
        return [reason for note in self.rule_notes if note.startswith(SECURITY_NOTE)
                for reason in note.removeprefix(SECURITY_NOTE).split(", ")]


class ReviewUnit(IndexUnit, frozen=True, kw_only=True):
    """One hunk of the change (or the whole file when it has no hunks)."""

    old_mode: str | None = None
    new_mode: str | None = None
    hunk: Hunk | None = None


class ChangeRequest(Frozen, frozen=True, kw_only=True):
    """What to diff: the user's mode and revisions, resolved to what git compared."""

    mode: Mode
    base: str | None = None
    head: str | None = None
    include_untracked: bool = False
    # Compare with the empty tree: every commit up to head (pr: a branch's first push), or
    # every tracked file (working: `pre-commit run --all-files` with nothing staged).
    base_is_root: bool = False
    # Also check each commit of a pr range for secrets a later commit removed again.
    check_history: bool = False


class HistoryLine(Frozen, frozen=True, kw_only=True):
    """A line added by one commit of the range and no longer in the change's result."""

    commit: str
    file_path: str
    line: int
    text: str


class Link(Frozen, frozen=True, kw_only=True):
    """A symlink of the reviewed side, as what it is imported or run as: the file it leads
    to, read in the link's language (diff/languages.py)."""

    path: str
    target: str
    language: str
    # The change adds the link or gives it another target (its unit's id).
    unit_id: str | None = None


class DiffResult(Frozen, frozen=True, kw_only=True):
    """Step 1: the change as review units."""

    request: ChangeRequest
    repo_root: str
    # The commit (or empty tree) the old side of the diff comes from.
    base_rev: str
    # The commit on the new side; None when the new side is the index or working tree.
    head_rev: str | None = None
    base_branch: str | None = None
    units: tuple[ReviewUnit, ...] = ()
    history: tuple[HistoryLine, ...] = ()
    # What the run should know about how the change was read (limits hit, fallbacks).
    notes: tuple[str, ...] = ()
    # Paths that are not UTF-8 (shown with U+FFFD) -> their bytes in hex, to read the files.
    raw_paths: dict[str, str] = field(default_factory=dict)
    # Symlinks that make a file of the change, or one a link the change adds leads to, code
    # of another language.
    links: tuple[Link, ...] = ()
