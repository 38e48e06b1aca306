"""The analyzers' own suppressions, held to reviewbot's: `# shellcheck disable=SC2086` (which,
above a script's first command, covers the whole file), `# hadolint ignore=DL3008` (and its
`global` form), `# zizmor: ignore[template-injection]`.

A tool reads the file from stdin, so it would honour every one of them, the change's and the
base's, wherever they are, and what they quieten would never be known. Here a directive
counts only on a line the change adds (the reviewer reads it in the diff), and what it
quietens is recorded like any suppression; a directive the base has covers nothing the change
brings. A directive is made inert by renaming the tool in it (same length, so lines and
columns stay where they were).
"""

from __future__ import annotations

import re
from collections.abc import Collection

_DIRECTIVES: dict[str, re.Pattern[str]] = {
    "shellcheck": re.compile(r"#\s*(?P<tool>shellcheck)\s+[^\n]*?\bdisable="),
    "hadolint": re.compile(r"#\s*(?P<tool>hadolint)\s+(?:global\s+)?ignore="),
    "zizmor": re.compile(r"#\s*(?P<tool>zizmor)\s*:\s*ignore\["),
}
_INERT = "x"


def directive_lines(tool: str, text: str, lines: Collection[int]) -> dict[int, str]:
    """Of `lines` (1-based), those holding one of the tool's suppressions: line -> its
    words (for the record's justification)."""
    pattern = _DIRECTIVES.get(tool)
    if pattern is None or tool not in text:
        return {}
    found: dict[int, str] = {}
    for number, line in enumerate(text.split("\n"), 1):
        if number in lines and (match := pattern.search(line)):
            found[number] = line[match.start():].lstrip("# ").strip()[:200]
    return found


def inert(tool: str, text: str, keep: Collection[int] = ()) -> str:
    """The text with the tool's suppressions made inert on every line but `keep`."""
    pattern = _DIRECTIVES.get(tool)
    if pattern is None or tool not in text:
        return text
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if index + 1 not in keep and pattern.search(line):
            lines[index] = pattern.sub(
                lambda m: m.group(0).replace(m.group("tool"), _INERT + m.group("tool")[1:], 1),
                line)
    return "\n".join(lines)
