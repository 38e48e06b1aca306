"""Step 6: the context bundle, one item per unit the fused plan keeps (seed 004 section 4).

Per unit: the diff (with line numbers), then by level its function, the file's skeleton,
or the whole file, then what its extra requests fetch. Within the unit's and the run's
token budgets: when a budget bites the least valuable parts go first, and the item says
exactly what was dropped or clipped. Every part goes through the run's redaction pass, with
the conventions of the file it came from (a bare `KEY=value` is a literal in a .env file).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reviewbot.code.lexical import is_import
from reviewbot.code.syntax import Span, SyntaxIndex, spans
from reviewbot.config import Config
from reviewbot.context.budget import (
    MAX_FULL_FILE_LINES,
    clip_lines,
    estimate_tokens,
    numbered,
)
from reviewbot.context.requests import HANDLERS, UnitContext
from reviewbot.context.search import MAX_SEARCHES_PER_RUN, SearchBudget, Searcher
from reviewbot.lazy_re import lazy_re
from reviewbot.repo.source import RepoSource
from reviewbot.schema.bundles import (
    BundleItem,
    BundleMeta,
    BundleStats,
    CodeHit,
    ContextBundle,
    HunkRange,
)
from reviewbot.schema.findings import Finding
from reviewbot.schema.plans import FusedItem, FusedPlan
from reviewbot.schema.records import CONTEXT_LEVELS
from reviewbot.schema.units import ReviewUnit
from reviewbot.text.redaction import Redactor

MAX_DIFF_LINES = 300
MAX_FUNCTION_LINES = 80
# Dropped first to last when a budget bites; the diff is never dropped, only clipped.
# Call sites lose their code first, then their lines, and go last of all: where a changed
# function is called is what a reviewer cannot find from the diff.
DROP_ORDER = ("search_hits", "class_methods", "full_file", "file_context", "callers:code",
              "previous_version", "function_context", "callers:lines", "callers",
              "scanner_issues")
_LIST_PARTS = frozenset({"callers", "search_hits", "class_methods", "scanner_issues"})
_PRIORITY = {"high": 0, "medium": 1, "low": 2}


def build_bundle(fused: FusedPlan, units: Sequence[ReviewUnit], findings: Sequence[Finding],
                 source: RepoSource, config: Config,
                 redactor: Redactor | None = None) -> ContextBundle:
    by_id = {unit.unit_id: unit for unit in units}
    kept = [item for item in fused.plan if not item.skip_review and item.unit_id in by_id]
    # The run's budget goes to the riskiest units first.
    order = sorted(kept, key=lambda i: _PRIORITY[by_id[i.unit_id].agent_decision.priority])
    remaining = config.limits.context_run_tokens
    built: dict[str, BundleItem] = {}
    redactor = redactor or Redactor()
    searches = SearchBudget()
    by_unit: dict[str | None, list[Finding]] = {}
    for finding in findings:
        by_unit.setdefault(finding.unit_id, []).append(finding)
    for plan_item in order:
        unit = by_id[plan_item.unit_id]
        own = by_unit.get(unit.unit_id, [])
        item = build_item(unit, plan_item, own, source, min(config.limits.context_unit_tokens,
                                                            max(remaining, 0)), redactor,
                          searches)
        remaining -= item.tokens
        built[unit.unit_id] = item
    items = tuple(built[i.unit_id] for i in kept)
    return ContextBundle(items=items, stats=BundleStats(
        units=len(items), skipped=len(fused.plan) - len(kept),
        full_context_units=sum(1 for i in items if i.complete),
        tokens=sum(i.tokens for i in items), unit_budget=config.limits.context_unit_tokens,
        run_budget=config.limits.context_run_tokens))


def build_item(unit: ReviewUnit, plan_item: FusedItem, findings: list[Finding],
               source: RepoSource, budget: int, redactor: Redactor | None = None,
               searches: SearchBudget | None = None) -> BundleItem:
    clipped: list[str] = []
    parts = _level_parts(unit, plan_item, source, clipped)
    searcher = Searcher(source, unit.file_path, searches or SearchBudget())
    ctx = UnitContext(unit=unit, source=source, searcher=searcher, findings=findings)
    for request in plan_item.extra_requests:
        fetched: dict[str, Any] = dict(HANDLERS[request.type](ctx, request))
        for name, value in fetched.items():
            parts[name] = (parts.get(name) or []) + value if name in _LIST_PARTS else value
    if searcher.skipped:
        clipped.append(f"{searcher.skipped} searches skipped: the run's "
                       f"{MAX_SEARCHES_PER_RUN} searches were spent")
    redactor = redactor or Redactor()
    parts = {name: _redacted(value, redactor, unit.file_path) for name, value in parts.items()}
    complete = _fit(parts, budget, clipped) and not searcher.skipped
    fields: dict[str, Any] = {k: tuple(v) if k in _LIST_PARTS else v for k, v in parts.items()}
    return BundleItem(
        unit_id=unit.unit_id, meta=_meta(unit), final_context_level=plan_item.final_context_level,
        extra_requests=plan_item.extra_requests, clipped=tuple(clipped),
        tokens=sum(_tokens(v) for v in parts.values()), complete=complete, **fields)


def _level_parts(unit: ReviewUnit, plan_item: FusedItem, source: RepoSource,
                 clipped: list[str]) -> dict[str, Any]:
    level = CONTEXT_LEVELS.index(plan_item.final_context_level)
    diff, cut = clip_lines(render_diff(unit), MAX_DIFF_LINES)
    if cut:
        clipped.append(f"diff clipped at {MAX_DIFF_LINES} lines")
    parts: dict[str, Any] = {"diff": diff}
    if level >= CONTEXT_LEVELS.index("function"):
        parts["function_context"] = function_context(unit, source, clipped)
    if level >= CONTEXT_LEVELS.index("file_context"):
        parts["file_context"] = file_skeleton(unit, source)
    if level >= CONTEXT_LEVELS.index("full_file"):
        text = source.new_text(unit.file_path)
        if text is not None:
            parts["full_file"], cut = numbered(text.split("\n"), 1, text.count("\n") + 1,
                                               f"# {unit.file_path}", MAX_FULL_FILE_LINES)
            if cut:
                clipped.append(f"full_file clipped at {MAX_FULL_FILE_LINES} lines")
    return parts


def diff_clipped(unit: ReviewUnit) -> bool:
    """Whether the unit's item shows its hunk cut (`_level_parts`: the hunk's lines and its
    header, at most MAX_DIFF_LINES)."""
    return unit.hunk is not None and len(unit.hunk.lines) + 1 > MAX_DIFF_LINES


def render_diff(unit: ReviewUnit) -> str:
    """The hunk with each line's number (new side; old side for removed lines)."""
    hunk = unit.hunk
    where = unit.line_numbers.new_compact or unit.line_numbers.old_compact
    header = f"@@ {unit.file_path}:{where} @@"
    if hunk is None:
        modes = f" ({unit.old_mode} -> {unit.new_mode})" if unit.old_mode != unit.new_mode else ""
        old = f" from {unit.old_path}" if unit.old_path else ""
        return f"{header}\n[{unit.patch_type}{old}{modes}: no text change to show]"
    marks = {"add": "+", "del": "-", "ctx": " "}
    body = [f"{marks[line.kind]}{(line.new_lineno or line.old_lineno or 0):>5} | {line.text}"
            for line in hunk.lines]
    return "\n".join([header, *body])


