"""A change that takes the escaping or sanitising off a value and keeps the value, or drops
a validating check from a condition and keeps the rest.

`escape(pformat(value))` becoming `pformat(value)`, `safe_join(root, path)` becoming
`os.path.join(root, path)`, `if "." in item and PATTERN.match(item):` becoming
`if "." in item:`: only the diff shows it (the new file alone looks like any other
code), and it is how fixed vulnerabilities come back. A reviewer who sees the guard go asks
why; this rule asks for them. It reads each hunk's removed and added lines as text, so it
works in any language and on code that does not parse.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import accumulate, islice

from reviewbot.rules.base import FileChange, Hit, RuleBase, RuleInfo
from reviewbot.schema import DiffLine, Hunk

# Calls whose whole job is to make a value safe for where it goes: HTML, SQL LIKE, a shell,
# a URL, a file name under a folder.
_GUARD = re.compile(
    r"(?<![\w.])(?P<name>(?:[A-Za-z_]\w*\.)*(?:_?(?:escape\w*|\w+_escape|sanitiz\w+|sanitis\w+)"
    r"|quote|quote_plus|quoteattr|secure_filename|safe_join|strip_tags|bleach\.clean))\s*\(")
# On the added side any call named like a guard counts: `quote(k)` becoming
# `percent_encoded(k)` is a rename, not a removal.
_GUARD_LIKE = re.compile(r"(?<![\w.])(?P<name>(?:[A-Za-z_]\w*\.)*\w*(?:escape|quote|encod|"
                         r"saniti[sz]|clean|safe|secure|strip_tags)\w*)\s*\(", re.IGNORECASE)
_DEFINITION = re.compile(r"\b(def|function|fn|func)\s+$")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
# Where text is prose, not code.
_PROSE = frozenset({"markdown", "rst", "text"})
_MAX_VALUE = 200
# A hunk rewriting a whole templating module can remove thousands of guard calls: the
# first ones say what a reviewer needs to hear, and the work stays linear in the hunk.
_MAX_PER_HUNK = 50
_ALIKE_CHARS = 300
_NEAR_LINES = 30


@dataclass(frozen=True)
class _Removal:
    guard: str
    value: str


def removals(line: str, pattern: re.Pattern[str] = _GUARD) -> Iterator[_Removal]:
    """The guard calls on a line and the first argument each guards (when the call closes
    on the line); definitions of guards are not calls."""
    for match in pattern.finditer(line):
        if _DEFINITION.search(line[:match.start()]):
            continue
        value = _first_argument(line, match.end())
        if value:
            yield _Removal(guard=match.group("name"), value=value)


def _first_argument(line: str, start: int) -> str | None:
    depth = 0
    quote = ""
    for at in range(start, min(len(line), start + _MAX_VALUE)):
        char = line[at]
        if quote:
            quote = "" if char == quote and line[at - 1] != "\\" else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}" and depth:
            depth -= 1
        elif char in ",)" and not depth:
            return line[start:at].strip() or None
    return None


def _use_of(value: str) -> re.Pattern[str]:
    """The value as code uses it: the same expression, or the same name (not a longer one,
    not an attribute of something else)."""
    if _IDENTIFIER.fullmatch(value):
        return re.compile(rf"(?<![\w.]){re.escape(value)}(?!\w)")
    return re.compile(re.escape(value))


def _keeps(text: str, value: str) -> bool:
    return _use_of(value).search(text) is not None


def _lines_using(added: tuple[DiffLine, ...], text: str, starts: list[int],
                 value: str) -> list[DiffLine]:
    """The added lines that use the value: one search over the hunk's added text."""
    hits = {bisect_right(starts, match.start()) - 1 for match in _use_of(value).finditer(text)}
    return [added[at] for at in sorted(hits)]


def _unguarded(hunk: Hunk) -> Iterator[tuple[DiffLine, _Removal]]:
    added = hunk.added()
    text = "\n".join(line.text for line in added)
    starts = list(accumulate((len(line.text) + 1 for line in added[:-1]), initial=0))
    # What the added lines still pass to a guard (or to anything named like one).
    still = [r.value for line in added for r in removals(line.text, _GUARD_LIKE)]
    found = ((removed, removal) for removed in hunk.removed()
             for removal in removals(removed.text))
    for removed, removal in islice(found, _MAX_PER_HUNK):
        if any(_keeps(value, removal.value) or _keeps(removal.value, value)
               for value in still):
            continue  # still guarded (moved, or another guard took its place)
        keeping = _lines_using(added, text, starts, removal.value)
        if keeping:
            # The added line that replaced the removed one: the most alike.
            yield max(keeping, key=lambda line: _alike(removed, line)), removal


