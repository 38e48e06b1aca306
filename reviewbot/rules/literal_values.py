"""String values as the program reads them, for the secrets rule: a detector reads one line's
text, and an author who knows it can split a key into adjacent literals (`"AKIA" "..."`,
`'AKIA' +\\n '...'`), wrap a random value the way a template wraps a name (`"${...}"`,
`"<...>"`), which detectors take for a placeholder, spell it in escapes (`"\\x41KIA..."`),
or build it from constants the language puts together before anything runs
(`"".join(["AKIA", "..."])`, `"AKIA%s" % "..."`, `"AKIA{}".format("...")`).

Each shape is turned back into the line a detector would have read had the value been
written plainly: the literals joined into one, the wrapper taken off. The line keeps what is
around the value (`password = `), which the keyword detectors read.
"""

from __future__ import annotations

import codecs
import re
from bisect import bisect_right
from collections.abc import Iterator, Mapping

from reviewbot.code.whole_text import JoinedTexts, compile_whole_text
from reviewbot.lazy_re import lazy_re
from reviewbot.text.redaction import is_wrapped_name

# A string literal on one line, with an optional prefix (`r"..."`, `b'...'`).
_LITERAL = r"""[rRbBuUfF]{0,2}(?:"[^"\n]*"|'[^'\n]*'|`[^`\n]*`)"""
# Literals a language joins into one value: side by side (Python, C, Go's consts through
# `+`), or with `+` (JavaScript, Java, Python), `.` (PHP, Perl), `..` (Lua), `&` (VB) or `||`
# (SQL) between them, on one line or across lines (a `\` continuation, an open parenthesis).
# Each piece of space is matched one way only: no pattern here backtracks over a long run.
_BREAK = r"[ \t]*(?:\\?\n[ \t]*)?"
_SEPARATOR = rf"{_BREAK}(?:(?:\+|\.\.?|&|\|\|){_BREAK})?"
_JOINED = lazy_re(rf"{_LITERAL}(?:{_SEPARATOR}{_LITERAL})+")
_QUOTED = lazy_re(r"""(?P<q>["'`])(?P<value>[$%{<(\[][^"'`\n]*)(?P=q)""")
_PREFIX = lazy_re(r"^[rRbBuUfF]{0,2}")
_WRAPPED_SIGN = compile_whole_text(r"""["'`][$%{<(\[]""")
# Where two literals stand side by side (space, an operator or a line break between them:
# `""`, an empty string, is not two): joins are looked for only from those lines.
_ADJACENT_SIGN = compile_whole_text(
    rf"""["'`](?:[ \t]+|[ \t]*\\?\n|[ \t]*(?:\+|\.\.?|&|\|\|)){_BREAK}[rRbBuUfF]{{0,2}}["'`]""")
# Joins over this many lines are not followed (a table of messages is not a key).
_MAX_JOINED_LINES = 12
# A plain literal, its quote captured, for the shapes below.
_PLAIN = r"""(?:"[^"\\\n]*"|'[^'\\\n]*')"""
# A literal holding an escape that spells a character (`\\x41`, `\\u0041`, `\\101`).
_ESCAPED = lazy_re(r"""(?P<q>["'])(?P<value>(?:[^"'\\\n]|\\.)*?\\(?:x[0-9a-fA-F]{2}|"""
                      r"""u[0-9a-fA-F]{4}|[0-7]{3})(?:[^"'\\\n]|\\.)*)(?P=q)""")
# Constants put together by the language: `"".join([...])`, `"...%s" % "..."`,
# `"...{}".format("...")`.
_CONSTANT_JOIN = lazy_re(rf"""(?P<q>["'])(?P=q)\s*\.join\(\s*[\[(]\s*(?P<parts>{_PLAIN}"""
                            rf"""(?:\s*,\s*{_PLAIN})+)\s*,?\s*[\])]\s*\)""")
_CONSTANT_FORMAT = lazy_re(rf"""(?P<template>{_PLAIN})\s*(?:%\s*\(?\s*(?P<value>{_PLAIN})"""
                              rf"""\s*,?\s*\)?|\.format\(\s*(?P<arg>{_PLAIN})\s*\))""")
