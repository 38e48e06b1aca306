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
from collections.abc import Iterator, Sequence
from difflib import SequenceMatcher
from itertools import accumulate, chain, islice, pairwise

import msgspec

from reviewbot.code.docstrings import docstring_lines
from reviewbot.rules.base import (
    ChangeLines,
    FileChange,
    Hit,
    Quiet,
    RuleBase,
    RuleInfo,
    is_long,
    is_minified,
)
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
        inner = _inner_value(removal.value)
        if not keeping and inner is not None and not any(_keeps(v, inner) for v in still):
            # `escape(render(x))` becoming `x`: the guard went with the call inside it.
            keeping = _lines_using(added, text, starts, inner)
            removal = _Removal(guard=removal.guard, value=inner)
        if keeping:
            # The added line that replaced the removed one: the most alike.
            yield max(keeping, key=lambda line: _alike(removed, line)), removal


_INNER_CALL = re.compile(
    r"^(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*\((?P<arg>[A-Za-z_][\w.]*)\s*(?:,|\))")


def _inner_value(value: str) -> str | None:
    """The first argument of a call that is the guarded value (`render(x)` -> `x`)."""
    match = _INNER_CALL.match(value)
    return match.group("arg") if match else None


def _across_hunks(hunks: list[Hunk]) -> Iterator[tuple[DiffLine, _Removal]]:
    """A guard removed in one hunk and its value used raw in another hunk near it (the same
    function, as a diff splits it): found only when its own hunk neither keeps nor guards
    the value."""
    if len(hunks) < 2:
        return
    for index, hunk in enumerate(hunks):
        own = "\n".join(line.text for line in hunk.added())
        for removed in islice(hunk.removed(), _MAX_PER_HUNK):
            for removal in removals(removed.text):
                if _keeps(own, removal.value):
                    continue  # its own hunk answers for it
                where = removed.old_lineno or 0
                for other in hunks[:index] + hunks[index + 1:]:
                    added = [a for a in other.added()
                             if abs((a.new_lineno or 0) - where) <= _NEAR_FUNCTION]
                    if any(_keeps(r.value, removal.value) for a in added
                           for r in removals(a.text, _GUARD_LIKE)):
                        continue  # guarded there
                    using = [a for a in added if _keeps(a.text, removal.value)]
                    if using:
                        yield using[0], removal
                        break


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


_EXITS = re.compile(r"^\s*(raise\b|return\b|abort\(|continue\b|break\b|throw\b)")
_NEGATED_CHECK = re.compile(
    r"^\s*(?:el)?if\s+not\s+(?P<check>(?:[\w.]+\.)?\w+)\((?P<args>[^)]*)\)")


def _deleted_guards(hunk: Hunk, change: ChangeLines) -> Iterator[tuple[DiffLine, str, str]]:
    """A whole guard deleted: `if not is_safe(path):` and the `raise`/`return` under it,
    with no `if` on the same check added back (in this hunk, or as the same line anywhere in
    the change: moved), while the value stays in the added code."""
    lines = hunk.lines
    added = hunk.added()
    added_text = "\n".join(line.text for line in added)
    for at, line in enumerate(lines[:-1]):
        if line.kind != "del":
            continue
        match = _NEGATED_CHECK.match(line.text) or _positive_guard(line.text)
        body = lines[at + 1]
        if match is None or body.kind != "del" or not _EXITS.match(body.text):
            continue
        check = match.group("check")
        values = [v.strip() for v in match.group("args").split(",")
                  if _IDENTIFIER.fullmatch(v.strip().split(".")[-1])]
        if not values or re.search(rf"(?<![\w.]){re.escape(check)}\(", added_text) \
                or any(change.added(form) for form in _moved_forms(line.text)) \
                or _new_guard_on(lines, {*values, *_receiver(check)}) \
                or (_function_deleted(lines, at, change)
                    and not _new_function_keeps(lines, values)):
            # The check is still made (moved, rewritten, or another took its place), or it
            # went with the function that made it.
            continue
        for value in values:
            kept = [a for a in added if _keeps(a.text, value)]
            source = _derived_from(hunk, value)
            if not kept and source is not None:
                # `path = abspath(payload.path)` went with the guard on `path`.
                value, kept = source, [a for a in added if _keeps(a.text, source)]
            if kept:
                nearest = min(kept, key=lambda a: abs((a.new_lineno or 0)
                                                      - (line.old_lineno or 0)))
                yield nearest, line.text.strip().rstrip(":").strip(), value
                break