_CONDITION = re.compile(r"^\s*(?:el)?if\s*(?P<test>.+?)\s*:\s*(?:#.*)?$|"
                        r"^\s*(?:\}\s*else\s+)?if\s*\((?P<c_test>.+)\)\s*\{?\s*$")
_AND = re.compile(r"\s+and\s+|\s*&&\s*")
# Calls that validate: a pattern match, a predicate, an allow list.
_CHECK_CALL = re.compile(r"\.(match|fullmatch|search)\(|(?<![\w.])(?:[\w.]*\.)?(is_?[a-z]\w*|"
                         r"valid\w*|check\w*|allowed\w*|safe\w*|startswith|endswith|"
                         r"isidentifier|isalnum|isdigit|isdecimal)\(", re.IGNORECASE)


def conjuncts(line: str) -> tuple[str, ...] | None:
    """The parts of an `if` line's condition joined by `and`/`&&`, or None."""
    match = _CONDITION.match(line)
    if match is None:
        return None
    test = match.group("test") or match.group("c_test") or ""
    parts: list[str] = []
    depth = start = 0
    for at, char in enumerate(test):
        depth += (char in "([{") - (char in ")]}")
        if not depth:
            split = _AND.match(test, at)
            if split and at >= start:
                parts.append(test[start:at])
                start = split.end()
    parts.append(test[start:])
    return tuple(" ".join(part.split()) for part in parts if part.strip())


def _dropped_checks(hunk: Hunk) -> Iterator[tuple[DiffLine, str]]:
    """The validating parts of a removed `if` that the `if` replacing it no longer has."""
    lines = hunk.lines
    conditions = [(at, line, after) for at, line in enumerate(lines)
                  if line.kind == "add" and (after := conjuncts(line.text))]
    if not conditions:
        return
    narrowed = ((at, removed, before) for at, removed in enumerate(lines)
                if removed.kind == "del" and (before := conjuncts(removed.text))
                and len(before) > 1)
    for at, removed, before in islice(narrowed, _MAX_PER_HUNK):
        # The `if` that replaced it is near it in the hunk, and the most alike there.
        near = [(line, after) for where, line, after in conditions
                if abs(where - at) <= _NEAR_LINES]
        if not near:
            continue
        line, after = max(near, key=lambda pair: _alike(removed, pair[0]))
        if set(after) < set(before):
            yield from ((line, part) for part in before
                        if part not in after and _CHECK_CALL.search(part))


def _alike(first: DiffLine, second: DiffLine) -> float:
    return SequenceMatcher(None, first.text[:_ALIKE_CHARS], second.text[:_ALIKE_CHARS],
                           autojunk=False).ratio()


@dataclass(frozen=True)
class GuardRemovedRule(RuleBase):
    def applies_to(self, change: FileChange) -> bool:
        return bool(change.added) and change.language not in _PROSE \
            and "docs" not in change.tags

    def check(self, change: FileChange) -> Iterator[Hit]:
        for unit in change.units:
            if unit.hunk is None or not unit.hunk.removed():
                continue
            for line, removal in _unguarded(unit.hunk):
                yield Hit(rule_id=self.id, line=line.new_lineno or 0,
                          message=f"This change takes `{removal.guard}(...)` off "
                                  f"`{removal.value}` and keeps the value: what it guarded "
                                  "against (markup, quotes, `../`) gets through again.",
                          suggestion=f"Keep `{removal.guard}`, or say in the change why "
                                     "the value is safe without it.")
            for line, check in _dropped_checks(unit.hunk):
                yield Hit(rule_id=self.id, line=line.new_lineno or 0,
                          message=f"This change drops `{check}` from the condition and "
                                  "keeps the rest: values that check turned away now pass.",
                          suggestion="Keep the check, or say in the change why it is no "
                                     "longer needed.")


RULES = (
    GuardRemovedRule(RuleInfo(
        id="guard-removed", title="Escaping or sanitising removed", severity="warning",
        category="security",
        rationale="A change that drops escape()/safe_join()/secure_filename() around a value "
                  "it keeps is how fixed injections and traversals come back.")),
)