def function_context(unit: ReviewUnit, source: RepoSource, clipped: list[str]) -> str | None:
    """The enclosing function (or class) of each changed line; old side for deletions."""
    hunk = unit.hunk
    if hunk is None:
        return None
    added = [line.new_lineno for line in hunk.added() if line.new_lineno]
    side_path = unit.file_path if added else (unit.old_path or unit.file_path)
    text = source.new_text(side_path) if added else source.old_text(side_path)
    lines_changed = added or [line.old_lineno for line in hunk.removed() if line.old_lineno]
    if not text or not lines_changed:
        return None
    found = _enclosing_spans(SyntaxIndex(text, unit.language), lines_changed)
    if not found:
        return None
    lines = text.split("\n")
    rendered = []
    for span in found:
        block, cut = numbered(lines, span.start, span.end,
                              f"# {span.qualname} ({side_path}" + ("" if added else ", before")
                              + ")", MAX_FUNCTION_LINES)
        rendered.append(block)
        if cut:
            clipped.append(f"function_context {span.qualname} clipped at "
                           f"{MAX_FUNCTION_LINES} lines")
    return "\n\n".join(rendered)


def _enclosing_spans(index: SyntaxIndex, lines: list[int]) -> list[Span]:
    """The definitions around the lines, in the order of the lines, each once. Linear in the
    lines: a line inside the definition just found needs no look-up (a new file's every
    line would otherwise walk the tree), and nothing is compared with every span found."""
    found: dict[Span, None] = {}
    last: Span | None = None
    for number in sorted(set(lines)):
        if last is not None and last.contains(number):
            continue
        span = index.at(number, "function") or index.at(number)
        if span is not None:
            last = span
            found.setdefault(span)
    return list(found)


