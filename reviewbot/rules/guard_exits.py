"""A guard is a check and its exit (`if not is_safe(path): raise Forbidden()`): a change
takes it away by deleting both, by taking the exit from under a check it keeps, or by putting
a check that checks nothing (`if not path:`) in its place. Each is reported while the change
keeps using what the guard checked, wherever that use is: on an added line, or further down
the new file when the change only deletes (the finding then sits on the removed line, as
`Said.base_line`).

The guard is quiet when its check is still made (the same check called, or an `if` with a
real check and an exit on the same value), when its lines came back as code elsewhere in the
change (moved; not pasted into a page, a comment or a docstring), or when it went with the
function that held it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

import msgspec

from reviewbot.lazy_re import lazy_re
from reviewbot.rules.change_lines import ChangeLines
from reviewbot.rules.guard_text import (
    IDENTIFIER,
    Said,
    checks_something,
    conjuncts,
    inner_value,
    keeps,
    never_true,
)
from reviewbot.schema.units import DiffLine, Hunk

_EXITS = lazy_re(r"^\s*(?:\}\s*)?(?:raise\b|return\b|abort\(|continue\b|break\b|throw\b|"
                    r"(?:sys\.)?exit\(|os\.Exit\(|panic\(|die\b)")
# `if not check(args)`, `if (!check(args))`, `elif`, `} else if`; or a check whose name says
# it looks for trouble (`if is_unsafe(x)`).
_HEAD = lazy_re(
    r"^(?P<indent>\s*)(?:\}\s*else\s+)?(?:elif|else\s+if|if)\s*\(?\s*"
    r"(?:(?:not\s+|!\s*)(?P<check>(?:[\w.]+\.)?\w+)|(?P<trouble>(?:[\w.]+\.)?(?i:(?:is_)?\w*"
    r"(?:unsafe|invalid|forbidden|traversal|malicious|dangerous|outside)\w*)))"
    r"\((?P<args>[^)]*)\)")
# An exit on the `if` line itself, after its condition: `if not ok(x): raise E()`,
# `if (!ok(x)) return;`, `if (!ok(x)) { throw e; }`.
_INLINE_EXIT = lazy_re(r"[:{)]\s*(?:raise\b|return\b|abort\(|continue\b|break\b|throw\b|"
                          r"(?:sys\.)?exit\(|os\.Exit\(|panic\()")
_DEF = lazy_re(r"^(?P<indent>\s*)(?:async\s+)?def\s+(?P<name>\w+)\s*\(")
# How far down the new file a kept use, or a guard's body, is looked for.
_BODY_LINES = 30

_KEEP_CHECK = "Keep the check, or say in the change why the value is safe without it."


class Head(msgspec.Struct, frozen=True):
    check: str
    values: tuple[str, ...]
    indent: int
    inline_exit: bool
    text: str


def guard_head(text: str) -> Head | None:
    """The check an `if` line makes on its values, when it is a guard's head."""
    match = _HEAD.match(text)
    if match is None:
        return None
    values = tuple(v.strip() for v in match.group("args").split(",")
                   if IDENTIFIER.fullmatch(v.strip().split(".")[-1]))
    return Head(check=match.group("check") or match.group("trouble"), values=values,
                indent=len(match.group("indent")),
                inline_exit=_INLINE_EXIT.search(text, match.end() - 1) is not None,
                text=" ".join(text.strip().rstrip(":{").split()))


class NewFile(msgspec.Struct, frozen=True):
    """The new side of the file a hunk is in, as guard-removed reads it."""

    language: str
    change: ChangeLines
    line: Callable[[int], str]
    count: int


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def body_has_exit(new: NewFile, head_line: int, head: Head) -> bool:
    """Whether the `if` at new line `head_line` still exits: on its own line, or on a line of
    its body (the lines below it indented deeper)."""
    if head.inline_exit:
        return True
    for number in range(head_line + 1, min(new.count, head_line + _BODY_LINES) + 1):
        text = new.line(number)
        if not text.strip():
            continue
        if _indent(text) <= head.indent and not text.strip().startswith("}"):
            return False
        if _EXITS.match(text):
            return True
        if _indent(text) <= head.indent:
            return False
    return False


def _used_below(new: NewFile, start: int, indent: int, values: Sequence[str]) -> str | None:
    """The first of the values the new file uses from line `start` on, in the block the guard
    was in (until a line indented less than it)."""
    for number in range(start, min(new.count, start + _BODY_LINES) + 1):
        text = new.line(number)
        if not text.strip():
            continue
        if _indent(text) < indent:
            return None
        found = next((value for value in values if keeps(text, value)), None)
        if found is not None:
            return found
    return None


