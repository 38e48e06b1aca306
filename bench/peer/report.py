"""The tables of a results file: each tool's precision, recall and F1 (by place, and by place
and reason), its cost per change, the same by shape of change, case by case, where
reviewbot's model time went, and the goals the model half is held to."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .case import Case
from .score import Remark, Tally, found, score, tally

Row = dict[str, Any]
TOOLS = ("pr-agent", "reviewbot")


@dataclass(frozen=True)
class Series:
    """What is scored: a tool's findings, or one part of them."""

    label: str
    tool: str
    part: str | None = None


SERIES = (Series("PR-Agent", "pr-agent"),
          Series("reviewbot: everything reported", "reviewbot"),
          Series("reviewbot: the model's own findings", "reviewbot", "model"),
          Series("reviewbot: the rules' findings", "reviewbot", "rules"))


def load(path: Path) -> dict[tuple[str, str], Row]:
    """(case, tool) -> its row; a later row for the same pair replaces an earlier one."""
    rows: dict[tuple[str, str], Row] = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                rows[(row["case"], row["tool"])] = row
    return rows


def remarks(row: Row, part: str | None) -> list[Remark]:
    data = row["remarks"] if part is None else row.get("parts", {}).get(part, [])
    return [Remark.from_data(r) for r in data]


def tokens(row: Row) -> int:
    return int(row["prompt_tokens"]) + int(row["completion_tokens"])


def _prf(t: Tally) -> str:
    return f"{t.precision:.2f} | {t.recall:.2f} | {t.f1:.2f}"


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def measured(cases: Iterable[Case], rows: dict[tuple[str, str], Row]) -> list[Case]:
    """The cases every tool in the file reviewed (the tables compare like with like)."""
    tools = sorted({tool for _, tool in rows})
    return [c for c in cases if all((c.name, t) in rows for t in tools)]


def _series_rows(cases: Sequence[Case], rows: dict[tuple[str, str], Row],
                 series: Series) -> list[tuple[Case, list[Remark]]]:
    return [(c, remarks(rows[(c.name, series.tool)], series.part)) for c in cases
            if (c.name, series.tool) in rows]


def summary(cases: Sequence[Case], rows: dict[tuple[str, str], Row]) -> list[str]:
    out = ["| tool | changes | failed | place: precision | recall | F1 | place and reason: "
           "precision | recall | F1 | remarks on clean changes | calls / change | "
           "tokens / change | seconds / change |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
           "| ---: |"]
    for series in SERIES:
        scored = _series_rows(cases, rows, series)
        if not scored:
            continue
        own = [rows[(c.name, series.tool)] for c, _ in scored]
        cost = "| | |" if series.part else (
            f"{_mean([r['calls'] for r in own]):.1f} | {_mean([tokens(r) for r in own]):,.0f} "
            f"| {_mean([r['seconds'] for r in own]):.0f} |")
        failed = "" if series.part else str(sum(1 for r in own if r.get("failed")))
        out.append(f"| {series.label} | {len(scored)} | {failed} | "
                   f"{_prf(score(scored, reason=False))} | {_prf(score(scored, reason=True))} "
                   f"| {score(scored, reason=True).clean_remarks} | {cost}")
    return out


def _shape(case: Case) -> str:
    return f"{case.kind}, {case.language}"


def shapes(cases: Sequence[Case], rows: dict[tuple[str, str], Row]) -> list[str]:
    """Per shape: defects found by place and reason, remarks that name none, cost."""
    groups: dict[str, list[Case]] = defaultdict(list)
    for case in cases:
        groups[_shape(case)].append(case)
    head = ["| shape | changes | defects |"
            + "".join(f" {s.label}: found / stray |" for s in SERIES[:3])
            + " PR-Agent: tokens, s / change | reviewbot: tokens, s / change |",
            "| --- | ---: | ---: |" + " ---: |" * 5]
    body = []
    for shape in sorted(groups):
        members = groups[shape]
        cells = []
        for series in SERIES[:3]:
            t = score(_series_rows(members, rows, series), reason=True)
            cells.append(f"{t.tp} / {t.fp}")
        for tool in TOOLS:
            own = [rows[(c.name, tool)] for c in members if (c.name, tool) in rows]
            cells.append(f"{_mean([tokens(r) for r in own]):,.0f}, "
                         f"{_mean([r['seconds'] for r in own]):.0f}" if own else "")
        body.append(f"| {shape} | {len(members)} | {sum(len(c.defects) for c in members)} | "
                    + " | ".join(cells) + " |")
    return head + body


def _found_cell(case: Case, row: Row | None, part: str | None) -> str:
    if row is None:
        return ""
    if row.get("failed") and part is None:
        return "failed"
    given = remarks(row, part)
    if case.clean:
        return f"{len(given)} remarks" if given else "quiet"
    return (f"{len(found(case, given, reason=False))}/{len(found(case, given, reason=True))} "
            f"of {len(case.defects)}, {tally(case, given, reason=True).fp} stray")