_ASSIGNMENT = lazy_re(r"^[A-Za-z_][\w.]*\s*(?::[^=]+)?=(?!=)")


def file_skeleton(unit: ReviewUnit, source: RepoSource) -> str | None:
    """Imports, module-level assignments and every definition's signature line."""
    text = source.new_text(unit.file_path)
    if text is None:
        return None
    lines = text.split("\n")
    keep: dict[int, str] = {}
    for number, line in enumerate(lines, 1):
        if (is_import(line, unit.language) and not line[:1].isspace()) or _ASSIGNMENT.match(line):
            keep[number] = line
    for span in spans(text, unit.language):
        number = next((n for n in range(span.start, span.end + 1)
                       if span.name in lines[n - 1]), span.start)
        keep[number] = lines[number - 1]
    body = [f"{n:>5} | {keep[n]}" for n in sorted(keep)]
    return "\n".join([f"# {unit.file_path}: imports, module-level names, signatures", *body])


def _fit(parts: dict[str, Any], budget: int, clipped: list[str]) -> bool:
    """Drop the least valuable parts until the item fits; True if nothing had to go."""
    complete = True
    sizes = {name: _tokens(value) for name, value in parts.items()}
    for step in DROP_ORDER:
        if sum(sizes.values()) <= budget:
            return complete
        if _shed(parts, sizes, step, clipped):
            complete = False
    if _tokens(parts["diff"]) > budget:
        lines = parts["diff"].split("\n")
        keep = max(5, int(len(lines) * budget / max(_tokens(parts["diff"]), 1)))
        parts["diff"], _ = clip_lines(parts["diff"], keep)
        clipped.append(f"diff clipped to {keep} lines for the budget")
        complete = False
    return complete


def _shed(parts: dict[str, Any], sizes: dict[str, int], step: str, clipped: list[str]) -> bool:
    """One step of DROP_ORDER: a part dropped, or call sites thinned; whether it shed any."""
    name, _, thin = step.partition(":")
    if not parts.get(name):
        return False
    if not thin:
        clipped.append(f"dropped {name} ({sizes[name]:,} tokens) for the budget")
        parts[name] = [] if name in _LIST_PARTS else None
        sizes[name] = 0
        return True
    parts[name] = [_thinned(hit, thin) for hit in parts[name]]
    before, sizes[name] = sizes[name], _tokens(parts[name])
    if sizes[name] == before:
        return False
    clipped.append(f"dropped the {thin} of {len(parts[name])} call sites "
                   f"({before - sizes[name]:,} tokens) for the budget")
    return True


def _thinned(hit: CodeHit, keep: str) -> CodeHit:
    """A call site without its code ("code"), or without its line too ("lines"): its file
    and line number stay."""
    update: dict[str, Any] = {"snippet": "", "function": None}
    if keep == "lines":
        update["text"] = ""
    return hit.replace(**update)


def _tokens(value: Any) -> int:
    if isinstance(value, str):
        return estimate_tokens(value)
    if isinstance(value, list):
        return sum(_tokens(v) for v in value)
    if isinstance(value, CodeHit):
        return (estimate_tokens(value.file_path) + 2 + estimate_tokens(value.text)
                + estimate_tokens(value.snippet))
    return 0


def _redacted(value: Any, redactor: Redactor, path: str) -> Any:
    if isinstance(value, str):
        return redactor.for_path(value, path)
    if isinstance(value, list):
        return [_redacted(v, redactor, path) for v in value]
    if isinstance(value, CodeHit):
        return value.replace(
            text=redactor.for_path(value.text, value.file_path),
            snippet=redactor.for_path(value.snippet, value.file_path))
    return value


def _meta(unit: ReviewUnit) -> BundleMeta:
    hunk = unit.hunk
    where = unit.line_numbers.new_compact or unit.line_numbers.old_compact
    return BundleMeta(
        file_path=unit.file_path, old_path=unit.old_path, language=unit.language,
        tags=unit.tags, line_numbers=unit.line_numbers,
        location=f"{unit.file_path}:{where}" if where else unit.file_path,
        hunk_range=HunkRange(old_start=hunk.old_start, old_length=hunk.old_length,
                             new_start=hunk.new_start, new_length=hunk.new_length)
        if hunk else None,
    )
