"""Stage 2's contract, and every later stage's: findings, the rules' metadata, and what was
quietened and by whom."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta

from reviewbot.levels import Severity
from reviewbot.schema.records import Category, FindingSource, Frozen
from reviewbot.schema.units import ReviewUnit


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
