"""String values as the program reads them, for the secrets rule: a detector reads one line's
text, and an author who knows it can split a key into adjacent literals (`"AKIA" "..."`,
`'AKIA' +\\n '...'`), or wrap a random value the way a template wraps a name (`"${...}"`,
`"<...>"`), which detectors take for a placeholder.

Each shape is turned back into the line a detector would have read had the value been
written plainly: the literals joined into one, the wrapper taken off. The line keeps what is
around the value (`password = `), which the keyword detectors read.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Mapping

from reviewbot.run.redaction import is_wrapped_name

# A string literal on one line, with an optional prefix (`r"..."`, `b'...'`).
_LITERAL = r"""[rRbBuUfF]{0,2}(?:"[^"\n]*"|'[^'\n]*'|`[^`\n]*`)"""
# Literals a language joins into one value: side by side (Python, C, Go's consts through
# `+`), or with `+` (JavaScript, Java, Python), `.` (PHP, Perl), `..` (Lua), `&` (VB) or `||`
# (SQL) between them, on one line or across lines (a `\` continuation, an open parenthesis).
# Each piece of space is matched one way only: no pattern here backtracks over a long run.
_BREAK = r"[ \t]*(?:\\?\n[ \t]*)?"
_SEPARATOR = rf"{_BREAK}(?:(?:\+|\.\.?|&|\|\|){_BREAK})?"
_JOINED = re.compile(rf"{_LITERAL}(?:{_SEPARATOR}{_LITERAL})+")
_QUOTED = re.compile(r"""(?P<q>["'`])(?P<value>[$%{<(\[][^"'`\n]*)(?P=q)""")
_PREFIX = re.compile(r"^[rRbBuUfF]{0,2}")
_WRAPPED_START = re.compile(r"""["'`][$%{<(\[]""")
# Where two literals stand side by side (space, an operator or a line break between them:
# `""`, an empty string, is not two): joins are looked for only from those lines.
_ADJACENT = re.compile(rf"""["'`](?:[ \t]+|[ \t]*\\?\n|[ \t]*(?:\+|\.\.?|&|\|\|))"""
                       rf"""{_BREAK}[rRbBuUfF]{{0,2}}["'`]""")
# Joins over this many lines are not followed (a table of messages is not a key).
_MAX_JOINED_LINES = 12


def program_lines(lines: Mapping[int, str]) -> Iterator[tuple[int, str]]:
    """For added lines (number -> text), the lines a detector should read besides them: each
    join of literals as one line (numbered by the line it starts on), and each line whose
    quoted values are wrapped randoms, unwrapped. Lines that hold neither yield nothing."""
    numbers = sorted(lines)
    yield from _joins(lines, numbers)
    # Only a line with a quote right before an opener can hold a wrapped value: one search
    # over the lines joined finds them.
    joined = "\n".join(lines[n] for n in numbers)
    starts = [0]
    for n in numbers:
        starts.append(starts[-1] + len(lines[n]) + 1)
    wrapped = sorted({numbers[bisect_right(starts, match.start()) - 1]
                      for match in _WRAPPED_START.finditer(joined)})
    for number in wrapped:
        if unwrapped := _unwrapped(lines[number]):
            yield number, unwrapped


def _joins(lines: Mapping[int, str], numbers: list[int]) -> Iterator[tuple[int, str]]:
    """Joined literals, searched from each added line where two stand side by side, over it
    and the consecutive added lines after it."""
    text = "\n".join(lines[n] for n in numbers)
    offsets = [0]
    for n in numbers:
        offsets.append(offsets[-1] + len(lines[n]) + 1)
    firsts = sorted({_line_index(offsets, match.start())
                     for match in _ADJACENT.finditer(text)})
    done = -1
    for first in firsts:
        if first < done:
            continue  # inside a join already read
        last = first
        while last + 1 < len(numbers) and last - first < _MAX_JOINED_LINES \
                and numbers[last + 1] == numbers[last] + 1:
            last += 1
        window = text[offsets[first]:offsets[last + 1] - 1]
        for match in _JOINED.finditer(window):
            start = _line_index(offsets, offsets[first] + match.start())
            end = _line_index(offsets, offsets[first] + match.end() - 1)
            if start > first:
                break  # a join starting further down is searched from its own line
            value = "".join(_PREFIX.sub("", piece)[1:-1]
                            for piece in re.findall(_LITERAL, match.group(0)))
            head = text[offsets[start]:offsets[first] + match.start()]
            tail = text[offsets[first] + match.end():offsets[end + 1] - 1]
            done = max(done, end)
            yield numbers[start], f'{head}"{value}"{tail}'


def _line_index(offsets: list[int], at: int) -> int:
    return bisect_right(offsets, at) - 1


def _unwrapped(text: str) -> str | None:
    """The line with each quoted value that is wrapped like a reference but holds no name
    (`"${Zx8kQ2mPv9LrT4wN}"`) written plainly; None when there is none."""
    changed = False

    def plain(match: re.Match[str]) -> str:
        nonlocal changed
        value = match.group("value")
        if is_wrapped_name(value):
            return match.group(0)
        inner = re.sub(r"^[$%{<(\[=\s]+|[}>)\]%\s]+s?$", "", value)
        if not inner:
            return match.group(0)
        changed = True
        return f"{match.group('q')}{inner}{match.group('q')}"

    result = _QUOTED.sub(plain, text)
    return result if changed else None
