"""What each changed file is, from the files at the revision reviewed, never from which lines
the diff happens to show.

- A file's language is its name's, else its first line's (`#!/usr/bin/env python3`): an
  extensionless script edited at line 26 is Python as much as one edited at line 1. The
  first line is read from the reviewed side (the index when staged, the head commit in `pr`
  mode, the work tree in `working` mode) when no hunk shows it.
- A symlink is reviewed as what it is imported or run as: the file it leads to (resolved in
  the reviewed side's tree, links on the way followed; never out of the repository), in the
  link's language. A file of the change that a link makes code (`app/helpers.py ->
  ../data/helpers.txt`) is reviewed in the link's language; a link the change adds or
  retargets makes its target's whole content new code, which the rules read
  (rules/linked.py).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence

from reviewbot.code.languages import detect_language, shebang_language
from reviewbot.repo.git import GitRepo
from reviewbot.schema.units import ChangeRequest, Link, ReviewUnit

# Languages no rule reads as code: a link with such a name changes nothing, and a file of
# one of them is what a link can make code.
NOT_CODE = frozenset({"text", "markdown", "rst", "csv", "json", "symlink", "submodule",
                      "gitignore", "gitattributes"})
# Links followed from one link before giving up (a loop, or a chain built to hide one).
MAX_HOPS = 16
_FIRST_LINE_BYTES = 300


class NewSide:
    """The reviewed side's files as git stores them, read in one batch where it can be."""

    def __init__(self, repo: GitRepo, request: ChangeRequest, head_rev: str | None,
                 raw_paths: dict[str, str]) -> None:
        self.repo = repo
        self.working = request.mode == "working"
        self.rev = head_rev or ""
        self.raw_paths = raw_paths

    def read(self, paths: Sequence[str]) -> dict[str, bytes | None]:
        exact = {self._exact(path): path for path in paths}
        if self.working:
            return {exact[p]: self.repo.read_worktree(p) for p in exact}
        found = self.repo.read_blobs(self.rev, list(exact))
        return {exact[p]: found.get(p) for p in exact}

    def symlinks(self) -> dict[str, str]:
        """Every symlink of the reviewed side (the index's in the hook): path -> target."""
        listed = self.repo.symlinks(self.rev)
        names = self.repo.read_objects(list(dict.fromkeys(listed.values())))
        # Names as the run shows them (U+FFFD for a byte that is not UTF-8), like the units'.
        return {_shown(path): (names.get(oid) or b"").decode("utf-8", "replace")
                for path, oid in listed.items()}

    def _exact(self, path: str) -> str:
        raw = self.raw_paths.get(path)
        return bytes.fromhex(raw).decode("utf-8", "surrogateescape") if raw else path


def settle(side: NewSide, units: tuple[ReviewUnit, ...],
           ) -> tuple[tuple[ReviewUnit, ...], tuple[Link, ...], list[str]]:
    """The units with each file's language as the reviewed side has it, the symlinks that
    make code of a file, and notes on links that lead nowhere a review can follow."""
    units = _by_first_line(side, units)
    notes: list[str] = []
    links = _links(side, units, notes)
    return _linked(units, links), links, notes


def _by_first_line(side: NewSide, units: tuple[ReviewUnit, ...]) -> tuple[ReviewUnit, ...]:
    """A file its name says nothing about takes the language of its first line."""
    unnamed = {u.file_path for u in units if u.language == "text"
               and u.patch_type not in ("delete", "binary")}
    if not unnamed:
        return units
    shown = {u.file_path: line.text for u in units if u.file_path in unnamed and u.hunk
             for line in u.hunk.lines if line.new_lineno == 1 and line.kind != "del"}
    unread = sorted(unnamed - shown.keys())
    read = side.read(unread) if unread else {}
    first = {**{path: data[:_FIRST_LINE_BYTES].split(b"\n", 1)[0].decode("utf-8", "replace")
                for path, data in read.items() if data is not None}, **shown}
    languages = {path: language for path, line in first.items()
                 if (language := shebang_language(line)) is not None}
    return tuple(u.replace(language=languages[u.file_path]) if u.file_path in languages
                 else u for u in units)


def _links(side: NewSide, units: tuple[ReviewUnit, ...], notes: list[str]) -> tuple[Link, ...]:
    """The symlinks that make code of a file: a link the change adds or retargets, and a
    link of the reviewed side that leads to a file of the change that is not code."""
    added = {u.file_path: u for u in units if u.language == "symlink"
             and u.patch_type != "delete" and u.hunk is not None}
    plain = {u.file_path for u in units if u.language in NOT_CODE
             and u.patch_type not in ("delete", "binary")}
    if not added and not plain:
        return ()
    tree = side.symlinks()
    for path, link in added.items():  # the work tree's, in working mode
        # A target's name may hold a newline: the diff shows it as two lines.
        tree[path] = "\n".join(line.text for line in link.hunk.added()) if link.hunk else ""
    found: list[Link] = []
    for path in sorted(tree):
        language = detect_language(path)
        unit_id = added[path].unit_id if path in added else None
        if language in NOT_CODE or (unit_id is None and not plain):
            continue
        target = resolve(path, tree)
        if target is None:
            if unit_id is not None:
                notes.append(f"{path} is a symlink that leads out of the repository or in a "
                             "loop: what it leads to is not reviewed")
            continue
        if unit_id is not None or target in plain:
            found.append(Link(path=path, target=target, language=language, unit_id=unit_id))
    return tuple(found)


def _shown(path: str) -> str:
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def resolve(path: str, links: dict[str, str]) -> str | None:
    """Where a symlink leads in the repository's tree, every link on the way followed
    (`links`: path -> target); None out of the repository, or after MAX_HOPS links."""
    current = path
    for _ in range(MAX_HOPS):
        parts = current.split("/")
        for depth in range(1, len(parts) + 1):
            prefix = "/".join(parts[:depth])
            if prefix not in links:
                continue
            target = links[prefix]
            if not target or target.startswith("/"):
                return None
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(prefix), target))
            if joined == ".." or joined.startswith("../") or joined == ".":
                return None
            current = "/".join([joined, *parts[depth:]])
            break
        else:
            return _inside(current) if current != path else None
    return None


def _inside(path: str) -> str | None:
    """A path with `..` after a link resolved, or None when it leaves the repository."""
    if ".." not in path.split("/"):
        return path
    normal = posixpath.normpath(path)
    return None if normal == ".." or normal.startswith("../") else normal


def _linked(units: tuple[ReviewUnit, ...], links: Iterable[Link]) -> tuple[ReviewUnit, ...]:
    """A file of the change that a link makes code takes the link's language (the first
    link's, by path, when several lead to it)."""
    language: dict[str, str] = {}
    for link in links:
        language.setdefault(link.target, link.language)
    return tuple(u.replace(language=language[u.file_path])
                 if u.file_path in language and u.language in NOT_CODE - {"symlink"} else u
                 for u in units)
