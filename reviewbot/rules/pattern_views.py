"""What the line patterns read beyond one line: a statement that spans lines, as one line.

- JavaScript, TypeScript, Go and Java: each call of a function a rule names, read as an
  expression (code/calls.py): `cp.exec(` and its template literal on the next line, or
  `exec(cmd)` with `cmd` built two lines above, is the one line `cp.exec(`ls ${dir}`)`;
- shell, Dockerfiles, Makefiles and workflows' scripts: a command continued over lines (a
  line ending in `\\`, `|`, `&&` or `||`);
- SQL: a statement, up to its `;`;
- templates: a `{{ ... }}` or `{% ... %}` tag left open at a line's end.

A view is read only where it touches an added line. A rule reports a view only when none of
the lines it was read from matches on its own: that line's finding is reported (or was the
base's) already.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from reviewbot.code.calls import (
    LANGUAGES,
    PARSE_LIMIT_BYTES,
    CallView,
    ParsedFile,
    may_call,
    windows,
)
from reviewbot.code.long_lines import long_line_code
from reviewbot.lazy_re import lazy_re
from reviewbot.rules.base import FileChange, is_long

# How far a statement is followed from an added line, in lines.
_REACH = 40
_SHELL = frozenset({"shell", "dockerfile", "make", "yaml"})
_CONTINUED = lazy_re(r"(?:\\|\|\||&&|\|)\s*$")
_OPEN_TAG = lazy_re(r"\{[{%](?:(?![}%]\}).)*$")


def views(change: FileChange, calls: frozenset[str]) -> list[CallView]:
    """The views of a file's change that touch its added lines (see above)."""
    reader = _READERS.get(change.language)
    if reader is None:
        if change.language in LANGUAGES and calls:
            return _call_views(change, calls)
        return []
    return list(reader(change))


def _call_views(change: FileChange, calls: frozenset[str]) -> list[CallView]:
    key = f"call_views:{','.join(sorted(calls))}"
    cached = change.memo.get(key)
    if isinstance(cached, list):
        return cached
    found: list[CallView] = []
    # The added lines a view must touch (a file the base holds minified keeps its long
    # lines' skip, rules/base.py).
    added = _viewed_lines(change)
    if _over_limit(change, added):
        # QUIETENING: what the change adds is over the parse limit (the file is not even
        # read for it); the run says so, once, whether or not a rule's names are in it.
        note = (f"{change.path}: the change adds over {PARSE_LIMIT_BYTES // 1_000_000} "
                "MB of code; its calls were read line by line only, not as expressions")
        if note not in change.notes:
            change.notes.append(note)
    elif (text := change.new_text) is not None and may_call(_encoded(change, text), calls):
        parsed = _parsed(change, text, added)
        found = [view for part in parsed for view in part.views(calls)
                 if any(line in added for line in view.lines)]
    change.memo[key] = found
    return found


def _viewed_lines(change: FileChange) -> set[int]:
    found = change.memo.get("viewed_lines")
    if not isinstance(found, set):
        found = change.memo["viewed_lines"] = {
            n for n, line in change.added_by_line.items()
            if not (is_long(line) and change.minified_at_base)}
    return found


def _over_limit(change: FileChange, added: set[int]) -> bool:
    """Whether the added lines alone are more than PARSE_LIMIT_BYTES: no window around them
    fits, and the file need not be read to know it."""
    return sum(len(change.added_by_line[n]) + 1 for n in added) > PARSE_LIMIT_BYTES


def _encoded(change: FileChange, text: str) -> bytes:
    encoded = change.memo.get("encoded")
    if not isinstance(encoded, bytes):
        encoded = change.memo["encoded"] = text.encode("utf-8", "surrogatepass")
    return encoded


def _parsed(change: FileChange, text: str, added: set[int]) -> list[ParsedFile]:
    """The file parsed once for all its rules: whole, or (a large file) in windows around
    its added lines (empty when those windows are over the limit together)."""
    cached = change.memo.get("parsed_calls")
    if isinstance(cached, list):
        return cached
    parts: list[ParsedFile]
    if len(_encoded(change, text)) <= PARSE_LIMIT_BYTES:
        parts = [ParsedFile(text, change.language)]
    else:
        found = windows(text, sorted(added))
        parts = [] if found is None else [ParsedFile(part, change.language, first)
                                          for first, part in found]
    change.memo["parsed_calls"] = parts
    return parts


def _joined(change: FileChange, continues: Callable[[str], bool],
            piece: Callable[[str], str]) -> Iterator[CallView]:
    """Runs of lines each continued by the next (`continues` on a line's text), around the
    added lines; each run of two lines or more as one line."""
    seen: set[int] = set()
    count = change.line_count
    for number in sorted(change.added_by_line):
        if number in seen:
            continue
        first = number
        while first > 1 and number - first < _REACH and continues(code_line(change, first - 1)):
            first -= 1
        last = number
        while last - number < _REACH and last < count and continues(code_line(change, last)):
            last += 1
        seen.update(range(first, last + 1))
        if last > first:
            text = " ".join(piece(code_line(change, n)) for n in range(first, last + 1)
                            if n not in change.comment_lines)
            yield CallView(text=text, first=first, last=last,
                           lines=frozenset(range(first, last + 1)))


def code_line(change: FileChange, number: int) -> str:
    """A line of the file as the patterns read it (a long one without its comments)."""
    text = change.line(number)
    return long_line_code(text, change.language) if is_long(text) else text


def _shell(change: FileChange) -> Iterator[CallView]:
    return _joined(change, lambda text: _CONTINUED.search(text) is not None,
                   lambda text: re.sub(r"\\\s*$", "", text).strip())


def _sql(change: FileChange) -> Iterator[CallView]:
    """A statement runs to its `;`: a line without one is continued by the next."""
    return _joined(change, lambda text: bool(text.strip()) and ";" not in text,
                   str.strip)


def _template(change: FileChange) -> Iterator[CallView]:
    return _joined(change, lambda text: _OPEN_TAG.search(text) is not None, str.strip)


_READERS: dict[str, Callable[[FileChange], Iterator[CallView]]] = {
    **dict.fromkeys(_SHELL, _shell),
    "sql": _sql,
    "html": _template,
}
