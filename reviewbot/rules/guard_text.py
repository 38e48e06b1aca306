"""What guard-removed reads in a line of code, as text (any language): where a value is used,
an `if` line's condition and its parts, and what it says when it lands (`Said`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

import msgspec

from reviewbot.lazy_re import lazy_re

IDENTIFIER = lazy_re(r"[A-Za-z_]\w*")
# A name as code uses it: not a longer name, not an attribute of something else.
NAMES = lazy_re(r"(?<![\w.])[A-Za-z_]\w*")


class Said(msgspec.Struct, frozen=True):
    """What the rule says where: `line` on the new side; `base_line` when what it is about is
    a line the change removed (its number in the base's file), `line` then being where the
    removal sits in the new file."""

    line: int
    message: str
    suggestion: str
    base_line: int | None = None


@lru_cache(maxsize=4096)
def use_of(value: str) -> re.Pattern[str]:
    """The value as code uses it: the same expression, or the same name (not a longer one,
    not an attribute of something else)."""
    if IDENTIFIER.fullmatch(value):
        return re.compile(rf"(?<![\w.]){re.escape(value)}(?!\w)")
    return re.compile(re.escape(value))


def keeps(text: str, value: str) -> bool:
    return use_of(value).search(text) is not None


def names_in(text: str) -> Iterator[str]:
    return (match.group(0) for match in NAMES.finditer(text))


_CONDITION = lazy_re(r"^\s*(?:el)?if\s*(?P<test>.+?)\s*:\s*(?:#.*)?$|"
                        r"^\s*(?:\}\s*else\s+)?if\s*\((?P<c_test>.+)\)\s*\{?\s*$")
_AND = lazy_re(r"\s+and\s+|\s*&&\s*")


def condition(line: str) -> str | None:
    """An `if` line's condition (Python's, or a C-like language's in parentheses), or None."""
    match = _CONDITION.match(line)
    if match is None:
        return None
    return match.group("test") or match.group("c_test") or ""


def conjuncts(line: str) -> tuple[str, ...] | None:
    """The parts of an `if` line's condition joined by `and`/`&&`, or None."""
    test = condition(line)
    if test is None:
        return None
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


_INNER_CALL = lazy_re(
    r"^(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*\((?P<arg>[A-Za-z_][\w.]*)\s*(?:,|\))")


def inner_value(value: str) -> str | None:
    """The first argument of a call that is the guarded value (`render(x)` -> `x`)."""
    match = _INNER_CALL.match(value)
    return match.group("arg") if match else None


# A call that checks something (not a conversion or a size), or a comparison with something
# other than nothing (None, empty, a truth value): what makes a condition a check.
_CALL = lazy_re(r"(?<![\w.])(?!(?:len|bool|str|int|float|type|repr|id|print)\()"
                   r"[A-Za-z_][\w.]*\s*\(")
_COMPARED = lazy_re(r"(?:==|!=|<=?|>=?|\bin\b)\s*(?!None\b|True\b|False\b|null\b|nil\b|"
                       r"""undefined\b|0\b|""|''|\[\]|\{\}|\)|$)\S""")


def checks_something(condition: str) -> bool:
    """Whether an `if` line's condition checks the value: a call, or a comparison with
    something. `if not full:`, `if full is None:`, `if (!name)` check only that a value is
    there, which every value that reaches a sink passes; a condition a false constant joins
    (`if False and not ok(p):`, `if (!ok(p) && 0)`) is never true, whatever it calls."""
    return bool(_CALL.search(condition) or _COMPARED.search(condition)) \
        and not never_true(condition)


# A constant that is false in Python, JavaScript, Go, Java or C.
_FALSE = lazy_re(r"^\(*\s*(?:False|false|None|null|nil|undefined|0|''|\"\"|not\s+True|"
                    r"!\s*true|!\s*1)\s*\)*$")


def never_true(condition: str) -> bool:
    """Whether one of the parts an `and`/`&&` joins at the top of the condition is a false
    constant: the condition is decided before any check in it runs."""
    parts: list[str] = []
    depth = start = 0
    for at, char in enumerate(condition):
        depth += (char in "([{") - (char in ")]}")
        if not depth and (split := _AND.match(condition, at)) and at >= start:
            parts.append(condition[start:at])
            start = split.end()
    parts.append(condition[start:])
    return any(_FALSE.match(part.strip()) for part in parts)