def _old_below(lines: tuple[DiffLine, ...], at: int) -> DiffLine | None:
    """The base's next non-blank line after the one at `at`."""
    return next((line for line in lines[at + 1:]
                 if line.kind != "add" and line.text.strip()), None)


def _anchor(lines: tuple[DiffLine, ...], at: int) -> int:
    """Where the removed line at `at` sits in the new file: the next new-side line, else the
    one before it."""
    after = next((line.new_lineno for line in lines[at + 1:] if line.new_lineno), None)
    before = next((line.new_lineno for line in reversed(lines[:at]) if line.new_lineno), None)
    return after or before or 1


def deleted_guards(hunk: Hunk, new: NewFile) -> Iterator[Said]:
    """A guard's head removed with its exit (or with the exit left to a check that checks
    nothing), while the value it checked is used on."""
    lines = hunk.lines
    added = hunk.added()
    for at, line in enumerate(lines):
        if line.kind != "del" or (head := guard_head(line.text)) is None:
            continue
        below = _old_below(lines, at)
        if not head.values or not (head.inline_exit or (below is not None
                                                         and _EXITS.match(below.text))):
            continue
        if _still_checked(added, head, new) or _moved(line.text, new) \
                or (_function_deleted(lines, at, new.change)
                    and not _new_function_keeps(lines, head.values)):
            continue
        subjects = {*head.values, *_receiver(head.check)}
        replacement = _replacement(added, subjects, new)
        if replacement is not None and checks_something(replacement[1]):
            continue  # rewritten: another check on the same value
        said = _deleted_said(hunk, line, head, replacement, new)
        if said is not None:
            yield said


def _deleted_said(hunk: Hunk, line: DiffLine, head: Head,
                  replacement: tuple[DiffLine, str] | None, new: NewFile) -> Said | None:
    added = hunk.added()
    if replacement is not None:
        return Said(replacement[0].new_lineno or 0,
                    f"This change replaces the guard `{head.text}` with "
                    f"`{' '.join(replacement[0].text.strip().rstrip(':{').split())}`, which "
                    + ("a false constant decides before any check runs"
                       if never_true(replacement[1]) else "checks only that the value is there")
                    + ": what the guard turned away now gets through.", _KEEP_CHECK)
    # The check put back without its exit is no use of the value.
    added = tuple(a for a in added if (again := guard_head(a.text)) is None
                  or again.check != head.check)
    for value in head.values:
        kept = [a for a in added if keeps(a.text, value)]
        source = _derived_from(hunk, value)
        if not kept and source is not None:
            # `path = abspath(payload.path)` went with the guard on `path`.
            value, kept = source, [a for a in added if keeps(a.text, source)]
        if kept:
            nearest = min(kept, key=lambda a: abs((a.new_lineno or 0) - (line.old_lineno or 0)))
            return Said(nearest.new_lineno or 0,
                        f"This change deletes the guard `{head.text}` and its exit, and keeps "
                        f"using `{value}`: what the guard turned away now gets through.",
                        _KEEP_CHECK)
    at = hunk.lines.index(line)
    anchor = _anchor(hunk.lines, at)
    used = _used_below(new, anchor, head.indent, head.values)
    if used is None:
        return None
    return Said(anchor, f"This change deletes the guard `{head.text}` and its exit (line "
                        f"{line.old_lineno} of the base), and the code below still uses "
                        f"`{used}`: what the guard turned away now gets through.",
                _KEEP_CHECK, base_line=line.old_lineno)


def _still_checked(added: tuple[DiffLine, ...], head: Head, new: NewFile) -> bool:
    """Whether the added lines still make the check: called on its own (a helper that
    raises), or as the head of a guard that still exits."""
    call = re.compile(rf"(?<![\w.]){re.escape(head.check)}\(")
    for line in added:
        test = _condition(line.text)
        if not call.search(line.text) or (test is not None and never_true(test)):
            continue  # `if False and not ok(p):` calls the check and never makes it
        again = guard_head(line.text)
        if again is None or again.check != head.check \
                or body_has_exit(new, line.new_lineno or 0, again):
            return True
    return False


def _moved(text: str, new: NewFile) -> bool:
    """The guard came back as code elsewhere in the change (an `elif` as an `if`): its line,
    with an exit on it or on the line after it."""
    return any(new.change.added(form, new.language, _exits)
               for form in (text, re.sub(r"^(\s*)elif\b", r"\1if", text)))


