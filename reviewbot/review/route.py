"""Which kept units the review agent takes, and which are read together in one call.

The agent's loop (tools, several turns) is for where the rules see risk they could not
name: a security-sensitive unit (auth, SQL, paths, a shell, ...) that no rule finding at
warning or above explains, on a change too large to be read whole in one call. A change
that fits one call (every hunk shown uncut, its code within review/change.py CALL_TOKENS) is
read whole there, its risky units too (`[limits]
small_change_agent`, off by default): on the peer bench (docs/BENCHMARKS.md) the agent's
conversations on small changes took 3 to 5 calls and up to five minutes a change, and found
fewer of their defects than the one call that sees the whole change with its context. A
unit a rule finding explains is read in the one call, which is told that finding; so is
every other unit. Test code and documentation never take the agent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reviewbot.levels import SEVERITY_RANK
from reviewbot.schema.bundles import BundleItem
from reviewbot.schema.findings import Finding
from reviewbot.schema.units import ReviewUnit

_NOT_FOR_THE_AGENT = frozenset({"test_file", "docs", "only_docs", "only_comments",
                                "only_whitespace"})


def wants_agent(unit: ReviewUnit, findings: Sequence[Finding]) -> bool:
    if "security_sensitive" not in unit.tags or _NOT_FOR_THE_AGENT & set(unit.tags):
        return False
    return not any(SEVERITY_RANK[f.severity] >= SEVERITY_RANK["warning"] for f in findings)


Routed = tuple[list[tuple[ReviewUnit, BundleItem]], list[tuple[ReviewUnit, BundleItem]]]


def route(units: Sequence[ReviewUnit], items: Sequence[BundleItem],
          findings: Mapping[str | None, Sequence[Finding]], whole: bool = False) -> Routed:
    """(the agent's units, the one call's units), each with its bundle item, in the
    bundle's order. `whole`: the change is read whole in one call, and the agent takes
    nothing."""
    by_id = {unit.unit_id: unit for unit in units}
    agent: list[tuple[ReviewUnit, BundleItem]] = []
    one_call: list[tuple[ReviewUnit, BundleItem]] = []
    for item in items:
        unit = by_id[item.unit_id]
        side = (agent if not whole and wants_agent(unit, findings.get(unit.unit_id, ()))
                else one_call)
        side.append((unit, item))
    return agent, one_call