_EVALUATED_SIGN = compile_whole_text(
    r"""\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|[0-7]{3})|\.join\(\s*[\[(]\s*["']|"""
    r"""["']\s*%\s*\(?\s*["']|["']\.format\(\s*["']""")


def program_lines(lines: Mapping[int, str]) -> Iterator[tuple[int, str]]:
    """For added lines (number -> text), the lines a detector should read besides them: each
    join of literals as one line (numbered by the line it starts on), and each line whose
    quoted values are wrapped randoms, unwrapped. Lines that hold neither yield nothing.
    Which lines can hold either is found by RE2 in one pass over the lines joined."""
    numbers = sorted(lines)
    joined = JoinedTexts.of([lines[n] for n in numbers])
    adjacent = sorted({joined.index_at(m.start()) for m in _ADJACENT_SIGN.finditer(joined.data)})
    if adjacent:
        yield from _joins(lines, numbers, adjacent)
    for index in sorted({joined.index_at(m.start())
                         for m in _WRAPPED_SIGN.finditer(joined.data)}):
        if unwrapped := _unwrapped(lines[numbers[index]]):
            yield numbers[index], unwrapped
    for index in sorted({joined.index_at(m.start())
                         for m in _EVALUATED_SIGN.finditer(joined.data)}):
        if evaluated := _evaluated(lines[numbers[index]]):
            yield numbers[index], evaluated


def _evaluated(text: str) -> str | None:
    """The line with its escapes decoded and its constant joins and formatting done; None
    when it holds none of them."""
    result = _CONSTANT_JOIN.sub(
        lambda m: '"' + "".join(p[1:-1] for p in re.findall(_PLAIN, m.group("parts"))) + '"',
        text)
    result = _CONSTANT_FORMAT.sub(_formatted, result)
    result = _ESCAPED.sub(_decoded, result)
    return result if result != text else None


def _formatted(match: re.Match[str]) -> str:
    template = match.group("template")[1:-1]
    value = (match.group("value") or match.group("arg"))[1:-1]
    for slot in ("%s", "{}", "{0}"):
        if template.count(slot) == 1:
            return '"' + template.replace(slot, value) + '"'
    return match.group(0)


def _decoded(match: re.Match[str]) -> str:
    try:
        value = codecs.decode(match.group("value"), "unicode_escape")
    except UnicodeError:  # a malformed escape, or a character no escape can stand beside
        return match.group(0)
    # A quote or a line break the escapes spell would end the literal the detector reads; a
    # lone surrogate (`\ud800`) is no character of a credential, and no UTF-8 holds it.
    unfit = any(c in value for c in "\"'\n") or any("\ud800" <= c <= "\udfff" for c in value)
    return match.group(0) if unfit else f'"{value}"'


def _joins(lines: Mapping[int, str], numbers: list[int],
           firsts: list[int]) -> Iterator[tuple[int, str]]:
    """Joined literals, searched from each added line where two stand side by side (`firsts`:
    indexes into `numbers`), over it and the consecutive added lines after it."""
    done = -1
    for first in firsts:
        if first < done:
            continue  # inside a join already read
        last = first
        while last + 1 < len(numbers) and last - first < _MAX_JOINED_LINES \
                and numbers[last + 1] == numbers[last] + 1:
            last += 1
        texts = [lines[n] for n in numbers[first:last + 1]]
        window = "\n".join(texts)
        offsets = [0]
        for text in texts:
            offsets.append(offsets[-1] + len(text) + 1)
        for match in _JOINED.finditer(window):
            start = _line_index(offsets, match.start())
            end = _line_index(offsets, match.end() - 1)
            if start > 0:
                break  # a join starting further down is searched from its own line
            value = "".join(_PREFIX.sub("", piece)[1:-1]
                            for piece in re.findall(_LITERAL, match.group(0)))
            head = window[:match.start()]
            tail = window[match.end():offsets[end + 1] - 1]
            done = max(done, first + end)
            yield numbers[first], f'{head}"{value}"{tail}'


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
