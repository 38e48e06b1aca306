"""Typed data that crosses stage boundaries (docs/ARCHITECTURE.md "Data contracts", seed 004).

Every stage artifact is the JSON serialisation of one of these records and loads
back into it, so any stage can be replayed from the artifact of the one before.
Records are frozen: a stage returns new objects rather than editing its input.

They are msgspec Structs, not pydantic models: our own stages build them, so they need no
validation when built, and defining ~45 pydantic models (with pydantic's import) cost the
pre-commit hook ~0.12 s of its ~0.5 s. Data that comes back from outside (a cached result, an
artifact) is decoded with `from_data`/`from_json`, which checks types, literals and bounds
and refuses unknown keys. What a *model* answers is validated by pydantic models at the
model boundary (`reviewbot/plan/reply.py`, `reviewbot/review/replies.py`), which also give
the model its JSON schema; they convert into these records.
"""

from __future__ import annotations

from base64 import b64decode
from typing import Annotated, Any, Literal, Self

import msgspec
from msgspec import Meta, field

# Re-exported: every stage imports its types from here.
from reviewbot.levels import SEVERITY_RANK as SEVERITY_RANK
from reviewbot.levels import Severity as Severity

Mode = Literal["staged", "working", "pr"]
PatchType = Literal["add", "modify", "delete", "rename", "binary", "mode"]
ContextLevel = Literal["diff_only", "function", "file_context", "full_file"]
Priority = Literal["high", "medium", "low"]
Category = Literal["security", "secrets", "bug", "performance", "maintainability", "style"]
FindingSource = Literal["rule", "model"]
Tag = Literal[
    "config_file", "routing_file", "ci_workflow", "dependency_manifest", "migration",
    "test_file", "docs", "generated", "vendored", "lockfile", "only_whitespace",
    "only_comments", "only_docs", "only_imports", "large_change", "minified",
    "security_sensitive",
]
LineKind = Literal["add", "del", "ctx"]

# Ordered from narrowest to widest; fusion and budgeting compare levels by index.
CONTEXT_LEVELS: tuple[ContextLevel, ...] = ("diff_only", "function", "file_context", "full_file")


