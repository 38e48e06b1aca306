"""A labelled change: a small repository's base, the change on a branch, and the defects a
careful reviewer should report, each with the words a finding about it would use."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

# The branches every case repository has: both tools review CHANGE against BASE.
BASE = "main"
CHANGE = "change"


@dataclass(frozen=True)
class Defect:
    """A defect on `path`, lines `line`..`end_line` of the changed side (end_line 0: one
    line). A finding names it when its text holds one of `words` (matched at the start of a
    word, whatever the case: "leak" names "leaked" and "leaks")."""

    path: str
    line: int
    category: str
    label: str
    words: tuple[str, ...]
    end_line: int = 0

    @property
    def last(self) -> int:
        return self.end_line or self.line


@dataclass(frozen=True)
class Case:
    """`change` holds the files the change writes (None: deletes) over `base`; `kind` is the
    shape of change, `language` its main language."""

    name: str
    language: str
    kind: str
    base: dict[str, str]
    change: dict[str, str | None]
    defects: tuple[Defect, ...] = field(default=())
    message: str = "Change"

    @property
    def clean(self) -> bool:
        return not self.defects


_GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
            "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, env={**os.environ, **_GIT_ENV},
                   stdout=subprocess.DEVNULL)


def _write(root: Path, files: dict[str, str | None]) -> None:
    for path, text in files.items():
        target = root / path
        if text is None:
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def build(case: Case, root: Path) -> Path:
    """The case as a repository at `root`: BASE holds the base, CHANGE (checked out) one
    commit more with the change, as a pull request's branch would."""
    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", BASE)
    _write(root, dict(case.base))
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "Base")
    _git(root, "checkout", "-qb", CHANGE)
    _write(root, case.change)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", case.message)
    return root


def line_of(text: str, snippet: str) -> int:
    """The line (1-based) of `text` that holds `snippet`, which must be on exactly one line:
    labels follow the code they point at."""
    lines = [n for n, line in enumerate(text.splitlines(), 1) if snippet in line]
    if len(lines) != 1:
        raise ValueError(f"{snippet!r} is on {len(lines)} lines, not one")
    return lines[0]


def tabs(text: str) -> str:
    """Go as gofmt writes it: each leading four spaces of a line become a tab."""
    out = []
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip(" ")
        out.append("\t" * ((len(line) - len(stripped)) // 4) + stripped)
    return "".join(out)
