"""Which quietening a file gets, and who decided it (docs/RULES.md, "What quietens a review").

A file's name can make it test code (its findings one level quieter), documentation (its
secrets one level quieter), or vendored, generated or a lockfile (checked for secrets only),
and a generator's "generated ... DO NOT EDIT" banner makes it generated. The change under
review must not be able to quieten itself that way, so a name or a banner counts only when
the repository declared it at the base:

- a file that was already there keeps the kind its name gives it;
- a new file (or a renamed one, under its new name) takes a kind from a folder that gives it
  (`vendor/`, `tests/`, `docs/`, `dist/`) only when the base already has that folder; a kind
  given by the file's own name alone (`test_x.py`, `x_pb2.py`, `x.min.js`, `yarn.lock`) needs
  the file itself at the base;
- a banner counts when it is an unchanged line of a file the base had, at the top of the
  base's file too (a deletion that lifts a line from further down declares nothing);
- Markdown and reStructuredText are documentation by what they are, as `.py` is Python: a
  page cannot be run, so a new one is documentation wherever it is.

What the change adds that would quieten it is reviewed as ordinary code, and its findings
say so. When the base is the empty tree (a whole repository reviewed, a first commit), there
is no base to declare anything: the names hold as they read, since nothing is "the change"
apart from the repository itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Protocol

import msgspec

from reviewbot.code.languages import detect_language
from reviewbot.code.lexical import comment_body
from reviewbot.code.path_kinds import DOCUMENT_LANGUAGES, path_tags
from reviewbot.schema.findings import DecidedBy
from reviewbot.schema.records import Tag
from reviewbot.schema.units import ReviewUnit

# The tags that lower or skip rules (rules/__init__.py, rules/secrets.py, rules/hygiene.py,
# rules/removed_guards.py, the planner's skips).
QUIETING_TAGS: frozenset[Tag] = frozenset({"test_file", "docs", "vendored", "generated",
                                          "lockfile"})

# The folders that give a path each kind (path_kinds._PATH_TAGS's folder globs). A kind whose
# globs match the file's own name only (test_*.py, *.lock) has none here.
_KIND_FOLDERS: dict[Tag, frozenset[str]] = {
    "vendored": frozenset({"vendor", "third_party", "node_modules", "external", "_vendor"}),
    "generated": frozenset({"dist"}),
    "test_file": frozenset({"tests", "test", "__tests__", "testdata", "fixtures",
                            "__fixtures__", "testing"}),
    "docs": frozenset({"docs", "doc"}),
}

# Languages that are documentation by what they are, not where they are.
_PROSE = frozenset({"markdown", "rst"})

# Patch types whose file the base already had under the same name.
_AT_BASE = frozenset({"modify", "mode", "delete"})

_WHY: dict[Tag, str] = {
    "vendored": "vendored code (checked for secrets only)",
    "generated": "generated code (checked for secrets only)",
    "lockfile": "a lockfile (checked for secrets only)",
    "test_file": "test code (one level quieter)",
    "docs": "documentation (its secrets one level quieter)",
}


class BaseLayout(Protocol):
    """What the base of the change holds, for deciding what a name declares."""

    def base_paths(self, paths: Sequence[str]) -> frozenset[str]:
        """Which of these folders exist at the base (a file of the same name is no folder)."""
        ...


class FileKind(msgspec.Struct, frozen=True):
    """A file's quietening tags that hold, and the ones the change would have given itself."""

    tags: frozenset[Tag] = frozenset()
    refused: frozenset[Tag] = frozenset()
    # What the change added that would have quietened it: "name", "banner".
    refused_by: tuple[str, ...] = ()
    # Of `tags`, those that hold by what a file the change names is (a new Markdown page is
    # documentation), not by anything the base declares.
    by_change: frozenset[Tag] = frozenset()
    # Whether the change gives the file its name (a new file, a rename's new name).
    new: bool = False

    def decided(self, tag: Tag) -> DecidedBy:
        """Who decided that the file has this kind."""
        return "change" if tag in self.by_change else "base"

    def note(self, secrets: bool) -> str:
        """What a finding says when the file would have been quieter: empty when what the
        change added would not have changed this finding."""
        matters = (self.refused & {"test_file", "docs"} if secrets
                   else self.refused & {"vendored", "generated", "lockfile", "test_file"})
        if not matters:
            return ""
        kinds = " and ".join(_WHY[tag] for tag in sorted(matters))
        what = " and ".join(self.refused_by)
        return (f"Reviewed as ordinary code: its {what} would make it {kinds}, but the change "
                "adds that. Declare such files in the repository's config at the base "
                "(`ignore`, `[[path_rules]]`) to quieten them.")