class Frozen(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The base of every contract: immutable, built by keyword, strict when decoded.

    Each subclass repeats `frozen=True, kw_only=True`: msgspec applies `kw_only` to the
    fields a class declares itself, and mypy reads both from each class statement."""

    def replace(self, **changes: Any) -> Self:
        """A copy with some fields changed (not validated: our own code builds it)."""
        return msgspec.structs.replace(self, **changes)

    def to_data(self, *, exclude: str = "") -> dict[str, Any]:
        """Plain JSON-ready data (dicts, tuples, strings, numbers, None), without the field
        `exclude` (never converted: an artifact streams its long list separately)."""
        if not exclude:
            return msgspec.to_builtins(self)  # type: ignore[no-any-return]
        return {name: msgspec.to_builtins(getattr(self, name)) for name in self.__struct_fields__
                if name != exclude}

    def to_json(self, *, indent: int = 0) -> str:
        raw = msgspec.json.encode(self)
        return (msgspec.json.format(raw, indent=indent) if indent else raw).decode()

    @classmethod
    def from_data(cls, data: object) -> Self:
        """Decode plain data (a cache entry, our own dicts) into this record; raises
        msgspec.ValidationError on a wrong type, value or key."""
        return msgspec.convert(data, cls)

    @classmethod
    def from_json(cls, raw: bytes | str) -> Self:
        """Decode JSON (an artifact); raises msgspec.DecodeError (ValidationError is one)."""
        return msgspec.json.decode(raw, type=cls)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return cls.__struct_fields__


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


class Finding(Frozen, frozen=True, kw_only=True):
    """One problem, anchored to lines of the new side of a file (and, for one about a line
    the change removed, to that line of the base's)."""

    file_path: str
    start_line: int
    end_line: int
    severity: Severity
    category: Category
    rule_id: str
    title: str
    message: str
    suggestion: str = ""
    source: FindingSource = "rule"
    unit_id: str | None = None
    # The code the finding is about, as quoted by its author (the verifier checks it).
    evidence: str = ""
    # False when its lines are outside the change's hunks: reported in summaries, never
    # posted on a line.
    in_diff: bool = True
    # Replacement lines for start_line..end_line (a model finding's checked suggestion).
    replacement: str | None = None
    # Set when the finding is about a line the change removed (a guard deleted): that line's
    # number in the base's file. start_line and end_line are then where the removal sits in
    # the new file; a forge's comment goes on the removed line (GitHub's LEFT side, GitLab's
    # `old_line`).
    base_line: Annotated[int, Meta(ge=1)] | None = None


class RuleMeta(Frozen, frozen=True, kw_only=True):
    """What a reporter may say about a rule (reporters never import the rules)."""

    id: str
    title: str
    severity: Severity
    category: Category
    rationale: str


# --- quietenings (docs/RULES.md, "What quietens a review, and who decides it") ---------

# What quietened a finding: a comment on its line (`reviewbot: ignore`, bandit's `nosec`,
# detect-secrets' allowlist pragma), the config (`config`: a rule off or re-levelled;
# `ignore`: a file checked for secrets only), the file's kind (vendored, generated, a
# lockfile: secrets only; test code, documentation: quieter), what a secret's value says
# (`placeholder`; `encrypted`: a CI service's `secure:` value), a line or file too long to
# read line by line (`long_line`, `minified`).
QuietKind = Literal[
    "suppression", "nosec", "allowlist", "config", "ignore", "vendored", "generated",
    "lockfile", "test_code", "docs", "placeholder", "encrypted", "long_line", "minified",
]
# Who decided it: the repository as the base has it (its config, its files and folders), the
# change under review (a comment or a name it adds), or the person running reviewbot.
DecidedBy = Literal["base", "change", "user"]


class Quieted(Frozen, frozen=True, kw_only=True):
    """A finding a quietening removed (`given` None) or lowered (to `given`): still known,
    and shown wherever findings are (the summaries, JSON, SARIF as a suppressed result)."""

    # As it would have been reported: its severity is the one it would have had.
    finding: Finding
    given: Severity | None = None
    kind: QuietKind
    decided_by: DecidedBy
    # What the suppression's comment says after its directive; the glob or the setting.
    justification: str = ""


class QuietedFile(Frozen, frozen=True, kw_only=True):
    """A file the rules read for secrets only (the config's `ignore`, or its kind), named
    whether or not its other rules found anything."""

    file_path: str
    kind: QuietKind
    decided_by: DecidedBy
    # The glob that matched, for `ignore`.
    justification: str = ""
    # Whether the change gives the file its name (a new file, a rename's new name).
    new: bool = False


class RulesResult(Frozen, frozen=True, kw_only=True):
    """Step 2: units with their rule fields filled, and the findings rules made."""

    units: tuple[ReviewUnit, ...]
    findings: tuple[Finding, ...] = ()
    # What was quietened, finding by finding and file by file.
    quieted: tuple[Quieted, ...] = ()
    quieted_files: tuple[QuietedFile, ...] = ()
    # Units dropped by the config's ignore globs.
    ignored_units: int = 0
    # What the run should know about how the rules read the change (fallbacks).
    notes: tuple[str, ...] = ()


class ReviewMetadata(Frozen, frozen=True, kw_only=True):
    mode: Mode
    base_branch: str | None = None
    total_files: int
    total_changes: int
    timestamp: str


class TotalLines(Frozen, frozen=True, kw_only=True):
    added: int = 0
    removed: int = 0


class IndexSummary(Frozen, frozen=True, kw_only=True):
    changes_by_type: dict[str, int]
    total_lines: TotalLines
    files_changed: tuple[str, ...]


class ReviewIndex(Frozen, frozen=True, kw_only=True):
    review_metadata: ReviewMetadata
    summary: IndexSummary
    units: tuple[IndexUnit, ...]


class PlannerRequest(Frozen, frozen=True, kw_only=True):
    """An extra request as the planner sees it: only its type (docs/ARCHITECTURE.md)."""

    type: RequestType


class PlannerUnit(UnitShape, frozen=True, kw_only=True):
    rule_extra_requests: tuple[PlannerRequest, ...] = ()


class PlannerIndex(Frozen, frozen=True, kw_only=True):
    review_metadata: ReviewMetadata
    summary: IndexSummary
    units: tuple[PlannerUnit, ...]


class ModelStats(Frozen, frozen=True, kw_only=True):
    """What the model phase did, for the run summary."""

    # How the units were read: "change" (one call for several units), "tools" (the agent's
    # conversation), "structured" (one answer per unit), joined with "+" when a run used
    # several; or "offline".
    mode: str = "offline"
    reviewed_units: int = 0
    # Of those, the units whose review came from the result cache.
    cached_units: int = 0
    # Of those, the units whose conversation a bound ended (reviewed in part), by bound.
    partial_units: dict[str, int] = field(default_factory=dict)
    # Unit count per reason it was not reviewed by the model ("offline", "call_cap", ...).
    skipped_units: dict[str, int] = field(default_factory=dict)
    clipped_units: int = 0
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cached_tokens: int = 0
    # The model's time on the review's requests, in seconds (what a unit costs in waiting).
    review_seconds: float = 0.0
    # Only with prices in the user config (model.prices), in the prices' currency.
    cost: float | None = None


class RunStats(Frozen, frozen=True, kw_only=True):
    files: int = 0
    units: int = 0
    # Units of files the config's `ignore` names (checked for secrets only).
    ignored_units: int = 0
    added_lines: int = 0
    removed_lines: int = 0
    findings: dict[str, int] = field(default_factory=dict)
    duration_ms: int = 0
    model: ModelStats = field(default_factory=ModelStats)
    # Working mode with nothing to review: the untracked files it left out.
    untracked_files: int = 0


class ChangeDescription(Frozen, frozen=True, kw_only=True):
    """What the change does, in the model's words (a pull request reviewed with a model)."""

    overview: str = ""
    # file path -> a short phrase on what changes in it
    files: dict[str, str] = field(default_factory=dict)


class RunReport(Frozen, frozen=True, kw_only=True):
    """What `--format json` prints: the contract other tools read."""

    run_id: str
    findings: tuple[Finding, ...] = ()
    units: tuple[IndexUnit, ...] = ()
    stats: RunStats = field(default_factory=RunStats)
    description: ChangeDescription | None = None
    # What quietenings removed or lowered (RulesResult's, as the rules left them).
    quieted: tuple[Quieted, ...] = ()
    quieted_files: tuple[QuietedFile, ...] = ()
    # A file name that is not UTF-8 is shown with U+FFFD for each bad byte (JSON text cannot
    # hold the bytes): shown name -> the real name's bytes, base64. Empty for most changes.
    path_bytes: dict[str, str] = field(default_factory=dict)

    def real_path(self, shown: str) -> bytes:
        """The file's real name, as git and the disk know it."""
        encoded = self.path_bytes.get(shown)
        return b64decode(encoded) if encoded is not None else shown.encode()


# --- planning (steps 4 and 5) ----------------------------------------------------------

PlanSource = Literal["model", "heuristic"]


class PlanRequest(Frozen, frozen=True, kw_only=True):
    type: RequestType
    details: str | None = None


class PlanItem(Frozen, frozen=True, kw_only=True):
    """The planner's decision for one unit (seed 004 section 2, llm_plan). A model's answer
    is validated and bounded by `reviewbot.plan.reply.PlanReply` before it becomes one."""

    unit_id: str
    llm_context_level: ContextLevel
    extra_requests: tuple[PlanRequest, ...] = ()
    skip_review: bool = False
    reason: str = ""


class LlmPlan(Frozen, frozen=True, kw_only=True):
    """Step 4: a plan item per unit, from the model or from the heuristic planner."""

    plan: tuple[PlanItem, ...]
    # Where each unit's item came from; heuristic items say why in their reason.
    sources: dict[str, PlanSource] = field(default_factory=dict)
    notices: tuple[str, ...] = ()


class FusedItem(Frozen, frozen=True, kw_only=True):
    unit_id: str
    rule_context_level: ContextLevel
    rule_confidence: float
    llm_context_level: ContextLevel
    final_context_level: ContextLevel
    extra_requests: tuple[ExtraRequest, ...] = ()
    skip_review: bool = False
    reason: str = ""


class FusedPlan(Frozen, frozen=True, kw_only=True):
    """Step 5: the rule plan and the model plan merged (seed 004 section 3)."""

    plan: tuple[FusedItem, ...]
    # Unit ids the model named that are not in the change.
    ignored_plan_ids: tuple[str, ...] = ()
    # Requests fusion could not make executable (no symbol or keyword to search for).
    dropped_requests: tuple[str, ...] = ()


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


# --- context bundle (step 6) -------------------------------------------------------------

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


# --- review and verification (steps 7 and 8) ------------------------------------------------

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
