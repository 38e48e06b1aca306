"""What a change does, for a reader who has not opened it: one line per changed file (or per
folder, past the files worth naming), its risky areas, and how it was reviewed. Built from
the run's units, tags and findings, with no model; Markdown, for `--format markdown` and the
pull request's summary comment.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import msgspec

from reviewbot.report import ReportInput, display_path, model_line
from reviewbot.report.markup import inert_line, inline_code
from reviewbot.schema import Finding, IndexUnit

# Files named one by one; the rest are counted by folder.
MAX_FILES = 25
MAX_FOLDERS = 10
MAX_AREAS = 10
_KIND = {"add": "added", "modify": "modified", "delete": "deleted", "rename": "renamed",
         "binary": "binary", "mode": "mode changed"}
# Tags a reader should see next to a file, in this order, with their words.
_NOTES = (("security_sensitive", "security-sensitive"), ("ci_workflow", "CI workflow"),
          ("dependency_manifest", "dependencies"), ("migration", "migration"),
          ("config_file", "configuration"), ("routing_file", "routes"),
          ("test_file", "tests"), ("docs", "docs"), ("generated", "generated"),
          ("vendored", "vendored"), ("lockfile", "lockfile"), ("minified", "minified"),
          ("large_change", "large"), ("only_whitespace", "whitespace only"),
          ("only_comments", "comments only"), ("only_imports", "imports only"))
# Tags that make an area risky, with what to look at.
_RISKY = (("security_sensitive", "security-sensitive code"),
          ("ci_workflow", "a CI workflow (runs with the repository's secrets)"),
          ("dependency_manifest", "dependencies"), ("migration", "a database migration"),
          ("routing_file", "routes"), ("config_file", "configuration"))


class _File(msgspec.Struct):
    path: str
    kind: str
    added: int = 0
    removed: int = 0
    tags: set[str] = msgspec.field(default_factory=set)
    ranges: list[str] = msgspec.field(default_factory=list)
    findings: Counter[str] = msgspec.field(default_factory=Counter)

    @property
    def worth_naming(self) -> bool:
        return bool(self.findings) or any(tag in self.tags for tag, _ in _RISKY)


def walkthrough(data: ReportInput) -> list[str]:
    """Markdown lines: what the change does, where the risk is, how it was reviewed."""
    files = _files(data.report.units, data.report.findings)
    if not files:
        return []
    described = data.report.description
    lines = ["### What this change does", ""]
    if described is not None and described.overview:
        lines += [f"{inert_line(described.overview)} _(the review model's summary)_", ""]
    what = described.files if described is not None else {}
    lines += ["| file | change | lines | notes |" + (" what changes |" if what else ""),
              "| --- | --- | ---: | --- |" + (" --- |" if what else "")]
    named = sorted(files, key=lambda f: (not f.worth_naming, f.path))[:MAX_FILES]
    lines += [_row(f) + (f" {inert_line(what.get(f.path, ''))} |" if what else "")
              for f in sorted(named, key=lambda f: f.path)]
    lines += [row + (" |" if what else "") for row in _folders([f for f in files
                                                                 if f not in named])]
    areas = _areas(files)
    if areas:
        lines += ["", "**Where to look:** " + "; ".join(areas) + "."]
    lines += ["", "**How it was reviewed:** " + _how(data)]
    return lines


def _files(units: Sequence[IndexUnit], findings: Sequence[Finding]) -> list[_File]:
    by_path: dict[str, _File] = {}
    for unit in units:
        entry = by_path.setdefault(unit.file_path, _File(unit.file_path, unit.patch_type))
        entry.added += unit.metrics.added_lines
        entry.removed += unit.metrics.removed_lines
        entry.tags.update(unit.tags)
        if "security_sensitive" in unit.tags and unit.line_numbers.new_compact:
            entry.ranges.append(unit.line_numbers.new_compact)
    for finding in findings:
        if finding.file_path in by_path:
            by_path[finding.file_path].findings[finding.severity] += 1
    return list(by_path.values())


def _row(entry: _File) -> str:
    notes = [words for tag, words in _NOTES if tag in entry.tags]
    found = ", ".join(f"{n} {level}" for level in ("error", "warning", "info")
                      if (n := entry.findings[level]))
    if found:
        notes.append(found)
    # A file name is the pull request author's: its pipes must not end the cell.
    name = inline_code(display_path(entry.path), in_table=True)
    return (f"| {name} | {_KIND.get(entry.kind, entry.kind)} | +{entry.added} "
            f"-{entry.removed} | {', '.join(notes)} |")


def _folders(rest: list[_File]) -> list[str]:
    """The files not named, one row per top folder."""
    groups: dict[str, list[_File]] = defaultdict(list)
    for entry in rest:
        head, _, tail = entry.path.partition("/")
        groups[f"{head}/" if tail else "(top level)"].append(entry)
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    rows = [_folder_row(inline_code(display_path(folder), in_table=True) + " and below", group)
            for folder, group in ordered[:MAX_FOLDERS]]
    others = [f for _, group in ordered[MAX_FOLDERS:] for f in group]
    return rows + ([_folder_row("elsewhere", others)] if others else [])


def _folder_row(where: str, group: list[_File]) -> str:
    return (f"| {where} | {len(group)} more files | +{sum(f.added for f in group)} "
            f"-{sum(f.removed for f in group)} | |")


def _areas(files: list[_File]) -> list[str]:
    areas: list[str] = []
    for tag, words in _RISKY:
        where = [f"{inline_code(display_path(f.path))}"
                 + (f" ({', '.join(f.ranges[:3])})" if tag == "security_sensitive"
                    and f.ranges else "")
                 for f in sorted(files, key=lambda f: f.path) if tag in f.tags]
        if where:
            shown = ", ".join(where[:3]) + (f" and {len(where) - 3} more" if len(where) > 3
                                            else "")
            areas.append(f"{words} in {shown}")
    return areas[:MAX_AREAS]


def _how(data: ReportInput) -> str:
    stats = data.report.stats
    rules = f"the rules read all {stats.units} units"
    if stats.ignored_units:
        rules += (f" ({stats.ignored_units} in files the configuration ignores, for secrets "
                  "only)")
    model = model_line(data.report)
    return rules + ("; " + model.replace("model (", "the model (", 1) if model else
                    "; no model (offline)") + "."