_DEF = re.compile(r"^(?P<indent>\s*)(?:async\s+)?def\s+(?P<name>\w+)\s*\(")


def _function_deleted(lines: tuple[DiffLine, ...], at: int, change: ChangeLines) -> bool:
    """Whether the Python function holding the guard at `at` goes whole (its `def` and every
    line of its body removed) and the change defines no function of that name again: its
    values went with it, and a name the added code uses is another variable."""
    indent = len(lines[at].text) - len(lines[at].text.lstrip())
    old_side = [(where, line) for where, line in enumerate(lines) if line.kind != "add"]
    position = next(i for i, (where, _) in enumerate(old_side) if where == at)
    header = None
    for where, line in reversed(old_side[:position]):
        found = _DEF.match(line.text)
        if found and len(found.group("indent")) < indent:
            header = (where, line, found)
            break
    if header is None or header[1].kind != "del":
        return False
    depth = len(header[2].group("indent"))
    # A hunk shows the unchanged lines after what it removes, but at the end of the file.
    body_ended = old_side[-1][1].kind == "del"
    for where, line in old_side:
        if where <= header[0] or not line.text.strip():
            continue
        if len(line.text) - len(line.text.lstrip()) <= depth:
            body_ended = True
            break
        if line.kind != "del":
            return False  # a line of it stays: the function is changed, not deleted
    return body_ended and not change.defines(header[2].group("name"))


def _new_function_keeps(lines: tuple[DiffLine, ...], values: Sequence[str]) -> bool:
    """Whether a function the hunk adds uses one of the values as it came in (a parameter or
    a name from outside, not one it assigns itself): the deleted function may be back under
    another name, without its guard, and a new name does not take the removal away."""
    depth: int | None = None
    own: set[str] = set()
    for line in lines:
        if line.kind != "add" or not line.text.strip():
            continue
        found = _DEF.match(line.text)
        indent = len(line.text) - len(line.text.lstrip())
        if found:
            depth, own = len(found.group("indent")), set()
            continue
        if depth is not None and indent <= depth:
            depth = None
        if depth is None:
            continue
        own |= {value for value in values if _assigns(line.text, value)}
        if any(value not in own and _keeps(line.text, value) for value in values):
            return True
    return False


def _assigns(text: str, value: str) -> bool:
    return re.match(rf"\s*(?:for\s+)?{re.escape(value)}\s*(?::[^=]*)?(?:=(?!=)|\s+in\b)",
                    text) is not None


def _new_guard_on(lines: tuple[DiffLine, ...], subjects: set[str]) -> bool:
    """Whether the added lines hold a guard of their own (an `if` with an exit under it) on
    one of the subjects: the check was rewritten, not deleted."""
    for line, body in pairwise(lines):
        if (line.kind == "add" and body.kind == "add" and _EXITS.match(body.text)
                and conjuncts(line.text) is not None
                and any(_keeps(line.text, subject) for subject in subjects)):
            return True
    return False


def _receiver(check: str) -> tuple[str, ...]:
    """The value a check is a method of (`target` of `target.is_relative_to`); not a
    module's path (`os.path`), not `self`."""
    receiver, dot, _ = check.rpartition(".")
    return (receiver,) if dot and _IDENTIFIER.fullmatch(receiver) \
        and receiver not in ("self", "cls") else ()


def _derived_from(hunk: Hunk, value: str) -> str | None:
    """What a removed `value = call(source, ...)` line computed the value from."""
    assigned = re.compile(rf"^\s*{re.escape(value)}\s*=\s*(?P<expr>.+)$")
    for line in hunk.removed():
        match = assigned.match(line.text)
        if match:
            return _inner_value(match.group("expr"))
    return None


def _moved_forms(text: str) -> tuple[str, str]:
    """A guard line as it may come back elsewhere: an `elif` often becomes an `if`."""
    return text, re.sub(r"^(\s*)elif\b", r"\1if", text)


def _positive_guard(text: str) -> re.Match[str] | None:
    """`if is_unsafe(x):`, `if bad(x):` followed by an exit: a guard too, when the check's
    name says it looks for trouble."""
    match = re.match(r"^\s*(?:el)?if\s+(?P<check>(?:[\w.]+\.)?(?:is_)?\w*(?:unsafe|invalid|"
                     r"forbidden|traversal|malicious|dangerous|outside)\w*)"
                     r"\((?P<args>[^)]*)\)", text, re.IGNORECASE)
    return match


