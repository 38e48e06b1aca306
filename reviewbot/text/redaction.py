"""The one redaction pass: every text that leaves the process or is written to disk goes
through `Redactor.text` (prompts, context bundles, artifacts, logs, the terminal, comments).

It finds secrets itself rather than trusting a list of values found elsewhere:
- well-known token formats, whole (`ghp_...`, `github_pat_...`, `sk-proj-...`, `AKIA...`);
- private-key blocks, header to footer (or to the end of the text when the footer is cut);
- credentials in URLs (`https://user:password@host`);
- `KEY=value`, `key: value`, `"key": "value"` for password-, secret-, token- and key-like
  names, quoted or not, in dotenv, ini, YAML, TOML, shell and code;
- and any exact value it is told about (what the secrets rule found on the change).
"""

from __future__ import annotations

import bisect
import json
import re
import threading
from collections.abc import Iterable, Iterator
from functools import lru_cache
from itertools import accumulate
from typing import Any

import msgspec

from reviewbot.code.whole_text import LONG_TEXT as LONG_TEXT
from reviewbot.code.whole_text import JoinedTexts, compile_whole_text, utf8
from reviewbot.lazy_re import lazy_re
from reviewbot.text.private_keys import private_keys

MASK = "[REDACTED]"


class TokenFormat(msgspec.Struct, frozen=True):
    kind: str
    pattern: re.Pattern[str]
    # The public part of the format, safe to show in a preview (e.g. "ghp_").
    prefix: str


def _token(kind: str, pattern: str, prefix: str) -> TokenFormat:
    return TokenFormat(kind, re.compile(pattern), prefix)


