"""Every extra-request type of docs/ARCHITECTURE.md, each a small function in one dispatch table.

A handler returns the bundle fields it fills; fusion has already given each request the
`symbol` or `keyword` it needs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypedDict

from reviewbot.code.path_kinds import path_tags
from reviewbot.code.syntax import Span, SyntaxIndex, enclosing, spans
from reviewbot.context.budget import numbered
from reviewbot.context.callers import CallSites
from reviewbot.context.search import Searcher
from reviewbot.lazy_re import lazy_re
from reviewbot.repo.source import RepoSource
from reviewbot.schema.bundles import CodeHit
from reviewbot.schema.findings import Finding
from reviewbot.schema.units import ExtraRequest, ReviewUnit

PREVIOUS_MARGIN = 10


class Parts(TypedDict, total=False):
    """The bundle fields a request fills (see BundleItem)."""

    previous_version: str | None
    callers: list[CodeHit]
    search_hits: list[CodeHit]
    class_methods: list[str]
    scanner_issues: list[str]


@dataclass
class UnitContext:
    unit: ReviewUnit
    source: RepoSource
    searcher: Searcher
    findings: list[Finding]

    @property
    def changed_new_lines(self) -> set[int]:
        hunk = self.unit.hunk
        return {line.new_lineno for line in hunk.added() if line.new_lineno} if hunk else set()

    def is_own_change(self, hit: CodeHit) -> bool:
        return hit.file_path == self.unit.file_path and hit.line in self.changed_new_lines

    def new_spans(self) -> list[Span]:
        text = self.source.new_text(self.unit.file_path)
        return spans(text, self.unit.language) if text else []


def previous_version(ctx: UnitContext, request: ExtraRequest) -> Parts:
    """The base side of the file around the hunk: its old functions, else a margin."""
    unit, hunk = ctx.unit, ctx.unit.hunk
    path = unit.old_path or unit.file_path
    text = ctx.source.old_text(path)
    if text is None or unit.patch_type == "add":
        return {"previous_version": None}
    lines = text.split("\n")
    first = hunk.old_start if hunk else 1
    last = first + max((hunk.old_length if hunk else len(lines)) - 1, 0)
    old_syntax = SyntaxIndex(text, unit.language)
    around = [s for s in (old_syntax.at(first, "function"), old_syntax.at(last, "function"))
              if s]
    start = min([s.start for s in around], default=max(1, first - PREVIOUS_MARGIN))
    end = max([s.end for s in around], default=last + PREVIOUS_MARGIN)
    header = f"# {path} before the change ({ctx.source.diff.base_rev[:12]}), L{start}-L{end}"
    rendered, _ = numbered(lines, start, end, header, limit=120)
    return {"previous_version": rendered}


def callers(ctx: UnitContext, request: ExtraRequest) -> Parts:
    sites = CallSites(ctx.searcher, ctx.unit.file_path, ctx.is_own_change)
    return {"callers": sites.find(request.symbol or "")}


def search(ctx: UnitContext, request: ExtraRequest) -> Parts:
    keyword = request.keyword or ""
    return {"search_hits": ctx.searcher.find(keyword, keep=lambda h: not ctx.is_own_change(h))}


def config_usage(ctx: UnitContext, request: ExtraRequest) -> Parts:
    """Where a changed config key is read: code, not other config files or docs."""
    keyword = request.keyword or ""

    def in_code(hit: CodeHit) -> bool:
        tags = set(path_tags(hit.file_path))
        return hit.file_path != ctx.unit.file_path and not tags & {"config_file", "docs"}
    return {"search_hits": ctx.searcher.find(keyword, keep=in_code)}


def implementations(ctx: UnitContext, request: ExtraRequest) -> Parts:
    """Other definitions of the same name: overrides and implementations of an interface."""
    symbol = request.symbol or ""
    hits = ctx.searcher.find(symbol, keep=lambda h: h.kind == "definition"
                             and not ctx.is_own_change(h))
    return {"search_hits": [ctx.searcher.with_function(hit) for hit in hits]}


_FIELD = lazy_re(r"^\s*(?:self\.|this\.)?(?P<name>[A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)")


def model_usage(ctx: UnitContext, request: ExtraRequest) -> Parts:
    """Uses of a changed class and of the fields the hunk adds or removes (`.field`)."""
    symbol = request.symbol or ""
    hunk = ctx.unit.hunk
    fields = {m.group("name") for line in (hunk.lines if hunk else ())
              if line.kind != "ctx" and (m := _FIELD.match(line.text))}
    hits = ctx.searcher.find(symbol, keep=lambda h: h.kind != "definition"
                             and not ctx.is_own_change(h))
    for name in sorted(fields):
        hits += ctx.searcher.find(name, keep=lambda h, n=name: f".{n}" in h.text  # type: ignore[misc]
                                  and not ctx.is_own_change(h), limit=5)
    return {"search_hits": hits}


def class_methods(ctx: UnitContext, request: ExtraRequest) -> Parts:
    """Signatures of the other methods of the class the change is in."""
    changed = sorted(ctx.changed_new_lines) or [ctx.unit.hunk.new_start if ctx.unit.hunk else 1]
    all_spans = ctx.new_spans()
    owner = enclosing(all_spans, changed[0], "class")
    text = ctx.source.new_text(ctx.unit.file_path) or ""
    if owner is None:
        return {"class_methods": []}
    lines = text.split("\n")
    depth = owner.qualname.count(".") + 1
    methods = [s for s in all_spans if s.kind == "function"
               and s.qualname.startswith(owner.qualname + ".") and s.qualname.count(".") == depth
               and not any(s.contains(n) for n in changed)]
    return {"class_methods": [f"L{s.start}: {_signature(lines, s)}" for s in methods]}


def _signature(lines: list[str], span: Span) -> str:
    for line in lines[span.start - 1:span.end]:
        if span.name in line:
            return line.strip()
    return lines[span.start - 1].strip()


def scanner_issues(ctx: UnitContext, request: ExtraRequest) -> Parts:
    return {"scanner_issues": [
        f"L{f.start_line}-L{f.end_line} {f.severity} {f.rule_id}: {f.title}. {f.message}"
        for f in ctx.findings]}


HANDLERS: dict[str, Callable[[UnitContext, ExtraRequest], Parts]] = {
    "previous_version": previous_version,
    "callers": callers,
    "search_callers": callers,
    "search": search,
    "search_config_usage": config_usage,
    "search_implementations": implementations,
    "search_model_usage": model_usage,
    "search_class_methods": class_methods,
    "scanner_issues": scanner_issues,
}