_CHECKING_JOIN = re.compile(r"(?<![\w.])(?P<name>(?:[\w.]+\.)?_?\w*(?:safe|secure|checked|"
                            r"within|contained|under)\w*_?(?:join|path)\w*)\((?P<args>[^()]*)\)",
                            re.IGNORECASE)
_BARE_JOIN = re.compile(r"(?:os\.path|posixpath|ntpath)\.join\((?P<args>[^()]*)\)|"
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


_AUTOESCAPE_ON = re.compile(r"""["']?autoescape["']?\s*[=:]\s*(?!False|None|0)\S""")


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
        return bool(change.added) and change.language not in _PROSE

    def check(self, change: FileChange) -> Iterator[Hit]:
        # A hunk all of whose changed lines are minified holds nothing a person wrote, and a
        # long line is passed over on its own (its patterns would cost time quadratic in it).
        # Nor is an added comment or docstring code: a word in it ("only the first one")
        # neither uses a value nor guards it.
        prose = change.comment_lines | docstring_lines(change.python_tree
                                                       if change.language == "python" else None)
        hunks = [u.hunk.replace(lines=tuple(line for line in u.hunk.lines
                                            if not is_long(line.text)
                                            and not (line.kind == "add"
                                                     and line.new_lineno in prose)))
                 for u in change.units if u.hunk is not None and not is_minified(u)]
        said = chain(_said_across(hunks), *(_said_in(hunk, change.change) for hunk in hunks
                                            if hunk.removed()))
        # Documentation (as the base declares it) is not read for guards: recorded instead.
        quiet = Quiet("docs", change.kind.decided("docs")) if "docs" in change.tags else None
        for line, message, suggestion in said:
            yield Hit(rule_id=self.id, line=line.new_lineno or 0, message=message,
                      suggestion=suggestion, quiet=quiet)


# What the rule says: the added line it lands on, the message, the suggestion.
Said = tuple[DiffLine, str, str]
_GOT_THROUGH = "what it guarded against (markup, quotes, `../`) gets through again."


def _keep(guard: str) -> str:
    return f"Keep `{guard}`, or say in the change why the value is safe without it."


def _said_across(hunks: list[Hunk]) -> Iterator[Said]:
    for line, removal in _across_hunks(hunks):
        yield (line, f"This change takes `{removal.guard}(...)` off `{removal.value}` in one "
                     f"place and uses the value raw here: {_GOT_THROUGH}", _keep(removal.guard))


def _said_in(hunk: Hunk, change: ChangeLines) -> Iterator[Said]:
    for line, removal in _unguarded(hunk):
        yield (line, f"This change takes `{removal.guard}(...)` off `{removal.value}` and "
                     f"keeps the value: {_GOT_THROUGH}", _keep(removal.guard))
    for line, check in _dropped_checks(hunk):
        yield (line, f"This change drops `{check}` from the condition and keeps the rest: "
                     "values that check turned away now pass.",
               "Keep the check, or say in the change why it is no longer needed.")
    for line, guard, value in _deleted_guards(hunk, change):
        yield (line, f"This change deletes the guard `{guard}` and its exit, and keeps using "
                     f"`{value}`: what the guard turned away now gets through.",
               "Keep the check, or say in the change why the value is safe without it.")
    for line, helper in _replaced_joins(hunk):
        yield (line, f"This change replaces `{helper}(...)` with a bare join of the same parts: "
                     "nothing checks any more that the result stays under its base (`../` in a "
                     "part escapes it).",
               f"Keep `{helper}`, or check the joined path is under the base "
               "(Path(base, part).resolve().is_relative_to(base)).")
    for line in _setting_dropped(hunk):
        yield (line, "This change removes `autoescape` from the template settings: values are "
                     "rendered into HTML unescaped (XSS).",
               "Keep autoescape on (jinja2.select_autoescape()), or say in the change why these "
               "templates are not HTML.")

RULES = (
    GuardRemovedRule(RuleInfo(
        id="guard-removed", title="Escaping or sanitising removed", severity="warning",
        category="security",
        rationale="A change that drops escape()/safe_join()/secure_filename() around a value "
                  "it keeps is how fixed injections and traversals come back.")),
)