def _exits(line: str, following: str) -> bool:
    head = guard_head(line)
    return (head is not None and head.inline_exit) or _EXITS.match(following) is not None


def _replacement(added: tuple[DiffLine, ...], subjects: set[str],
                 new: NewFile) -> tuple[DiffLine, str] | None:
    """An added `if` on one of the subjects with an exit under it (its own, or the old one
    it took over), with its condition."""
    for line in added:
        test = _condition(line.text)
        if test is None or not any(keeps(test, subject) for subject in subjects):
            continue
        inline = _ONE_LINE_IF.match(line.text)
        head = Head(check="", values=(), indent=_indent(line.text),
                    inline_exit=inline is not None and _INLINE_EXIT.search(
                        line.text, max(inline.end() - 1, 0)) is not None, text="")
        if body_has_exit(new, line.new_lineno or 0, head):
            return line, test
    return None


_ONE_LINE_IF = lazy_re(r"^\s*(?:\}\s*else\s+)?(?:elif|else\s+if|if)\b\s*(?P<test>.*?)"
                          r"\s*(?::|\{|\)\s*(?:\{|return|throw|raise))")


def _condition(text: str) -> str | None:
    parts = conjuncts(text)
    if parts is not None:
        return " and ".join(parts)
    match = _ONE_LINE_IF.match(text)
    return match.group("test") if match else None


def exits_taken(hunk: Hunk, new: NewFile) -> Iterator[Said]:
    """A guard's check left in place (unchanged) with its exit taken from under it."""
    lines = hunk.lines
    for at, line in enumerate(lines):
        if line.kind != "ctx" or (head := guard_head(line.text)) is None or head.inline_exit:
            continue
        below = _old_below(lines, at)
        if below is None or below.kind != "del" or not _EXITS.match(below.text) \
                or body_has_exit(new, line.new_lineno or 0, head):
            continue
        instead = next((a for a in lines[at + 1:] if a.kind == "add" and a.text.strip()
                        and _indent(a.text) > head.indent), None)
        exit_text = " ".join(below.text.split())
        if instead is not None:
            yield Said(instead.new_lineno or 0,
                       f"This change keeps the check `{head.text}` but takes its exit "
                       f"(`{exit_text}`) away: what the check turns away now gets through.",
                       "Keep the exit, or say in the change why the value is safe.")
        else:
            where = lines.index(below)
            yield Said(_anchor(lines, where),
                       f"This change keeps the check `{head.text}` but deletes its exit "
                       f"(`{exit_text}`, line {below.old_lineno} of the base): what the check "
                       "turns away now gets through.",
                       "Keep the exit, or say in the change why the value is safe.",
                       base_line=below.old_lineno)


def _function_deleted(lines: tuple[DiffLine, ...], at: int, change: ChangeLines) -> bool:
    """Whether the Python function holding the guard at `at` goes whole (its `def` and every
    line of its body removed) and the change defines no function of that name again: its
    values went with it, and a name the added code uses is another variable."""
    indent = _indent(lines[at].text)
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
        if _indent(line.text) <= depth:
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
        indent = _indent(line.text)
        if found:
            depth, own = len(found.group("indent")), set()
            continue
        if depth is not None and indent <= depth:
            depth = None
        if depth is None:
            continue
        own |= {value for value in values if _assigns(line.text, value)}
        if any(value not in own and keeps(line.text, value) for value in values):
            return True
    return False


def _assigns(text: str, value: str) -> bool:
    return re.match(rf"\s*(?:for\s+)?{re.escape(value)}\s*(?::[^=]*)?(?:=(?!=)|\s+in\b)",
                    text) is not None


def _receiver(check: str) -> tuple[str, ...]:
    """The value a check is a method of (`target` of `target.is_relative_to`); not a
    module's path (`os.path`), not `self`."""
    receiver, dot, _ = check.rpartition(".")
    return (receiver,) if dot and IDENTIFIER.fullmatch(receiver) \
        and receiver not in ("self", "cls") else ()


def _derived_from(hunk: Hunk, value: str) -> str | None:
    """What a removed `value = call(source, ...)` line computed the value from."""
    assigned = re.compile(rf"^\s*{re.escape(value)}\s*=\s*(?P<expr>.+)$")
    for line in hunk.removed():
        match = assigned.match(line.text)
        if match:
            return inner_value(match.group("expr"))
    return None
