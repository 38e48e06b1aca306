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
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from difflib import SequenceMatcher
from itertools import chain, islice

import msgspec

from reviewbot.code.docstrings import docstring_lines
from reviewbot.code.long_lines import long_line_code
from reviewbot.lazy_re import lazy_re
from reviewbot.rules.base import (
    MINIFIED_LINE_CHARS,
    FileChange,
    Hit,
    Quiet,
    RuleBase,
    RuleInfo,
    is_long,
    is_minified,
)
from reviewbot.rules.guard_exits import NewFile, deleted_guards, exits_taken
from reviewbot.rules.guard_text import (
    IDENTIFIER,
    Said,
    conjuncts,
    inner_value,
    keeps,
    names_in,
)
from reviewbot.schema.units import DiffLine, Hunk

# Calls whose whole job is to make a value safe for where it goes: HTML, SQL LIKE, a shell,
# a URL, a file name under a folder.
_GUARD = lazy_re(
    r"(?<![\w.])(?P<name>(?:[A-Za-z_]\w*\.)*(?:_?(?:escape\w*|\w+_escape|sanitiz\w+|sanitis\w+)"
    r"|quote|quote_plus|quoteattr|secure_filename|safe_join|strip_tags|bleach\.clean))\s*\(")
# On the added side any call named like a guard counts: `quote(k)` becoming
# `percent_encoded(k)` is a rename, not a removal.
_GUARD_LIKE = lazy_re(r"(?<![\w.])(?P<name>(?:[A-Za-z_]\w*\.)*\w*(?:escape|quote|encod|"
                         r"saniti[sz]|clean|safe|secure|strip_tags)\w*)\s*\(", re.IGNORECASE)
_DEFINITION = lazy_re(r"\b(def|function|fn|func)\s+$")
# Where text is prose, not code.
_PROSE = frozenset({"markdown", "rst", "text"})
_MAX_VALUE = 200
# A hunk rewriting a whole templating module can remove thousands of guard calls: the
# first findings say what a reviewer needs to hear. Only what is said counts: a removal that
# is still guarded (a line reformatted, a guard renamed) spends nothing, and each removal is
# checked in time of its own size (`_Added`), so the work stays linear in the hunk.
_MAX_PER_HUNK = 50
# Of the added lines that use a value, the nearest ones are compared with the removed line.
_NEAR_USES = 30
_ALIKE_CHARS = 300
_NEAR_LINES = 30
# How far apart two hunks of one function may be, in lines.
_NEAR_FUNCTION = 60


class _Removal(msgspec.Struct, frozen=True):
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


class _Added:
    """A hunk's added lines, indexed once: which lines use a name, and what they still pass
    to a guard (or to anything named like one). Each question is answered in time of the
    value's length and its answer, not the hunk's: removals are many in a rewritten module,
    and none of them may spend a budget the real one needs."""

    def __init__(self, added: tuple[DiffLine, ...]) -> None:
        self.lines = added
        self.by_name: dict[str, list[int]] = {}
        for at, line in enumerate(added):
            for name in set(names_in(line.text)):
                self.by_name.setdefault(name, []).append(at)
        self.still = {r.value for line in added for r in removals(line.text, _GUARD_LIKE)}
        self.still_names: set[str] = set()
        self.still_by_name: dict[str, list[str]] = {}
        for value in self.still:
            if IDENTIFIER.fullmatch(value):
                self.still_names.add(value)
            names = list(names_in(value))
            if names:
                self.still_by_name.setdefault(names[0], []).append(value)
            self.still_names.update(names)
        self._joined = "\0".join(sorted(self.still))

    def guarded(self, value: str) -> bool:
        """Whether a guard still takes the value, or part of it, or something it is part of
        (`_keeps` either way, as the removed line's value and a kept guard's value)."""
        if value in self.still:
            return True
        if self.guarded_by_name(value):
            return True
        return any(keeps(value, other) for name in set(names_in(value))
                   for other in self.still_by_name.get(name, ()))

    def guarded_by_name(self, value: str) -> bool:
        """Whether a guard still takes something that uses the value."""
        return value in (self.still_names if IDENTIFIER.fullmatch(value) else self._joined)

    def using(self, value: str, near: int) -> list[DiffLine]:
        """The added lines that use the value, the nearest to base line `near` first (at most
        _NEAR_USES of them)."""
        names = list(names_in(value))
        if not names:
            return []
        candidates = self.by_name.get(names[0], [])
        if not IDENTIFIER.fullmatch(value):
            candidates = [at for at in candidates if keeps(self.lines[at].text, value)]
        found = [self.lines[at] for at in candidates]
        return sorted(found, key=lambda line: abs((line.new_lineno or 0) - near))[:_NEAR_USES]


