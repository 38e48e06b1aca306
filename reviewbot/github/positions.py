"""Which lines of a pull request can carry a review comment: the RIGHT side of its diff, and
the removed lines on its LEFT side (a finding about a deleted line).

GitHub answers 422 ("line must be part of the diff") for any other line, so each comment is
checked against the pull request's own patches (from the files API) before it is posted.
A file whose patch GitHub leaves out (binary, or too large) has no commentable lines.
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewbot.lazy_re import lazy_re

_HUNK = lazy_re(r"^@@ -\d+(?:,\d+)? \+(?P<start>\d+)(?:,\d+)? @@")
_HUNK_OLD = lazy_re(r"^@@ -(?P<start>\d+)(?:,\d+)? \+\d+(?:,\d+)? @@")


def right_side_lines(patch: str) -> set[int]:
    """New-side line numbers of added and context lines in a unified-diff patch."""
    lines: set[int] = set()
    current: int | None = None
    for row in patch.split("\n"):
        match = _HUNK.match(row)
        if match:
            current = int(match.group("start"))
            continue
        if current is None or row.startswith(("-", "\\")):
            continue
        if row.startswith(("+", " ")):
            lines.add(current)
            current += 1
    return lines


def left_side_removed(patch: str) -> set[int]:
    """Base-side line numbers of the removed lines in a unified-diff patch (GitHub's LEFT
    side, where a comment on a deleted line goes)."""
    lines: set[int] = set()
    current: int | None = None
    for row in patch.split("\n"):
        match = _HUNK_OLD.match(row)
        if match:
            current = int(match.group("start"))
            continue
        if current is None or row.startswith(("+", "\\")):
            continue
        if row.startswith("-"):
            lines.add(current)
        if row.startswith(("-", " ")):
            current += 1
    return lines


def left_side_lines(patch: str) -> set[int]:
    """Base-side line numbers of removed and context lines: GitHub's LEFT side of a patch."""
    lines: set[int] = set()
    current: int | None = None
    for row in patch.split("\n"):
        match = _HUNK_OLD.match(row)
        if match:
            current = int(match.group("start"))
            continue
        if current is not None and row.startswith(("-", " ")):
            lines.add(current)
            current += 1
    return lines


def commentable(files: Iterable[tuple[str, str | None]]) -> dict[str, set[int]]:
    """path -> RIGHT-side lines, from (filename, patch) pairs."""
    return {path: right_side_lines(patch) if patch else set() for path, patch in files}
