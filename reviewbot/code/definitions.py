"""Definitions and keys a line of code names: functions, methods, config keys."""

from __future__ import annotations

import re
from collections.abc import Iterable

from reviewbot.code.lexical import is_comment
from reviewbot.lazy_re import lazy_re
from reviewbot.schema.units import DiffLine, ReviewUnit

# Definitions whose signature change sends a reviewer to the callers, per language family.
_DEFINITIONS: tuple[re.Pattern[str], ...] = tuple(re.compile(p) for p in (
    r"^\s*(?:async\s+)?def\s+(?P<name>\w+)\s*\(",
    r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\*?\s+(?P<name>[\w$]+)\s*\(",
    r"^\s*(?:export\s+)?(?:const|let|var)\s+(?P<name>[A-Za-z_$][\w$]*)\s*=\s*"
    r"(?:async\s*)?(?:\([^)]*\)|\w+)\s*=>",
    r"^\s*func\s+(?:\([^)]*\)\s*)?(?P<name>\w+)\s*\(",
    r"^\s*(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?fn\s+(?P<name>\w+)",
    # Java/C#/Kotlin/TS methods: at least one modifier, and no statement end on the line.
    r"^\s*(?:(?:public|private|protected|static|final|abstract|synchronized|override|"
    r"internal|async)\s+)+[\w<>\[\],.? ]*?\b(?P<name>\w+)\s*\([^;]*$",
))
_CONFIG_KEY = lazy_re(
    r"^\s*(?:\"(?P<json>[\w.-]+)\"\s*:|(?P<yaml>[\w.-]+)\s*:(?:\s|$)|"
    r"(?P<assign>[A-Za-z_][\w.-]*)\s*=)",
)


# No definition line is longer (a minified bundle's one line would cost each pattern a scan).
MAX_DEFINITION_CHARS = 1000


def definition_name(text: str) -> str | None:
    """The name a line defines (function, method), if it is a definition line."""
    if len(text) > MAX_DEFINITION_CHARS:
        return None
    for pattern in _DEFINITIONS:
        match = pattern.match(text)
        if match:
            return match.group("name")
    return None


def changed_signatures(unit: ReviewUnit) -> list[str]:
    """Names whose definition line was both removed and re-added differently."""
    removed, added = _removed_and_added(unit)
    return [name for name, text in removed.items() if name in added and added[name] != text]


def removed_definitions(unit: ReviewUnit) -> list[str]:
    """Names whose definition the hunk removes and does not add back: a function deleted,
    or moved to another hunk (where its callers may no longer match it)."""
    removed, added = _removed_and_added(unit)
    return [name for name in removed if name not in added]


def _removed_and_added(unit: ReviewUnit) -> tuple[dict[str, str], dict[str, str]]:
    """The definitions the hunk removes and, when it removes any, those it adds (a new
    file removes nothing: its lines are not searched at all)."""
    if unit.hunk is None:
        return {}, {}
    removed = _definitions(unit.hunk.removed())
    return removed, _definitions(unit.hunk.added()) if removed else {}


def _definitions(lines: Iterable[DiffLine]) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in lines:
        name = definition_name(line.text)
        if name:
            found[name] = " ".join(line.text.split())
    return found


def changed_config_keys(unit: ReviewUnit) -> list[str]:
    if unit.hunk is None:
        return []
    keys: list[str] = []
    for line in unit.hunk.lines:
        if line.kind == "ctx" or is_comment(line.text, unit.language):
            continue
        match = _CONFIG_KEY.match(line.text)
        if match:
            key = match.group("json") or match.group("yaml") or match.group("assign")
            if key and key not in keys and len(key) > 1:
                keys.append(key)
    return keys
