"""Which new-side lines a change's hunks cover, per file: what a finding may be anchored to.

A line is *added* when the change wrote it, *covered* when it is added or a context line of
a hunk (GitHub and GitLab take review comments on both). The verifier asks this index,
never the diff text; a forge's adapter reads the lines it takes comments on from the forge.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from reviewbot.schema.units import ReviewUnit


@dataclass(frozen=True)
class FileLines:
    added: frozenset[int]
    covered: frozenset[int]
    # New-side line -> its text, for the lines hunks show (added and context).
    text: dict[int, str] = field(default_factory=dict, compare=False)
    # New-side line -> the unit whose hunk covers it.
    units: dict[int, str] = field(default_factory=dict, compare=False)


class DiffIndex:
    def __init__(self, files: dict[str, FileLines]) -> None:
        self._files = files

    @classmethod
    def from_units(cls, units: Iterable[ReviewUnit]) -> DiffIndex:
        added: dict[str, set[int]] = {}
        text: dict[str, dict[int, str]] = {}
        owner: dict[str, dict[int, str]] = {}
        paths: set[str] = set()
        for unit in units:
            paths.add(unit.file_path)
            for line in unit.hunk.lines if unit.hunk else ():
                if line.new_lineno is None:
                    continue
                text.setdefault(unit.file_path, {})[line.new_lineno] = line.text.rstrip("\r")
                owner.setdefault(unit.file_path, {})[line.new_lineno] = unit.unit_id
                if line.kind == "add":
                    added.setdefault(unit.file_path, set()).add(line.new_lineno)
        return cls({path: FileLines(added=frozenset(added.get(path, ())),
                                    covered=frozenset(text.get(path, {})),
                                    text=text.get(path, {}), units=owner.get(path, {}))
                    for path in paths})

    def has_file(self, path: str) -> bool:
        return path in self._files

    def files(self) -> list[str]:
        return sorted(self._files)

    def lines(self, path: str) -> FileLines:
        return self._files.get(path, FileLines(frozenset(), frozenset()))

    def covers(self, path: str, start: int, end: int) -> bool:
        """Whether every line of the range is on the change's new side (added or context)."""
        covered = self.lines(path).covered
        return bool(covered) and all(n in covered for n in range(start, end + 1))

    def touches_added(self, path: str, start: int, end: int) -> bool:
        added = self.lines(path).added
        return any(n in added for n in range(start, end + 1))

    def unit_at(self, path: str, line: int) -> str | None:
        return self.lines(path).units.get(line)
