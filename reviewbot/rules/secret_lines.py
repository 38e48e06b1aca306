"""Which added lines can hold a secret at all (most lines of code cannot, and skip the
detectors), and which values a line's own words show are not one: a placeholder, an
illustration, a CI service's encrypted value."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from reviewbot.code.whole_text import JoinedTexts, compile_whole_text
from reviewbot.lazy_re import lazy_re
from reviewbot.rules.base import MINIFIED_LINE_CHARS
from reviewbot.rules.quieting import is_prose
from reviewbot.text.redaction import (
    TOKEN_SIGNS,
    bare_values_are_literal,
)

if TYPE_CHECKING:
    pass



# A line can hold a secret some detector here finds only if it has a well-known prefix
# (`ghp_`, `AKIA`, a key block), a quoted string the entropy detectors could report, a run
# of 20+ token characters with letters and digits in it (every known token format), a
# password in a URL, or a secret-like word next to a quote (in code, keyword detectors need
# a quoted value; in config files, where values go unquoted, the word alone will do). Most
# lines of code have none of them and skip the 26 detectors (0.5 ms a line): of 43,734
# lines of pip's modules, 761 are candidates; of rich's 2,613, 17.
#
# The entropy detectors report a quoted string made only of their characters whose Shannon
# entropy passes a limit: base64's 4.5 bits needs 23 different characters at least, hex's
# 3.0 bits 9 (hex strings under 12 characters are not looked at, as before). Every quote
# is tried as a start, since detect-secrets pairs quotes from the left. The signs are
# searched by RE2 in a file's added lines joined (`reviewbot/code/whole_text.py`).
QUOTED = compile_whole_text("|".join(f"{q}[A-Za-z0-9+/=_\\\\-]{{12,}}{q}" for q in "'\""))


HEX = re.compile(rb"[0-9A-Fa-f]+")


BASE64_MIN = 23


_RUN = compile_whole_text(r"[A-Za-z0-9+/=_-]{20,}")


SECRET_WORD = lazy_re(r"key|pass|pwd|secret|token|credential|contrase|auth|private",
                          re.IGNORECASE)


_SECRET_WORDS = compile_whole_text(f"(?i:{SECRET_WORD.pattern})")


def _quoted_starts(text: bytes) -> Iterator[int]:
    """Where a quoted string an entropy detector could report starts: every quote tried (a
    match's closing quote may open the next string)."""
    at = 0
    while (match := QUOTED.search(text, at)) is not None:
        value = match.group(0)[1:-1]
        if len(value) >= BASE64_MIN or HEX.fullmatch(value):
            yield match.start()
        at = match.start() + 1


def _digits_and_letters(run: bytes) -> bool:
    return any(c in b"0123456789" for c in run) and any(chr(c).isalpha() for c in run)


def could_hold(path: str, text: str) -> bool:
    """Whether one line can hold a secret some detector finds (see `candidate_lines`)."""
    return bool(candidate_lines(path, {0: text}))


def candidate_lines(path: str, lines: dict[int, str]) -> list[int]:
    """The numbers of the lines that can hold a secret, in order: a line over
    MINIFIED_LINE_CHARS always (its scan is the well-known formats only), the others when
    one of the signs above is on them. The signs are searched once in the lines joined."""
    short = {n: line for n, line in lines.items() if len(line) <= MINIFIED_LINE_CHARS}
    found = {n for n in lines if n not in short}
    numbers = list(short)
    joined = JoinedTexts.of(list(short.values()))
    text = joined.data

    def line_at(at: int) -> int:
        return numbers[joined.index_at(at)]

    found.update(line_at(m.start()) for m in TOKEN_SIGNS.finditer(text))
    found.update(line_at(at) for at in _quoted_starts(text))
    found.update(line_at(m.start()) for m in _RUN.finditer(text)
                 if _digits_and_letters(m.group(0)))
    literal = bare_values_are_literal(path)
    found.update(number for number in {line_at(m.start()) for m in _SECRET_WORDS.finditer(text)}
                 if literal or any(quote in short[number] for quote in "\"'`"))
    return [n for n in lines if n in found]


# Values that stand for a secret in documentation and examples.
_PLACEHOLDER = lazy_re(
    r"^[<{(\[$%]*((your|my)[ _-]?)?(user(name)?|pass(word|wd)?|pwd|secret|token|(api[ _-]?)?key|"
    r"changeme|example|foo|bar|baz|test|dummy|fake|value|something|x+|\*+|\.+)([ _-]?here)?"
    r"[>})\]%]*$",
    re.IGNORECASE)


# Values encrypted for a CI service (`secure: "..."` in .travis.yml): safe by design.
ENCRYPTED_CI = lazy_re(r"^\s*-?\s*secure\s*:")


# Setting words a key named like a credential often holds (`id-token: write`, a GitHub
# workflow's permission; `password: required`).
_SETTING_WORDS = frozenset({
    "read", "write", "none", "true", "false", "yes", "no", "on", "off", "null", "nil",
    "required", "optional", "enabled", "disabled", "auto", "inherit", "empty", "default"})


def is_placeholder(value: str) -> bool:
    bare = value.strip("\"'")
    return bool(_PLACEHOLDER.match(bare)) or bare.lower() in _SETTING_WORDS


# What a name next to a value says, not the value's shape: the kinds an illustration can
# take. A known token format, a key block, a password in a URL or an entropy match is
# reported whatever it spells.
_NAMED_KINDS = frozenset({"Secret Keyword", "credential in a config file"})


# A value that says what it stands for (`"super-duper-secret"`, `KEEP_IT_SECRET`,
# `my-example-key`): a generated credential spells no such word. Words and separators only:
# a random string with the word in it (`.../bPxRfiCYEXAMPLEKEQ`) is reported.
_SELF_NAMED = lazy_re(r"secret|example|sample|dummy|placeholder|change[_-]?me|replace[_-]?me",
                         re.IGNORECASE)


_WORDY = lazy_re(r"[A-Za-z0-9 ._-]{1,40}")


def is_illustration(path: str, value: str, kind: str) -> bool:
    """On a documentation page (Markdown, reStructuredText), a value found only by the name
    beside it that spells out what it stands for, or is words (`"password": "for encrypted
    privkey file"`). In code or a config file the same value is a credential something runs
    with, and is reported."""
    return kind in _NAMED_KINDS and is_prose(path) and (
        (_SELF_NAMED.search(value) is not None and _WORDY.fullmatch(value) is not None)
        or any(c.isspace() for c in value.strip()))
