"""The repository as the context stage may read it: inside the root, capped, text only."""

from __future__ import annotations

from dataclasses import dataclass, field

from reviewbot.git import GitRepo
from reviewbot.schema import DiffResult

MAX_FILE_BYTES = 512_000


@dataclass
class RepoSource:
    """New-side and base-side file text, and searches, for one change.

    New side: the index (staged), the work tree (working), or the head commit (pr); the work
    tree is read only through paths resolved inside the root, so symlinks that point out of
    the repository are refused. Files over MAX_FILE_BYTES and binary files are summarised.
    """

    repo: GitRepo
    diff: DiffResult
    _new: dict[str, str | None] = field(default_factory=dict)
    _old: dict[str, str | None] = field(default_factory=dict)

    @property
    def search_source(self) -> str | None:
        mode = self.diff.request.mode
        return None if mode == "working" else ("" if mode == "staged" else self.diff.head_rev)

    def new_text(self, path: str) -> str | None:
        if path not in self._new:
            if self.diff.request.mode == "working":
                data = self.repo.read_worktree(path)
            else:
                data = self.repo.show(self.diff.head_rev or "", path)
            self._new[path] = _text(path, data)
        return self._new[path]

    def old_text(self, path: str) -> str | None:
        if path not in self._old:
            self._old[path] = _text(path, self.repo.show(self.diff.base_rev, path))
        return self._old[path]

    def grep(self, needle: str, *, word: bool = True) -> list[tuple[str, int, str]]:
        return self.repo.grep(needle, self.search_source, word=word)


def summary_if_unreadable(path: str, data: bytes) -> str | None:
    if len(data) > MAX_FILE_BYTES:
        return f"[{path}: {len(data):,} bytes, over the {MAX_FILE_BYTES:,}-byte cap; not read]"
    if b"\0" in data[:8192]:
        return f"[{path}: binary file, {len(data):,} bytes; not read]"
    return None


def _text(path: str, data: bytes | None) -> str | None:
    if data is None:
        return None
    return summary_if_unreadable(path, data) or data.decode("utf-8", "replace")