def _unguarded(hunk: Hunk) -> Iterator[tuple[DiffLine, _Removal]]:
    added = _Added(hunk.added())
    found = ((removed, removal) for removed in hunk.removed()
             for removal in removals(removed.text))
    for removed, removal in found:
        if added.guarded(removal.value):
            continue  # still guarded (moved, or another guard took its place)
        keeping = added.using(removal.value, removed.old_lineno or 0)
        inner = inner_value(removal.value)
        if not keeping and inner is not None and not added.guarded(inner):
            # `escape(render(x))` becoming `x`: the guard went with the call inside it.
            keeping = added.using(inner, removed.old_lineno or 0)
            removal = _Removal(guard=removal.guard, value=inner)
        if keeping:
            # The added line that replaced the removed one: the most alike.
            yield max(keeping, key=lambda line: _alike(removed, line)), removal


class _Nearby:
    """The added lines of each hunk of a file near a base line, indexed once a span."""

    def __init__(self, hunks: list[Hunk]) -> None:
        self._hunks = hunks
        self._numbers = [[line.new_lineno or 0 for line in hunk.added()] for hunk in hunks]
        self._spans: dict[tuple[int, int, int], _Added] = {}

    def near(self, other: int, where: int) -> _Added:
        lines = self._numbers[other]
        low = bisect_left(lines, where - _NEAR_FUNCTION)
        high = bisect_right(lines, where + _NEAR_FUNCTION)
        key = (other, low, high)
        if key not in self._spans:
            self._spans[key] = _Added(self._hunks[other].added()[low:high])
        return self._spans[key]


def _across_hunks(hunks: list[Hunk]) -> Iterator[tuple[DiffLine, _Removal]]:
    """A guard removed in one hunk and its value used raw in another hunk near it (the same
    function, as a diff splits it): found only when its own hunk neither keeps nor guards
    the value."""
    if len(hunks) < 2:
        return
    indexed = [_Added(hunk.added()) for hunk in hunks]
    nearby = _Nearby(hunks)
    for index, hunk in enumerate(hunks):
        for removed in hunk.removed():
            for removal in removals(removed.text):
                if indexed[index].using(removal.value, 0):
                    continue  # its own hunk answers for it
                found = _used_raw_nearby(nearby, len(hunks), index, removed, removal)
                if found is not None:
                    yield found, removal


def _used_raw_nearby(nearby: _Nearby, count: int, index: int, removed: DiffLine,
                     removal: _Removal) -> DiffLine | None:
    """The first line of another hunk near the removal that uses its value unguarded."""
    for other in range(count):
        if other == index:
            continue
        near = nearby.near(other, removed.old_lineno or 0)
        if near.guarded_by_name(removal.value):
            continue  # guarded there
        using = [a for a in near.lines if keeps(a.text, removal.value)]
        if using:
            return using[0]
    return None