def file_kinds(files: Mapping[str, Sequence[ReviewUnit]], layout: BaseLayout | None,
               read_new: Callable[[str], str | None]) -> dict[str, FileKind]:
    """Each file's quietening, decided by the base: one question to `layout` for all the new
    files that a folder could declare, none when no file needs one. `read_new` reads the top
    of a changed file whose hunks do not show it, for its banner."""
    wanted: dict[str, list[tuple[Tag, list[str]]]] = {}
    for path, units in files.items():
        if _new_name(units):
            wanted[path] = [(tag, _kind_folders(path, tag))
                            for tag in sorted(QUIETING_TAGS.intersection(path_tags(path)))
                            if not (tag == "docs" and is_prose(path))]
    asked = sorted({folder for pairs in wanted.values() for _, folders in pairs
                    for folder in folders})
    present = layout.base_paths(asked) if asked and layout is not None else frozenset()
    return {path: _kind(path, units, wanted.get(path), present, read_new)
            for path, units in files.items()}


def _kind(path: str, units: Sequence[ReviewUnit], pairs: list[tuple[Tag, list[str]]] | None,
          present: frozenset[str], read_new: Callable[[str], str | None]) -> FileKind:
    named = set(QUIETING_TAGS.intersection(path_tags(path)))
    if units and units[0].language not in DOCUMENT_LANGUAGES:
        named.discard("docs")  # code by its `#!` line, whatever its name
    tags: set[Tag]
    by_change: set[Tag] = set()
    if pairs is None:
        tags = set(named)
    else:
        tags = {tag for tag, folders in pairs if tag in named
                and any(f in present for f in folders)}
        by_change = named - {tag for tag, _ in pairs}  # documentation by its language
        tags |= by_change
    refused = set(named - tags)
    refused_by = ["name"] if refused else []
    banner = _banner(units, read_new)
    if banner == "ctx" and not _new_name(units):
        tags.add("generated")
        refused.discard("generated")
    elif banner == "add" and "generated" not in tags:
        refused.add("generated")
        refused_by.append("banner")
    return FileKind(tags=frozenset(tags), refused=frozenset(refused),
                    refused_by=tuple(dict.fromkeys(refused_by)), by_change=frozenset(by_change),
                    new=_new_name(units))


def is_prose(path: str) -> bool:
    """Documentation by what it is (Markdown, reStructuredText), wherever it is."""
    return detect_language(path) in _PROSE


def _new_name(units: Sequence[ReviewUnit]) -> bool:
    """Whether the change gives the file its name (a new file, or a rename's new name)."""
    return not any(unit.patch_type in _AT_BASE for unit in units)


def _kind_folders(path: str, tag: Tag) -> list[str]:
    """The folders of `path` (as written) that give it the kind `tag`: `a/vendor` for
    `a/vendor/x.py` and "vendored"."""
    names = _KIND_FOLDERS.get(tag, frozenset())
    parts = PurePosixPath(path).parts[:-1]
    return ["/".join(parts[:i + 1]) for i, part in enumerate(parts) if part.lower() in names]


_BANNER_LINES = 5
_BANNER_CHARS = 300


def _banner(units: Sequence[ReviewUnit], read_new: Callable[[str], str | None]) -> str | None:
    """Whether the file's first lines hold a generator's "generated ... DO NOT EDIT" banner
    the change puts there ("add": it adds the line, or deletes what stood above it so that
    a line from further down now heads the file), one the base's file had at its top too
    ("ctx"), or none (None)."""
    first = units[0] if units else None
    if first is None or first.patch_type in ("delete", "binary") or first.hunk is None:
        return None
    for number, line in enumerate(_top(units, read_new), 1):
        body = comment_body(line[:_BANNER_CHARS]).lower()  # a minified line is megabytes
        if "do not edit" in body and "generated" in body:
            old = _old_number(units, number)
            return "ctx" if old is not None and old <= _BANNER_LINES else "add"
    return None


def _top(units: Sequence[ReviewUnit], read_new: Callable[[str], str | None]) -> list[str]:
    """The new file's first lines: from the first hunk when it starts at the top, else from
    the file (the hunks do not show them)."""
    hunk = units[0].hunk
    if hunk is not None and hunk.new_start == 1:
        lines = [line.text for line in hunk.lines if line.kind != "del"]
    else:
        lines = (read_new(units[0].file_path) or "").split("\n", _BANNER_LINES)
    return lines[:_BANNER_LINES]


def _old_number(units: Sequence[ReviewUnit], number: int) -> int | None:
    """The base's line number of a new-side line (None: the change adds it). A line outside
    every hunk moved by what the hunks before it added and removed."""
    shift = 0
    for unit in units:
        hunk = unit.hunk
        if hunk is None:
            continue
        if number < hunk.new_start:
            break
        for line in hunk.lines:
            if line.new_lineno == number:
                return line.old_lineno
        shift = _end(hunk.old_start, hunk.old_length) - _end(hunk.new_start, hunk.new_length)
    return number + shift


def _end(start: int, length: int) -> int:
    """The first line after a hunk's side (an empty side's start is the line before it)."""
    return start + length if length else start + 1
