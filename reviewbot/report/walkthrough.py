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
from reviewbot.schema.findings import Finding
from reviewbot.schema.units import IndexUnit
from reviewbot.text.words import counted

# Files named one by one; the rest are counted by folder.
MAX_FILES = 25
MAX_FOLDERS = 10
# "Where to look" names the few places a reviewer opens first, not every file a word matched:
# past five, a list is read as a second table (the table above names every risky file).
MAX_PLACES = 5
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
# What a unit's edit is: a file's only when every one of its units has it (one unit of
# blank lines does not make a version bump "whitespace only").
_SHAPES = frozenset({"only_whitespace", "only_comments", "only_docs", "only_imports"})
# Tags that get a file named in the table ahead of the others.
_WORTH_NAMING = frozenset({"security_sensitive", "ci_workflow", "dependency_manifest",
                           "migration", "routing_file", "config_file"})
# Kinds of file that are places to look by what they are (their path says), one entry each.
_PLACE_KINDS = (("ci_workflow", "CI workflows (they run with the repository's secrets)"),
                ("migration", "database migrations"), ("dependency_manifest", "dependencies"),
                ("routing_file", "routes"))
# Prose and data: a security word in them ("token" in a workflow, "upload" in its name) is a
# word, not code doing it.
_NOT_CODE = frozenset({"text", "markdown", "rst", "yaml", "json", "toml", "ini", "xml", "csv",
                       "gitignore", "gitattributes"})


class _File(msgspec.Struct):
    path: str
    kind: str
    language: str = "text"
    added: int = 0
    removed: int = 0
    tags: set[str] = msgspec.field(default_factory=set)
    # The shape tags every unit so far has (None: no unit yet).
    shapes: set[str] | None = None
    ranges: list[str] = msgspec.field(default_factory=list)
    # Why the tagging rules found it security sensitive, from its units' notes.
    reasons: dict[str, None] = msgspec.field(default_factory=dict)
    sensitive_lines: int = 0
    findings: Counter[str] = msgspec.field(default_factory=Counter)

    @property
    def worth_naming(self) -> bool:
        return bool(self.findings) or bool(self.tags & _WORTH_NAMING)

    @property
    def security_code(self) -> bool:
        """Code the tagging rules found security sensitive (a file of prose or data is a
        place to look by its findings or its kind, never by a word or its name)."""
        return "security_sensitive" in self.tags and self.language not in _NOT_CODE


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
    places = _places(files)
    if places:
        lines += ["", "**Where to look:** " + "; ".join(places) + "."]
    lines += ["", "**How it was reviewed:** " + _how(data)]
    return lines


def _files(units: Sequence[IndexUnit], findings: Sequence[Finding]) -> list[_File]:
    by_path: dict[str, _File] = {}
    for unit in units:
        entry = by_path.setdefault(unit.file_path, _File(unit.file_path, unit.patch_type,
                                                         unit.language))
        entry.added += unit.metrics.added_lines
        entry.removed += unit.metrics.removed_lines
        entry.tags.update(tag for tag in unit.tags if tag not in _SHAPES)
        shapes = set(_SHAPES.intersection(unit.tags))
        entry.shapes = shapes if entry.shapes is None else entry.shapes & shapes
        if "security_sensitive" in unit.tags:
            entry.reasons.update(dict.fromkeys(unit.security_reasons))
            entry.sensitive_lines += unit.metrics.added_lines + unit.metrics.removed_lines
            if unit.line_numbers.new_compact:
                entry.ranges.append(unit.line_numbers.new_compact)
    for entry in by_path.values():
        entry.tags |= entry.shapes or set()
    for finding in findings:
        if finding.file_path in by_path:
            by_path[finding.file_path].findings[finding.severity] += 1
    return list(by_path.values())


def _row(entry: _File) -> str:
    notes = [words for tag, words in _NOTES if tag in entry.tags]
    found = _counted(entry.findings)
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
    return (f"| {where} | {counted(len(group), 'more file', 'more files')} | "
            f"+{sum(f.added for f in group)} -{sum(f.removed for f in group)} | |")


def _counted(findings: Counter[str]) -> str:
    return ", ".join(f"{n} {level}" for level in ("error", "warning", "info")
                     if (n := findings[level]))


def _places(files: list[_File]) -> list[str]:
    """The places a reviewer should open first, best first: files with findings (the most
    severe first), then code the tagging rules found security sensitive (by its name, or by
    words in its code: the most reasons first), then kinds of file that matter by what they
    are, one entry per kind. At most MAX_PLACES, and how many more."""
    by_path = sorted(files, key=lambda f: f.path)
    found = sorted((f for f in by_path if f.findings), key=lambda f: tuple(
        -f.findings[level] for level in ("error", "warning", "info")))
    sensitive = sorted((f for f in by_path if not f.findings and f.security_code),
                       key=lambda f: (-len(_shown_reasons(f)), -f.sensitive_lines))
    places = [f"{_name(f)} ({_counted(f.findings)})" for f in found]
    places += [f"{_name(f)}{_ranges(f)} (security-sensitive: {', '.join(_shown_reasons(f))})"
               for f in sensitive]
    placed = {f.path for f in [*found, *sensitive]}
    for tag, words in _PLACE_KINDS:
        kind = [_name(f) for f in by_path if tag in f.tags and f.path not in placed]
        if kind:
            places.append(f"{words}: {', '.join(kind[:3])}"
                          + (f" and {len(kind) - 3} more" if len(kind) > 3 else ""))
    more = len(places) - MAX_PLACES
    return places[:MAX_PLACES] + ([f"and {more} more"] if more > 0 else [])


def _name(entry: _File) -> str:
    return inline_code(display_path(entry.path))


def _ranges(entry: _File) -> str:
    return f" {', '.join(entry.ranges[:3])}" if entry.ranges else ""


def _shown_reasons(entry: _File) -> list[str]:
    return [r for r in entry.reasons if r != "rule findings"] or ["its findings"]


def _how(data: ReportInput) -> str:
    stats = data.report.stats
    rules = f"the rules read all {counted(stats.units, 'unit')}"
    if stats.ignored_units:
        rules += (f" ({stats.ignored_units} in files the configuration ignores, for secrets "
                  "only)")
    model = model_line(data.report)
    return rules + ("; " + model.replace("model (", "the model (", 1) if model else
                    "; no model (offline)") + "."
