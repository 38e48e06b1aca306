"""Stage 9's contract: the run's report, its statistics and the change's description."""

from __future__ import annotations

from base64 import b64decode

from msgspec import field

from reviewbot.schema.findings import Finding, Quieted, QuietedFile
from reviewbot.schema.records import Frozen
from reviewbot.schema.units import IndexUnit


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