# Formats whose shape alone says "credential": a match is an error-level finding.
TOKEN_FORMATS: tuple[TokenFormat, ...] = (
    _token("GitHub fine-grained token", r"\bgithub_pat_[A-Za-z0-9_]{22,255}", "github_pat_"),
    _token("GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b", "gh"),
    _token("OpenAI API key", r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}", "sk-"),
    _token("OpenAI API key", r"\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b", "sk-"),
    _token("Anthropic API key", r"\bsk-ant-[A-Za-z0-9_-]{20,}", "sk-ant-"),
    _token("AWS access key ID", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b", "AKIA"),
    _token("Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b", "AIza"),
    _token("GitLab token", r"\bglpat-[0-9A-Za-z_-]{20,}", "glpat-"),
    _token("Slack token", r"\bxox[abposr]-[0-9A-Za-z-]{10,}", "xox"),
    _token("Stripe key", r"\b[rs]k_live_[0-9A-Za-z]{16,}\b", "sk_live_"),
    _token("npm token", r"\bnpm_[A-Za-z0-9]{36}\b", "npm_"),
    _token("PyPI token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}", "pypi-"),
    _token("Hugging Face token", r"\bhf_[A-Za-z0-9]{34,}\b", "hf_"),
    _token("JSON Web Token", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
           "eyJ"),
)

URL_CREDENTIALS = lazy_re(r"(?P<head>\b[a-z][a-z0-9+.-]*://[^:/@\s]+:)(?P<value>[^@/\s]{3,})@",
                             re.IGNORECASE)

_NAME = (r"[A-Za-z0-9_.-]*(?:passw(?:or)?d|passwd|pwd|secret|token|api[_-]?key|apikey|"
         r"access[_-]?key|private[_-]?key|client[_-]?secret|credentials?|auth[_-]?key|"
         r"signing[_-]?key|encryption[_-]?key)[A-Za-z0-9_.-]*")
# `name = "value"`, `name: 'value'`, `"name": "value"`, `name => "value"`.
QUOTED_ASSIGNMENT = lazy_re(
    rf"""(?P<head>["']?\b{_NAME}["']?\s*(?:=|:|=>|:=)\s*(?P<q>["'`]))"""
    # No space at either end: "`DB_PASSWORD=` in `.env`" in Markdown quotes " in ", prose.
    rf"""(?P<value>[^"'`\s][^"'`\n]{{2,}}[^"'`\s])(?P=q)""",
    re.IGNORECASE)
# `NAME=value`, `name: value` with the value unquoted: a literal in dotenv, ini, YAML and
# shell; in code it is usually a reference (`token = self.token`), which is left alone.
BARE_ASSIGNMENT = lazy_re(
    rf"""(?P<head>(?:^|[\s;])(?:export\s+)?{_NAME}\s*(?:=|:)[ \t]*)(?P<value>[^\s"'`#;,]{{4,}})""",
    re.IGNORECASE | re.MULTILINE)
_NOT_A_VALUE = lazy_re(r"^(?:true|false|null|none|yes|no|on|off)$|^[A-Za-z_]"
                          r"[\w]*(?:\.[A-Za-z_]\w*)+$|[()\[\]{}]|^\*+$|REDACTED",
                          re.IGNORECASE)
# What opens a template's or a shell's reference: `${NAME}`, `$NAME`, `{{ name }}`, `<name>`,
# `%(name)s`, `[name]`.
_OPENERS = "$%{<(["
_WRAPPER_EDGES = lazy_re(r"^[$%{<(\[=\s]+|[}>)\]%\s]+s?$|\)s$")
_PIECES = lazy_re(r"[A-Za-z0-9]+")
# A piece of a name in camel case: `Key`, `XML`, `http`.
_CAMEL = lazy_re(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def is_wrapped_name(value: str) -> bool:
    """Whether a value is a reference wrapped as a template or a shell writes one (`${NAME}`,
    `<your-api-key>`, `{{ secrets.TOKEN }}`): what stands inside reads as a name. A random
    value wrapped the same way (`${Zx8kQ2mPv9LrT4wN}`) is a secret, whatever wraps it."""
    if not value or value[0] not in _OPENERS:
        return False
    inner = _WRAPPER_EDGES.sub("", value)
    pieces = _PIECES.findall(inner)
    return bool(pieces) and not any(_random(piece) for piece in pieces)


def _random(piece: str) -> bool:
    """A run of letters and digits no name has: digits among letters (`Zx8kQ2m`), or letters
    whose case changes every character or two (`ZxkQmPvLrTwN`)."""
    if len(piece) < 8:
        return False
    letters = piece.rstrip("0123456789")
    if any(c.isdigit() for c in letters) and any(c.isalpha() for c in letters):
        return True
    parts = _CAMEL.findall(letters)
    return len(letters) >= 12 and len(parts) > 1 and len(letters) / len(parts) < 3


def is_reference(value: str) -> bool:
    """A value that names where the secret is rather than being it: a wrapped name, an
    attribute path (`settings.token`), a call, a setting word, a mask."""
    if value and value[0] in _OPENERS:
        return is_wrapped_name(value)
    return _NOT_A_VALUE.search(value) is not None
_LITERAL_LANGUAGES = frozenset({"ini", "yaml", "toml", "shell", "dockerfile", "text", "make",
                                "dotenv", "properties"})


def bare_values_are_literal(path_or_language: str) -> bool:
    """Whether `key=value` with an unquoted value is a literal there (dotenv, ini, YAML, and
    plain text or notes, where nothing could be a reference)."""
    name = path_or_language.lower().rsplit("/", 1)[-1]
    return (name in _LITERAL_LANGUAGES or name.startswith(".env") or name.endswith(
        (".env", ".ini", ".cfg", ".conf", ".properties", ".yaml", ".yml", ".toml", ".sh",
         ".txt", ".md", ".rst", ".log")))


class Found(msgspec.Struct, frozen=True):
    start: int
    end: int
    kind: str


# Anything the patterns above could match holds one of these prefixes or words: text
# without them (most lines of code) is left alone after a search and a few substring tests
# (3 us a line, against 11 us for one case-insensitive pattern of all of them).
_PREFIXES = lazy_re(
    r"github_pat_|gh[pousr]_|sk-|AKIA|ASIA|ABIA|ACCA|AIza|glpat-|xox|[rs]k_live_|npm_|pypi-|"
    r"hf_|eyJ|PRIVATE KEY|PuTTY-User-Key-File|://[^/\s:@]+:[^@/\s]+@")
_WORDS = ("passw", "pwd", "secret", "token", "apikey", "api_key", "api-key", "accesskey",
          "access_key", "access-key", "privatekey", "private_key", "private-key",
          "credential", "authkey", "auth_key", "auth-key", "signing", "encryption")


# The same prefixes as plain strings: on long text (a 5 MB minified line) RE2 finds each
# start in one pass, where the alternation above takes 40 ms or more.
_LITERAL_PREFIXES = ("github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "sk-", "AKIA",
                     "ASIA", "ABIA", "ACCA", "AIza", "glpat-", "xox", "rk_live_", "sk_live_",
                     "npm_", "pypi-", "hf_", "eyJ", "PRIVATE KEY",
                     "PuTTY-User-Key-File")
_URL_CREDENTIALS = lazy_re(r"://[^/\s:@]+:[^@/\s]+@")
# Whether long text has a prefix or a word at all: one pass of RE2 (its `\s` is ASCII, so
# it says yes to a little more than the patterns above, never less).
TOKEN_SIGNS = compile_whole_text(_PREFIXES.pattern)
_LITERALS = compile_whole_text("|".join(re.escape(literal) for literal in _LITERAL_PREFIXES))
_SECRET_SIGNS = compile_whole_text(
    f"{_PREFIXES.pattern}|(?i:{'|'.join(re.escape(word) for word in _WORDS)})")


def has_token_prefix(text: str) -> bool:
    """A well-known token prefix, a private-key header, or a password in a URL."""
    if len(text) >= LONG_TEXT:
        return TOKEN_SIGNS.search(utf8(text)) is not None
    return _PREFIXES.search(text) is not None


def _prefix_starts(text: str) -> Iterator[int]:
    """Where a prefix of _PREFIXES starts in the text (unordered; every start, overlapping
    ones too: `AKIASIA` has two)."""
    encoded = utf8(text)
    offsets: list[int] = []
    while (match := _LITERALS.search(encoded, offsets[-1] + 1 if offsets else 0)) is not None:
        offsets.append(match.start())
    yield from offsets if len(encoded) == len(text) else _characters(encoded, offsets)
    at = text.find("://")
    while at != -1:
        if _URL_CREDENTIALS.match(text, at):
            yield at
        at = text.find("://", at + 1)


_ANY_WORD = lazy_re("|".join(re.escape(word) for word in _WORDS))


def could_hold_secret(text: str) -> bool:
    if len(text) >= LONG_TEXT:
        return _could_hold_long(text)
    return has_token_prefix(text) or _ANY_WORD.search(text.lower()) is not None


@lru_cache(maxsize=8)
def _could_hold_long(text: str) -> bool:
    return _SECRET_SIGNS.search(utf8(text)) is not None


def token_matches(text: str) -> list[tuple[re.Match[str], TokenFormat]]:
    """Every well-known token in the text. On long text the formats are tried only where one
    of their prefixes occurs: fourteen scans of a 5 MB minified line took a second."""
    if len(text) < LONG_TEXT:
        return [(m, token) for token in TOKEN_FORMATS for m in token.pattern.finditer(text)]
    return list(_long_token_matches(text))


@lru_cache(maxsize=8)
def _long_token_matches(text: str) -> tuple[tuple[re.Match[str], TokenFormat], ...]:
    """Remembered: the rules, the artifacts and the report each look at the same long line
    (a minified bundle), and its scan is the cost of a whole small change."""
    found: list[tuple[re.Match[str], TokenFormat]] = []
    end = -1
    for at in sorted(set(_prefix_starts(text))):
        start = max(at - 1, end)
        for token in TOKEN_FORMATS:
            match = token.pattern.match(text, start) or token.pattern.match(text, at)
            if match and match.start() >= end:
                found.append((match, token))
                end = match.end()
                break
    return tuple(found)


def find_secrets(text: str, literal_bare_values: bool = True) -> list[Found]:
    """Every secret-shaped span in the text, by the rules above (overlaps allowed). Linear
    in the text: long text (a minified line) is searched only where a credential's word or
    `://` is, since the patterns' leading name runs would otherwise be tried from every
    position of every long identifier (1.5 s on a real 4.5 MB bundle)."""
    if len(text) >= LONG_TEXT:
        return list(_long_secrets(text, literal_bare_values))
    return _secrets(text, literal_bare_values)


@lru_cache(maxsize=8)
def _long_secrets(text: str, literal_bare_values: bool) -> tuple[Found, ...]:
    """Remembered: the rules, the artifacts and the report each look at the same long line
    (a minified bundle)."""
    return tuple(_secrets(text, literal_bare_values))


def _secrets(text: str, literal_bare_values: bool) -> list[Found]:
    if not could_hold_secret(text):
        return []
    found = [Found(m.start(), m.end(), token.kind) for m, token in token_matches(text)]
    found += [Found(m.start(), m.end(), "private key") for m in private_keys(text)]
    if len(text) >= LONG_TEXT:
        return found + _anchored(text, literal_bare_values)
    found += [Found(m.start("value"), m.end("value"), "password in a URL")
              for m in URL_CREDENTIALS.finditer(text)]
    for match in QUOTED_ASSIGNMENT.finditer(text):
        if not is_reference(match.group("value")):
            found.append(Found(match.start("value"), match.end("value"), "credential"))
    if literal_bare_values:
        for match in BARE_ASSIGNMENT.finditer(text):
            if not is_reference(match.group("value")):
                found.append(Found(match.start("value"), match.end("value"), "credential"))
    return found


# The same findings on long text, each tried once where it can start: from the credential
# word back to the start of its name, and from `://` back to the start of its scheme.
_NAME_WORD = lazy_re(
    r"passw(?:or)?d|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|"
    r"private[_-]?key|client[_-]?secret|credentials?|auth[_-]?key|signing[_-]?key|"
    r"encryption[_-]?key")
# Where a word of _NAME_WORD starts, found by RE2 in one pass over the text as it is (an
# alternation searched case-insensitively by `re` took 0.5 s on a 4.5 MB line).
_NAME_WORDS = compile_whole_text(f"(?i:{_NAME_WORD.pattern})")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_MAX_NAME = 128


def _anchored(text: str, literal_bare_values: bool) -> list[Found]:
    found: list[Found] = []
    starts: set[int] = set()
    for word in _word_starts(text):
        start = _run_start(text, word, _NAME_CHARS)
        if start in starts:
            continue  # another word of the same name
        starts.add(start)
        head = start - 1 if start and text[start - 1] in "\"'" else start
        for pattern, bare in ((QUOTED_ASSIGNMENT, False), (BARE_ASSIGNMENT, True)):
            if bare and not literal_bare_values:
                continue
            at = head - 1 if bare and head else head  # BARE wants the space before it
            match = pattern.match(text, at) or (pattern.match(text, head) if bare else None)
            if match and not is_reference(match.group("value")):
                found.append(Found(match.start("value"), match.end("value"), "credential"))
    at = text.find("://")
    while at != -1:
        start = _run_start(text, at, _SCHEME_CHARS)
        match = URL_CREDENTIALS.match(text, start)
        if match:
            found.append(Found(match.start("value"), match.end("value"), "password in a URL"))
        at = text.find("://", at + 1)
    return found


def _word_starts(text: str) -> list[int]:
    """Where the credential words start, in characters (one encoding of the text; the
    offsets RE2 gives are UTF-8 bytes)."""
    encoded = utf8(text)
    starts = [match.start() for match in _NAME_WORDS.finditer(encoded)]
    if len(encoded) == len(text):
        return starts
    return _characters(encoded, starts)


def _characters(encoded: bytes, offsets: list[int]) -> list[int]:
    """UTF-8 byte offsets (ascending, each at a character's start) as character offsets."""
    found, chars, last = [], 0, 0
    for offset in offsets:
        chars += len(encoded[last:offset].decode("utf-8", "surrogatepass"))
        found.append(chars)
        last = offset
    return found


def _run_start(text: str, end: int, chars: frozenset[str]) -> int:
    """Where the run of `chars` ending at `end` starts (at most _MAX_NAME back)."""
    start = end
    while start > 0 and end - start < _MAX_NAME and text[start - 1] in chars:
        start -= 1
    return start


def known_token(value: str) -> TokenFormat | None:
    """The well-known format a whole value has, if any."""
    return next((t for t in TOKEN_FORMATS if t.pattern.fullmatch(value)), None)


def preview(value: str) -> str:
    """What a finding may show of a secret: only a public, well-known prefix."""
    token = next((t for t in TOKEN_FORMATS if t.pattern.search(value)), None)
    shown = token.prefix if token and value.startswith(token.prefix) else ""
    return f"{shown}{'*' * 8}"


# Up to this many known values, long text has each looked for in turn (Redactor.text).
_REPLACED_ALONE = 16


def _occurrences(text: str, value: str) -> Iterator[int]:
    at = text.find(value)
    while at != -1:
        yield at
        at = text.find(value, at + 1)


class Redactor:
    """Masks secrets in text. `extra` are exact values known to be secret (kept in memory
    only); the run adds the ones its rules find as it goes."""

    def __init__(self, extra: Iterable[str] = ()) -> None:
        self._lock = threading.Lock()
        self._extra: tuple[str, ...] = ()
        self._extra_pattern: re.Pattern[str] | None = None
        self.add(extra)

    def add(self, extra: Iterable[str]) -> None:
        with self._lock:
            values = set(self._extra) | {v for v in extra if len(v) >= 4}
            self._extra = tuple(sorted(values, key=len, reverse=True))
            self._extra_pattern = (re.compile("|".join(re.escape(v) for v in self._extra))
                                   if self._extra else None)

    def with_values(self, extra: Iterable[str]) -> Redactor:
        return Redactor((*self._extra, *extra))

    def text(self, text: str, literal_bare_values: bool = True) -> str:
        """The text with every secret replaced by [REDACTED]."""
        if not text:
            return text
        with self._lock:
            pattern, extra = self._extra_pattern, self._extra
        known: list[Found] = []
        if pattern is not None and len(text) >= LONG_TEXT and len(extra) <= _REPLACED_ALONE:
            # Each known value found by a plain search, where the alternation is tried at
            # every place of a minified line's megabytes (16 ms for two values on 4.5 MB),
            # and masked with what the patterns find in the text as it is: the text is not
            # rewritten first, so what was found in it before is remembered (the rules
            # looked at this very line), not searched for again.
            known = [Found(at, at + len(value), "known value") for value in extra
                     for at in _occurrences(text, value)]
        elif pattern is not None:
            text = pattern.sub(MASK, text)
        spans = _merged(find_secrets(text, literal_bare_values) + known)
        if not spans:
            return text
        # One copy of the text, not one a secret (a minified line is megabytes).
        pieces, last = [], 0
        for start, end in spans:
            pieces += [text[last:start], MASK]
            last = end
        return "".join([*pieces, text[last:]])

    def texts(self, texts: list[str]) -> list[str]:
        """`text` of each. The short ones are searched as one: a text without a known value
        and without a prefix or word of a secret (`could_hold_secret`) is left as it is."""
        short = [index for index, text in enumerate(texts) if len(text) < LONG_TEXT]
        marked = {short[at] for at in self._could_change([texts[index] for index in short])}
        return [self.text(text) if index in marked or len(text) >= LONG_TEXT else text
                for index, text in enumerate(texts)]

    def _could_change(self, texts: list[str]) -> set[int]:
        """Which of the texts hold a known value or a secret's sign, in one search each."""
        with self._lock:
            pattern = self._extra_pattern
        found: set[int] = set()
        if pattern is not None:
            # Every text a match touches: a known value with a newline in it spans two.
            starts = list(accumulate((len(text) + 1 for text in texts), initial=0))
            for match in pattern.finditer("\n".join(texts)):
                first = bisect.bisect_right(starts, match.start()) - 1
                found.update(range(first, bisect.bisect_right(starts, match.end() - 1)))
        signs = JoinedTexts.of(texts)  # no sign spans a newline
        found |= {signs.index_at(m.start()) for m in _SECRET_SIGNS.finditer(signs.data)}
        return found

    def for_path(self, text: str, path: str) -> str:
        return self.text(text, bare_values_are_literal(path))

    def could_change_json(self, serialized: str) -> bool:
        """Whether any string inside this JSON text could be redacted. JSON's escapes never
        split a prefix or a word the prefilter looks for (they touch only quotes,
        backslashes and control characters), so a False here is safe for every string in it:
        a whole artifact element is checked at once instead of string by string."""
        with self._lock:
            extra = self._extra
        # A record's JSON is read once: searched here without being remembered (the caches
        # of long text are for lines, which several readers look at).
        signs = (_SECRET_SIGNS.search(serialized.encode("utf-8", "surrogatepass")) is not None
                 if len(serialized) >= LONG_TEXT else could_hold_secret(serialized))
        return signs or any(json.dumps(value, ensure_ascii=False)[1:-1] in serialized
                            for value in extra)


def _merged(found: list[Found]) -> list[tuple[int, int]]:
    spans = sorted((f.start, f.end) for f in found)
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def redact_strings(data: Any, redactor: Redactor) -> Any:
    """Every string in a JSON structure through the redaction pass (all of them at once:
    most lines of a hunk have nothing to look at, and one search over them all says which)."""
    redacted = redacted_strings(data, redactor)
    return data if redacted is None else redacted


def redacted_strings(data: Any, redactor: Redactor) -> Any | None:
    """`redact_strings`, or None when the pass changed no string."""
    found: list[str] = []
    _strings(data, found)
    redacted = redactor.texts(found)
    if all(new is old for new, old in zip(redacted, found, strict=True)):
        return None
    return _rebuilt(data, iter(redacted))


def _strings(data: Any, found: list[str]) -> None:
    if isinstance(data, str):
        found.append(data)
    elif isinstance(data, list | tuple):
        for item in data:
            _strings(item, found)
    elif isinstance(data, dict):
        for value in data.values():
            _strings(value, found)


def _rebuilt(data: Any, redacted: Iterator[str]) -> Any:
    """The structure with its strings taken, in order, from `redacted`."""
    if isinstance(data, str):
        return next(redacted)
    if isinstance(data, list | tuple):
        return [_rebuilt(item, redacted) for item in data]
    if isinstance(data, dict):
        return {key: _rebuilt(value, redacted) for key, value in data.items()}
    return data