# Calls that validate: a pattern match, a predicate, an allow list.
_CHECK_CALL = lazy_re(r"\.(match|fullmatch|search)\(|(?<![\w.])(?:[\w.]*\.)?(is_?[a-z]\w*|"
                         r"valid\w*|check\w*|allowed\w*|safe\w*|startswith|endswith|"
                         r"isidentifier|isalnum|isdigit|isdecimal)\(", re.IGNORECASE)


def _dropped_checks(hunk: Hunk) -> Iterator[tuple[DiffLine, str]]:
    """The validating parts of a removed `if` that the `if` replacing it no longer has."""
    lines = hunk.lines
    conditions = [(at, line, after) for at, line in enumerate(lines)
                  if line.kind == "add" and (after := conjuncts(line.text))]
    if not conditions:
        return
    where = [at for at, _, _ in conditions]
    narrowed = ((at, removed, before) for at, removed in enumerate(lines)
                if removed.kind == "del" and (before := conjuncts(removed.text))
                and len(before) > 1)
    for at, removed, before in narrowed:
        # The `if` that replaced it is near it in the hunk, and the most alike there.
        near = [(line, after) for _, line, after in conditions[
            bisect_left(where, at - _NEAR_LINES):bisect_right(where, at + _NEAR_LINES)]]
        if not near:
            continue
        line, after = max(near, key=lambda pair: _alike(removed, pair[0]))
        if set(after) < set(before):
            yield from ((line, part) for part in before
                        if part not in after and _CHECK_CALL.search(part))


_CHECKING_JOIN = lazy_re(r"(?<![\w.])(?P<name>(?:[\w.]+\.)?_?\w*(?:safe|secure|checked|"
                            r"within|contained|under)\w*_?(?:join|path)\w*)\((?P<args>[^()]*)\)",
                            re.IGNORECASE)
_BARE_JOIN = lazy_re(r"(?:os\.path|posixpath|ntpath)\.join\((?P<args>[^()]*)\)|"
                        r"(?<![\w.])(?:Path|PurePath)\((?P<path_args>[^()]*)\)")


def _replaced_joins(hunk: Hunk) -> Iterator[tuple[DiffLine, str]]:
    """A join that checks its result stays under the base replaced by a bare join of the
    same parts (`safe_join(root, name)`, `self._secure_path(root, name)` -> `os.path.join`)."""
    joins = [(line, m) for line in hunk.added() for m in _BARE_JOIN.finditer(line.text)]
    if not joins:
        return
    for removed in hunk.removed():
        for match in _CHECKING_JOIN.finditer(removed.text):
            parts = _parts(match.group("args"))
            for line, join in joins:
                if parts and parts == _parts(join.group("args") or join.group("path_args")
                                             or ""):
                    yield line, match.group("name")
                    break


def _parts(args: str) -> tuple[str, ...]:
    return tuple(" ".join(a.split()) for a in args.split(",") if a.strip())


_AUTOESCAPE_ON = lazy_re(r"""["']?autoescape["']?\s*[=:]\s*(?!False|None|0)\S""")


def _setting_dropped(hunk: Hunk) -> Iterator[DiffLine]:
    """`autoescape=True` (or `"autoescape": True` in an options dict) removed, and nothing
    in the added lines sets it: the templates render values unescaped."""
    if not any(_AUTOESCAPE_ON.search(line.text) for line in hunk.removed()):
        return
    added = hunk.added()
    if not added or any("autoescape" in line.text for line in added):
        return
    yield added[0]


def _alike(first: DiffLine, second: DiffLine) -> float:
    return SequenceMatcher(None, first.text[:_ALIKE_CHARS], second.text[:_ALIKE_CHARS],
                           autojunk=False).ratio()