def per_case(cases: Sequence[Case], rows: dict[tuple[str, str], Row]) -> list[str]:
    out = ["| case | shape | PR-Agent: calls, tokens, s | found (place/reason) | reviewbot: "
           "calls, tokens, s | found | the model's own |",
           "| --- | --- | ---: | --- | ---: | --- | --- |"]
    for case in cases:
        cells = []
        for tool in TOOLS:
            row = rows.get((case.name, tool))
            cells.append(f"{row['calls']}, {tokens(row):,}, {row['seconds']:.0f}" if row else "")
            cells.append(_found_cell(case, row, None))
        cells.append(_found_cell(case, rows.get((case.name, "reviewbot")), "model"))
        out.append(f"| {case.name} | {_shape(case)} | " + " | ".join(cells) + " |")
    return out


def time_split(cases: Sequence[Case], rows: dict[tuple[str, str], Row]) -> list[str]:
    """Each tool's seconds a change: the server reading its prompts and writing its answers
    (as the server reports them: a request the tool gave up on still kept the server busy),
    and everything else (the tool's own work, its start, a request queued behind one it gave
    up on)."""
    out = ["| tool | seconds / change | the server reading prompts | writing answers | "
           "everything else | prompt tokens the server had cached |",
           "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for tool in TOOLS:
        # Rows from before the proxy kept the server's split are left out.
        own = [rows[(c.name, tool)] for c in cases if (c.name, tool) in rows
               and all("read_s" in q for q in rows[(c.name, tool)]["requests"])]
        if not own:
            continue
        requests = [q for r in own for q in r["requests"]]
        read = sum(float(q["read_s"]) for q in requests) / len(own)
        write = sum(float(q["write_s"]) for q in requests) / len(own)
        total = sum(float(r["seconds"]) for r in own) / len(own)
        cached = sum(int(q["cached"]) for q in requests) / max(
            sum(int(q["prompt"]) for q in requests), 1)
        out.append(f"| {tool} | {total:.0f} | {read:.0f} | {write:.0f} | "
                   f"{total - read - write:.0f} | {cached:.0%} |")
    return out


def purposes(cases: Sequence[Case], rows: dict[tuple[str, str], Row]) -> list[str]:
    """reviewbot's model calls by what they were for, from each run's own ledger."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for case in cases:
        row = rows.get((case.name, "reviewbot"))
        for purpose, entry in ((row or {}).get("extra", {}).get("by_purpose") or {}).items():
            for index, key in enumerate(("calls", "tokens", "ms")):
                totals[purpose][index] += int(entry.get(key, 0))
    out = ["| purpose | calls | tokens | seconds |", "| --- | ---: | ---: | ---: |"]
    for purpose, (calls, spent, ms) in sorted(totals.items(), key=lambda kv: -kv[1][2]):
        out.append(f"| {purpose} | {calls} | {spent:,} | {ms / 1000:.0f} |")
    return out


def defects_found(cases: Sequence[Case], rows: dict[tuple[str, str], Row],
                  part: str | None) -> set[tuple[str, int]]:
    """(case, defect index) reviewbot names by place and reason."""
    hits = set()
    for case in cases:
        row = rows.get((case.name, "reviewbot"))
        if row is not None:
            given = remarks(row, part)
            hits |= {(case.name, i) for i, d in enumerate(case.defects) if d in
                     found(case, given, reason=True)}
    return hits


def goals(cases: Sequence[Case], rows: dict[tuple[str, str], Row],
          before: dict[tuple[str, str], Row] | None) -> list[str]:
    """The goals the model half is held to, as measured here."""
    both = [c for c in cases if (c.name, "pr-agent") in rows and (c.name, "reviewbot") in rows]
    if not both:
        return []

    def mean(tool: str, key: str) -> float:
        return _mean([tokens(rows[(c.name, tool)]) if key == "tokens"
                      else float(rows[(c.name, tool)][key]) for c in both])

    def f1(series: Series) -> float:
        return score(_series_rows(both, rows, series), reason=True).f1

    clean = [rows[(c.name, "reviewbot")] for c in both if c.clean]
    peer, everything, model = f1(SERIES[0]), f1(SERIES[1]), f1(SERIES[2])
    def ratio(key: str) -> float:
        return mean("reviewbot", key) / max(mean("pr-agent", key), 1e-9)

    out = [f"- tokens per change: {ratio('tokens'):.2f}x PR-Agent's (goal <= 2x)",
           f"- seconds per change: {ratio('seconds'):.2f}x PR-Agent's (goal <= 2x)",
           f"- clean changes: at most {max((r['calls'] for r in clean), default=0)} calls and "
           f"{max((tokens(r) for r in clean), default=0):,} tokens, "
           f"{sum(len(r['remarks']) for r in clean)} remarks (goal <= 2 calls, <= 4,000 tokens, "
           "no remark)",
           f"- F1 by place and reason, everything reported: {everything:.2f} against PR-Agent's "
           f"{peer:.2f} (goal >= {peer + 0.15:.2f})",
           f"- F1 by place and reason, the model's own: {model:.2f} (goal >= {peer:.2f})"]
    if before is not None:
        lost = sorted(defects_found(both, before, None) - defects_found(both, rows, None))
        out.append(f"- defects found before and not now (everything reported, place and "
                   f"reason): {', '.join(f'{c}#{i}' for c, i in lost) or 'none'}")
    return out
