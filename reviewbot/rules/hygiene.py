"""Language-independent hygiene: merge conflict markers, code saved in a wide encoding, and
untracked TODOs."""

from __future__ import annotations

import re
from collections.abc import Iterator

from reviewbot.code.whole_text import UNICODE_SPACE, compile_whole_text
from reviewbot.lazy_re import lazy_re
from reviewbot.rules.base import MINIFIED_LINE_CHARS, FileChange, Hit, Quiet, RuleBase, RuleInfo
from reviewbot.rules.patterns import line_pieces

_MARKER = lazy_re(r"^(<{7}|>{7}|\|{7})(\s|$)")
_SEPARATOR = lazy_re(r"^={7}$")
_WIDE = lazy_re("(?:[^\0]\0){8}|(?:[^\0]\0{3}){4}")
_WORDS = ("TODO", "FIXME", "XXX", "HACK")
_TODO = lazy_re(r"(#|//|/\*|--|<!--|\*)\s*(TODO|FIXME|XXX|HACK)\b")
_TODO_LONG = compile_whole_text(_TODO.pattern.replace(r"\s", UNICODE_SPACE))
# An issue number (#12, PROJ-12), a link, or an owner: the TODO is tracked somewhere.
_TRACKED = lazy_re(r"#\d+|\b[A-Z][A-Z0-9]+-\d+\b|https?://|\bissue\b|\((@?[\w.-]+)\)",
                      re.IGNORECASE)


class ConflictMarkerRule(RuleBase, frozen=True):
    def applies_to(self, change: FileChange) -> bool:
        return bool(change.added) and change.language not in ("binary",)

    def check(self, change: FileChange) -> Iterator[Hit]:
        lines = change.pattern_lines
        has_marker = any(_MARKER.match(text) for text in lines.values())
        for number, text in lines.items():
            # A bare ======= is also a reStructuredText/Markdown underline.
            if _MARKER.match(text) or (has_marker and _SEPARATOR.match(text)):
                yield Hit(rule_id=self.id, line=number,
                          message="A merge conflict marker was committed.",
                          suggestion="Resolve the conflict and remove the markers.")


class WideEncodingRule(RuleBase, frozen=True):
    """Code saved as UTF-16 or UTF-32: git, the forges and every diff viewer show it as
    binary (a NUL byte in every character), and reviewbot's rules read NULs between its
    letters; a browser (by its byte-order mark), PowerShell or a compiler runs it as code.
    What nobody can read in the diff is said, once a file."""

    def applies_to(self, change: FileChange) -> bool:
        return bool(change.added) and change.language not in ("binary",)

    def check(self, change: FileChange) -> Iterator[Hit]:
        # A NUL byte here and there (a test fixture, a sentinel) is no encoding; eight
        # characters in a row each with a NUL byte (UTF-16) or three (UTF-32) are, and any line
        # of code has them however much else the file holds (CJK text has no NUL byte).
        line = next((number for number, text in change.added_by_line.items()
                     if "\0" in text and _WIDE.search(text)), None)
        if line is not None:
            yield Hit(rule_id=self.id, line=line,
                      message=("The file is saved as UTF-16 or UTF-32: diffs show it as "
                               "binary and the rules cannot read its lines, but a browser, "
                               "PowerShell or a compiler runs it as code. What it adds is "
                               "not reviewed."),
                      suggestion="Save it as UTF-8, so that its lines can be reviewed.")


class UntrackedTodoRule(RuleBase, frozen=True):
    def check(self, change: FileChange) -> Iterator[Hit]:
        # Documentation is not read for TODOs: what it holds is recorded as quietened.
        quiet = Quiet("docs", change.kind.decided("docs")) if "docs" in change.tags else None
        lines = change.pattern_lines
        # Most files have no TODO word on their ordinary lines: one search of them joined
        # says so (a long line is searched on its own, by RE2).
        joined = "\n".join(text for text in lines.values() if len(text) <= MINIFIED_LINE_CHARS)
        words = any(word in joined for word in _WORDS)
        for number, text in lines.items():
            if not words and len(text) <= MINIFIED_LINE_CHARS:
                continue
            match = _todo(text)
            if match and not _TRACKED.search(match.string[match.end():]):
                yield Hit(rule_id=self.id, line=number,
                          message=f"{match.group(2)} added without an issue reference.",
                          suggestion="Link the issue (e.g. `TODO(#123): ...`) so it is not "
                                     "forgotten.", quiet=quiet)


def _todo(text: str) -> re.Match[str] | None:
    """The line's first TODO comment. A plain search for the words first on an ordinary
    line; a long one (a minified bundle's megabytes) is searched by RE2 in one pass over the
    bytes the line patterns read too, and the match read again where RE2 found it."""
    if len(text) <= MINIFIED_LINE_CHARS:
        return _TODO.search(text) if any(word in text for word in _WORDS) else None
    for piece, data in line_pieces(text):
        if data is None:
            found = _TODO.search(piece)
        elif (at := _TODO_LONG.search(data)) is None:
            continue
        else:
            start = (at.start() if len(data) == len(piece)
                     else len(data[:at.start()].decode("utf-8", "surrogatepass")))
            # RE2's `\b` is ASCII: where `re` disagrees, it searches on from there.
            found = _TODO.match(piece, start) or _TODO.search(piece, start + 1)
        if found is not None:
            return found
    return None


RULES = (
    ConflictMarkerRule(RuleInfo(
        id="conflict-marker", title="Merge conflict marker", severity="error", category="bug",
        rationale="Conflict markers break the file for every reader and parser.")),
    WideEncodingRule(RuleInfo(
        id="wide-encoding", title="Code saved as UTF-16 or UTF-32", severity="warning",
        category="security",
        rationale="What a diff shows as binary is reviewed by nobody, and still runs.")),
    UntrackedTodoRule(RuleInfo(
        id="todo-without-issue", title="TODO without an issue reference", severity="info",
        category="maintainability",
        rationale="Untracked TODOs are forgotten; an issue reference keeps them visible.")),
)
