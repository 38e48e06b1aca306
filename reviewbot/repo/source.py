"""The one reader of the reviewed files, with one size policy, for rules, context and review.

New side: the index (staged), the work tree (working), or the head commit (pr); base side:
the diff's base revision. The work tree is read only through paths resolved inside the root,
so symlinks that point out of the repository are refused. A file with a NUL byte is never
read whole by anyone (rules check its added lines from the diff, context and the review agent
get a one-line summary); a file over MAX_FILE_BYTES is read whole by the rules only (its size
must not hide its code from them), and the others get the summary. A path absent on a side is
None; any other git failure is a GitError, not "absent".
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Literal

import msgspec

from reviewbot.code.languages import named_as_code
from reviewbot.repo.git import GitRepo
from reviewbot.schema.units import DiffResult

MAX_FILE_BYTES = 512_000
Side = Literal["new", "old"]


class FileText(msgspec.Struct, frozen=True):
    """A file as read: its text, or why there is none to read whole (`note`)."""

    path: str
    text: str | None
    size: int = 0
    note: str | None = None
    # A text file over MAX_FILE_BYTES, or a file named as code with a NUL byte, for the rules
    # only: a file's size or bytes must not hide its code from them (a long comment would
    # otherwise switch the Python rules off).
    oversize: str | None = None

    @property
    def absent(self) -> bool:
        return self.text is None and self.note is None


class RepoSource(msgspec.Struct):
    repo: GitRepo
    diff: DiffResult
    # Repository folders that are reviewbot's own (its runs, its cache): never given to a
    # model, whatever git says about them.
    private: tuple[str, ...] = (".reviewbot",)
    _cache: dict[tuple[Side, str], FileText] = msgspec.field(default_factory=dict)
    _prefetched: set[Side] = msgspec.field(default_factory=set)
    _readable: frozenset[str] | None = None

    @property
    def search_source(self) -> str | None:
        """What `git grep` searches: the work tree (None), the index (""), or a commit."""
        mode = self.diff.request.mode
        return None if mode == "working" else ("" if mode == "staged" else self.diff.head_rev)

    def read(self, path: str, side: Side = "new") -> FileText:
        key = (side, path)
        if key not in self._cache:
            self._prefetch(side)
        if key not in self._cache:
            self._cache[key] = _file_text(path, self._bytes(path, side))
        return self._cache[key]

    def _prefetch(self, side: Side) -> None:
        """Every file the change touches, on one side, in one git call (a process per file
        was a tenth of a small hook's time)."""
        if side in self._prefetched or (side == "new" and self.diff.request.mode == "working"):
            return
        self._prefetched.add(side)
        units = self.diff.units
        if side == "new":
            rev = self.diff.head_rev or ""
            paths = {u.file_path for u in units if u.patch_type != "delete"}
        else:
            rev = self.diff.base_rev
            paths = {u.old_path or u.file_path for u in units if u.patch_type != "add"}
        exact = {self._exact(path): path for path in paths}
        for path, data in self.repo.read_blobs(rev, sorted(exact)).items():
            self._cache[(side, exact[path])] = _file_text(exact[path], data)

    def rules_text(self, path: str) -> str | None:
        """The whole new file for the rules, whatever its size, or None (absent, binary)."""
        file = self.read(path)
        return file.text if file.text is not None else file.oversize

    def rules_old_text(self, path: str) -> str | None:
        """The whole file at the base for the rules, whatever its size, or None."""
        file = self.read(path, "old")
        return file.text if file.text is not None else file.oversize

    def rules_texts(self, paths: Sequence[str]) -> dict[str, str | None]:
        """Other readable files of the new side for the rules (see `readable_files`), in one
        git call, none for paths that are not there: each path's text, or None (absent,
        binary, not readable)."""
        readable = self.readable_files()
        present = [path for path in paths if path in readable]
        texts: dict[str, str | None] = dict.fromkeys(paths)
        if self.diff.request.mode == "working":
            return texts | {path: self.rules_text(path) for path in present}
        missing = [path for path in present if ("new", path) not in self._cache]
        exact = {self._exact(path): path for path in missing}
        for path, data in self.repo.read_blobs(self.diff.head_rev or "", sorted(exact)).items():
            self._cache[("new", exact[path])] = _file_text(exact[path], data)
        return texts | {path: self.rules_text(path) for path in present}

    def base_paths(self, paths: Sequence[str]) -> frozenset[str]:
        """Which of these folders the change's base has. With no base (the
        empty tree: a whole repository, a first commit, an empty commit before it) there is
        nothing apart from the reviewed side to declare anything, and every path counts as
        there."""
        request = self.diff.request
        if request.base_is_root or (request.mode in ("staged", "working")
                                    and self.repo.head() is None):
            return frozenset(paths)
        exact = {self._exact(path): path for path in paths}
        found = self.repo.folders(self.diff.base_rev, list(exact))
        return frozenset(paths) if found is None else frozenset(exact[p] for p in found)

    def new_text(self, path: str) -> str | None:
        """The new file for a reader: its text, a one-line summary, or None when absent."""
        return _for_reader(self.read(path))

    def old_text(self, path: str) -> str | None:
        return _for_reader(self.read(path, "old"))

    def grep(self, needle: str, *, word: bool = True) -> list[tuple[str, int, str]]:
        return self.repo.grep(needle, self.search_source, word=word)

    def list_files(self, folder: str = "") -> list[str]:
        """The readable files under a folder (see `readable_files`), sorted."""
        prefix = f"{folder.rstrip('/')}/" if folder else ""
        return sorted(p for p in self.readable_files() if p.startswith(prefix))

    def readable(self, path: str) -> bool:
        return path in self.readable_files()

    def readable_files(self) -> frozenset[str]:
        """What the review agent's tools may read, the same in every mode: the tracked files
        of the reviewed side (the index when staged, the head commit in pr mode, the work
        tree's tracked files in working mode) and the files of the change. Never `.git/`,
        an ignored or untracked file outside the change, or reviewbot's own folders."""
        if self._readable is None:
            tracked = self.repo.tracked_files(self.search_source)
            changed = (u.file_path for u in self.diff.units if u.patch_type != "delete")
            self._readable = frozenset(p for p in (*tracked, *changed) if not self._private(p))
        return self._readable

    def _private(self, path: str) -> bool:
        parts = PurePosixPath(path).parts
        return ".git" in parts or any(path == folder or path.startswith(f"{folder}/")
                                      for folder in self.private)

    def _bytes(self, path: str, side: Side) -> bytes | None:
        exact = self._exact(path)
        if side == "old":
            return self.repo.show(self.diff.base_rev, exact)
        if self.diff.request.mode == "working":
            return self.repo.read_worktree(exact)
        return self.repo.show(self.diff.head_rev or "", exact)

    def _exact(self, path: str) -> str:
        """The path git and the disk know: a name that is not UTF-8 is shown with U+FFFD,
        and read with its own bytes (surrogate-escaped)."""
        raw = self.diff.raw_paths.get(path)
        return bytes.fromhex(raw).decode("utf-8", "surrogateescape") if raw else path


def summary_if_unreadable(path: str, data: bytes) -> str | None:
    if len(data) > MAX_FILE_BYTES:
        return f"[{path}: {len(data):,} bytes, over the {MAX_FILE_BYTES:,}-byte cap; not read]"
    if b"\0" in data[:8192]:
        return f"[{path}: binary file, {len(data):,} bytes; not read]"
    return None


def _file_text(path: str, data: bytes | None) -> FileText:
    if data is None:
        return FileText(path=path, text=None)
    note = summary_if_unreadable(path, data)
    if note is not None:
        # The rules read a file named as code whatever its bytes, as the diff does
        # (diff/binary.py): a NUL byte in a comment must not turn off what reads the file
        # whole (its calls over several lines, where its comments are).
        readable = b"\0" not in data[:8192] or named_as_code(path)
        oversize = data.decode("utf-8", "replace") if readable else None
        return FileText(path=path, text=None, size=len(data), note=note, oversize=oversize)
    return FileText(path=path, text=data.decode("utf-8", "replace"), size=len(data))


def _for_reader(file: FileText) -> str | None:
    return file.text if file.text is not None else file.note
