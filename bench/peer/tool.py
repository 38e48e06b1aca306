"""What one tool's review of one case gave: its findings as remarks, what the server was
asked (counted by the proxy), its wall time, and whether it failed."""

from __future__ import annotations

from dataclasses import dataclass, field

from .proxy import Request
from .score import Remark


@dataclass(frozen=True)
class Outcome:
    """`remarks` is everything the tool reported; `parts` names subsets of them scored on
    their own (reviewbot's "model" and "rules"); `failed` says why a review failed (its
    remarks are then empty, and it is counted as a failed review)."""

    remarks: tuple[Remark, ...] = ()
    parts: dict[str, tuple[Remark, ...]] = field(default_factory=dict)
    failed: str | None = None
    # Anything else the tool said that the scorer does not read (a free-text security note,
    # the calls by purpose).
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Row:
    """One line of the results file: one tool on one case."""

    case: str
    tool: str
    outcome: Outcome
    requests: tuple[Request, ...]
    seconds: float

    def to_data(self) -> dict[str, object]:
        return {
            "case": self.case, "tool": self.tool, "seconds": round(self.seconds, 1),
            "calls": len(self.requests),
            "prompt_tokens": sum(r.prompt_tokens for r in self.requests),
            "completion_tokens": sum(r.completion_tokens for r in self.requests),
            "failed": self.outcome.failed,
            "remarks": [r.to_data() for r in self.outcome.remarks],
            "parts": {name: [r.to_data() for r in remarks]
                      for name, remarks in self.outcome.parts.items()},
            "requests": [r.to_data() for r in self.requests],
            "extra": self.outcome.extra,
        }