class GuardRemovedRule(RuleBase, frozen=True):
    def applies_to(self, change: FileChange) -> bool:
        # A change that only deletes can take a guard away too.
        return bool(change.added or change.removes) and change.language not in _PROSE

    def check(self, change: FileChange) -> Iterator[Hit]:
        # A hunk all of whose changed lines are minified holds nothing a person wrote (its
        # removed lines were the base's). A long line elsewhere is read as its code (its
        # comments stripped, cut at the long-line limit: the patterns here would cost time
        # quadratic in it). Nor is an added comment or docstring code: a word in it ("only the
        # first one") neither uses a value nor guards it.
        if not change.removes:
            return  # every shape here takes something the base had away
        prose = change.comment_lines | docstring_lines(change.python_tree
                                                       if change.language == "python" else None)
        hunks = [u.hunk.replace(lines=tuple(_readable(line, change.language)
                                            for line in u.hunk.lines
                                            if not (line.kind == "add"
                                                    and line.new_lineno in prose)))
                 for u in change.units if u.hunk is not None and not is_minified(u)]
        new = NewFile(language=change.language, change=change.change, line=change.line,
                      count=change.line_count)
        said = chain(islice(_said_across(hunks), _MAX_PER_HUNK),
                     *(islice(_said_in(hunk, new), _MAX_PER_HUNK) for hunk in hunks
                       if hunk.removed()))
        # Documentation (as the base declares it) is not read for guards: recorded instead.
        quiet = Quiet("docs", change.kind.decided("docs")) if "docs" in change.tags else None
        for found in said:
            yield Hit(rule_id=self.id, line=found.line, message=found.message,
                      suggestion=found.suggestion, base_line=found.base_line, quiet=quiet)


def _readable(line: DiffLine, language: str) -> DiffLine:
    if not is_long(line.text):
        return line
    return line.replace(text=long_line_code(line.text, language)[:MINIFIED_LINE_CHARS])


_GOT_THROUGH = "what it guarded against (markup, quotes, `../`) gets through again."


def _keep(guard: str) -> str:
    return f"Keep `{guard}`, or say in the change why the value is safe without it."


def _said_across(hunks: list[Hunk]) -> Iterator[Said]:
    for line, removal in _across_hunks(hunks):
        yield Said(line.new_lineno or 0,
                   f"This change takes `{removal.guard}(...)` off `{removal.value}` in one "
                   f"place and uses the value raw here: {_GOT_THROUGH}", _keep(removal.guard))


def _said_in(hunk: Hunk, new: NewFile) -> Iterator[Said]:
    for line, removal in _unguarded(hunk):
        yield Said(line.new_lineno or 0,
                   f"This change takes `{removal.guard}(...)` off `{removal.value}` and "
                   f"keeps the value: {_GOT_THROUGH}", _keep(removal.guard))
    for line, check in _dropped_checks(hunk):
        yield Said(line.new_lineno or 0,
                   f"This change drops `{check}` from the condition and keeps the rest: "
                   "values that check turned away now pass.",
                   "Keep the check, or say in the change why it is no longer needed.")
    yield from deleted_guards(hunk, new)
    yield from exits_taken(hunk, new)
    for line, helper in _replaced_joins(hunk):
        yield Said(line.new_lineno or 0,
                   f"This change replaces `{helper}(...)` with a bare join of the same parts: "
                   "nothing checks any more that the result stays under its base (`../` in a "
                   "part escapes it).",
                   f"Keep `{helper}`, or check the joined path is under the base "
                   "(Path(base, part).resolve().is_relative_to(base)).")
    for line in _setting_dropped(hunk):
        yield Said(line.new_lineno or 0,
                   "This change removes `autoescape` from the template settings: values are "
                   "rendered into HTML unescaped (XSS).",
                   "Keep autoescape on (jinja2.select_autoescape()), or say in the change why "
                   "these templates are not HTML.")


RULES = (
    GuardRemovedRule(RuleInfo(
        id="guard-removed", title="Escaping or sanitising removed", severity="warning",
        category="security",
        rationale="A change that drops escape()/safe_join()/secure_filename() around a value "
                  "it keeps is how fixed injections and traversals come back.")),
)
