"""Hard-coded secrets on added lines: detect-secrets' detectors and filters, plus the
well-known token formats and `KEY=value` credentials of `reviewbot.text.redaction`.

The plugins are called directly rather than through `scan_line`: its per-call filter
injection costs ~1 ms a line, the detectors themselves ~0.1 ms (measured on 500 lines).
Findings carry the secret's type and at most a public prefix, never the secret.
"""

from __future__ import annotations

import math
import re
import sys
import types
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import msgspec

from reviewbot.code.comments import line_comments
from reviewbot.code.languages import detect_language
from reviewbot.code.long_lines import long_line_code
from reviewbot.code.whole_text import JoinedTexts, compile_whole_text
from reviewbot.levels import Severity
from reviewbot.rules.base import MINIFIED_LINE_CHARS, FileChange, Hit, Quiet, RuleBase, RuleInfo
from reviewbot.rules.literal_values import program_lines
from reviewbot.rules.quieting import is_prose
from reviewbot.rules.suppressions import directive
from reviewbot.schema.findings import Finding, QuietKind
from reviewbot.schema.records import Tag
from reviewbot.schema.units import HistoryLine, ReviewUnit
from reviewbot.text.redaction import (
    KEY_ARMOUR,
    TOKEN_SIGNS,
    bare_values_are_literal,
    find_secrets,
    is_wrapped_name,
    key_follows,
    known_token,
    preview,
    token_matches,
)

if TYPE_CHECKING:
    from detect_secrets.plugins.base import BasePlugin

# Detectors that match a shape rather than a known token format: they cannot tell a
# checksum or fixture from a credential, so they report info (entropy) or warning.
_ENTROPY = frozenset({"Base64HighEntropyString", "HexHighEntropyString"})
_KEYWORD = frozenset({"KeywordDetector"})
# Not secrets: a public IP address is not a credential.
_SKIPPED = frozenset({"IPPublicDetector"})
# One level lower there: what a keyword or entropy detector finds (it cannot tell a fixture
# or an illustration from a credential) in test code and documentation; a known token format
# in documentation only. A known format in test code is a key like any other: tests are
# pushed, cloned and published with the rest, and a real key there is leaked all the same.
QUIET_TAGS = frozenset({"test_file", "docs"})
# What test code may hold at one level lower: what a detector cannot tell from a fixture, and
# what a test makes of its own (the key pairs of TLS and signing tests, a JWT it signs).
_QUIET_IN_TESTS = frozenset({"Secret Keyword", "Base64 High Entropy String",
                             "Hex High Entropy String", "Private Key", "JSON Web Token"})
# Values published as examples in a service's own documentation, exactly: they are nobody's
# credential, and pasting one is how a tutorial is followed. A value that merely contains
# EXAMPLE (`AKIAZOSFODNN7EXAMPLE`) is not one of them.
DOCUMENTED_EXAMPLES = frozenset({
    # AWS ("Managing access keys", the SigV4 and S3 examples).
    "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "AKIAI44QH8DHBEXAMPLE", "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    # Stripe's documented test-mode key ("API keys").
    "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
})
# One level quieter (in tests and documentation): a bare high-entropy string is then nothing.
_QUIETER: dict[Severity, Severity | None] = {"error": "warning", "warning": "info",
                                             "info": None}


@cache
def _plugins() -> tuple[BasePlugin, ...]:
    with _without_requests():
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.filters import heuristic  # noqa: F401 (imported here, stub-side)

        classes: Iterable[type[BasePlugin]] = get_mapping_from_secret_type_to_class().values()
    return tuple(cls() for cls in classes if cls.__name__ not in _SKIPPED)


@cache
def _gates() -> tuple[tuple[re.Pattern[str], ...] | None, ...]:
    """For each plugin that reports only what its own patterns (`denylist`) match on a line,
    those patterns, to search a file's candidate lines joined; None for the others (the
    entropy and keyword detectors, JWT), which always look, and for patterns anchored to a
    line's start or end (`^`, `$`), which the lines joined would not match the same way."""
    plugins = _plugins()  # first: it loads detect-secrets without `requests`
    from detect_secrets.plugins.base import RegexBasedDetector

    gates: list[tuple[re.Pattern[str], ...] | None] = []
    for plugin in plugins:
        patterns = (tuple(plugin.denylist) if isinstance(plugin, RegexBasedDetector)
                    and type(plugin).analyze_string is RegexBasedDetector.analyze_string
                    else ())
        anchored = any(anchor in p.pattern for p in patterns for anchor in "^$")
        gates.append(patterns if patterns and not anchored else None)
    return tuple(gates)


def _plugins_for(lines: str) -> frozenset[int]:
    """The plugins that can report anything on these lines (joined): a plugin none of whose
    patterns matches any of them is not called line by line (26 calls a candidate line were
    most of the rule's time; a match on one line is a match in the lines joined). No lines,
    no plugins: detect-secrets is not even loaded."""
    if not lines:
        return frozenset()
    return frozenset(index for index, gate in enumerate(_gates())
                     if gate is None or any(pattern.search(lines) for pattern in gate))


@cache
def _keyword_words() -> re.Pattern[str]:
    """The words every pattern of detect-secrets' keyword detector starts with (its
    `DENYLIST`): a line without one is not given to it (the costliest detector a line)."""
    _plugins()  # loads detect-secrets without `requests`
    from detect_secrets.plugins.keyword import DENYLIST

    return re.compile("|".join(DENYLIST), re.IGNORECASE)


def load_detectors() -> None:
    """Load detect-secrets' plugins now: before a run forks its workers, so that each does
    not load its own (~25 ms)."""
    _plugins()


@contextmanager
def _without_requests() -> Iterator[None]:
    """detect-secrets imports `requests` (~0.1 s, a third of the hook's rule time) only to
    verify secrets against their services, which reviewbot never does: it never sends a
    secret anywhere. While its modules load, `requests` is a placeholder; it is removed from
    sys.modules afterwards, so anything else that imports `requests` gets the real one."""
    if "requests" in sys.modules:
        yield
        return
    placeholder = types.ModuleType("requests")
    placeholder.__getattr__ = _never_used  # type: ignore[method-assign]
    sys.modules["requests"] = placeholder
    try:
        yield
    finally:
        if sys.modules.get("requests") is placeholder:
            del sys.modules["requests"]


def _never_used(name: str) -> type:
    """Stands in for `requests.Response` and the like in detect-secrets' annotations."""
    return type(name, (Exception,), {})


def _filtered_out(secret: str, line: str, plugin: BasePlugin) -> bool:
    """detect-secrets' own false-positive heuristics, as its default scan applies them."""
    from detect_secrets.filters import heuristic as h

    return (h.is_sequential_string(secret) or h.is_potential_uuid(secret)
            or h.is_likely_id_string(secret, line, plugin) or _wrapped(secret)
            or h.is_indirect_reference(line)
            or h.is_not_alphanumeric_string(secret))


def _wrapped(secret: str) -> bool:
    """detect-secrets takes any `{...}`, `<...>`, `${...}` or `$...` for a template; only a
    name wrapped so is one (`${Zx8kQ2mPv9LrT4wN}` is a secret in braces)."""
    return secret[:1] in "{<$" and (is_wrapped_name(secret) or len(secret) < 2)


def redact(secret: str) -> str:
    """A preview that identifies a secret without disclosing any of it: a well-known public
    prefix (`ghp_`, `AKIA`) at most."""
    return preview(secret)


class SecretsRule(RuleBase, frozen=True):
    def check(self, change: FileChange) -> Iterator[Hit]:
        # Documentation's kind wins where a file has both: it quietens every type.
        tag: Tag | None = ("docs" if "docs" in change.tags
                           else "test_file" if "test_file" in change.tags else None)
        quiet = (Quiet("docs" if tag == "docs" else "test_code", change.kind.decided(tag))
                 if tag is not None else None)
        added = change.added_by_line
        candidates = candidate_lines(change.path, added)
        plugins = _plugins_for("\n".join(added[n] for n in candidates
                                         if len(added[n]) <= MINIFIED_LINE_CHARS))
        reported: set[int] = set()
        for number in candidates:
            text = added[number]
            # A line padded past the limit by a comment is read as the line it really is.
            read = long_line_code(text, change.language) if len(text) > MINIFIED_LINE_CHARS \
                else text
            stripped = len(read) <= MINIFIED_LINE_CHARS and read is not text
            left_out: LeftOut = {}
            found = scan_line(change.path, read, candidate=not stripped,
                              plugins=None if stripped else plugins, left_out=left_out)
            for value, (level, kind) in [*found.items(), *_levels(left_out)]:
                if kind == "Private Key" and not _key_body_follows(change, number, text):
                    continue  # the armour alone (a constant, a comment): no key is here
                if value not in left_out:
                    reported.add(number)
                yield self._hit(number, level, kind, value,
                                Quiet(left_out[value][2], "change") if value in left_out
                                else quieter(quiet, level, kind))
        # The same value split into literals, or wrapped like a template's reference: the
        # line as the program reads it (rules/literal_values.py).
        short = {n: text for n, text in added.items() if len(text) <= MINIFIED_LINE_CHARS}
        for number, text in program_lines(short):
            if number in reported:
                continue
            for value, (level, kind) in scan_line(change.path, text).items():
                if kind != "Private Key":
                    reported.add(number)
                    yield self._hit(number, level, kind, value, quieter(quiet, level, kind))
                    break

    def _hit(self, number: int, level: Severity, kind: str, value: str,
             quiet: Quiet | None) -> Hit:
        return Hit(
            rule_id=self.id, line=number, severity=level, title=f"Hard-coded secret: {kind}",
            message=(f"Line {number} contains what looks like a secret: {kind} "
                     f"({redact(value)}). Committed secrets stay in git history."),
            suggestion=("Load it from the environment or a secret manager, and revoke the "
                        "value if it was ever pushed."),
            quiet=quiet,
        )


# Values a line's own words leave out, as they would have been reported, and why: a
# placeholder or an illustration, a CI service's encrypted value.
LeftOut = dict[str, tuple[Severity, str, QuietKind]]


def _levels(left_out: LeftOut) -> list[tuple[str, tuple[Severity, str]]]:
    return [(value, (level, kind)) for value, (level, kind, _) in left_out.items()]


def quieter(quiet: Quiet | None, level: Severity, kind: str) -> Quiet | None:
    """A file's test or documentation kind, applied to a secret of this level and type: one
    level quieter (None: the file has no such kind, or it is test code and the secret a
    service's token format, reported there as anywhere)."""
    if quiet is None or (quiet.kind == "test_code" and kind not in _QUIET_IN_TESTS):
        return None
    return msgspec.structs.replace(quiet, given=_QUIETER[level])


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
_QUOTED = compile_whole_text("|".join(f"{q}[A-Za-z0-9+/=_\\\\-]{{12,}}{q}" for q in "'\""))
_HEX = re.compile(rb"[0-9A-Fa-f]+")
_BASE64_MIN = 23
_RUN = compile_whole_text(r"[A-Za-z0-9+/=_-]{20,}")
_SECRET_WORD = re.compile(r"key|pass|pwd|secret|token|credential|contrase|auth|private",
                          re.IGNORECASE)
_SECRET_WORDS = compile_whole_text(f"(?i:{_SECRET_WORD.pattern})")


def _quoted_starts(text: bytes) -> Iterator[int]:
    """Where a quoted string an entropy detector could report starts: every quote tried (a
    match's closing quote may open the next string)."""
    at = 0
    while (match := _QUOTED.search(text, at)) is not None:
        value = match.group(0)[1:-1]
        if len(value) >= _BASE64_MIN or _HEX.fullmatch(value):
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
_PLACEHOLDER = re.compile(
    r"^[<{(\[$%]*((your|my)[ _-]?)?(user(name)?|pass(word|wd)?|pwd|secret|token|(api[ _-]?)?key|"
    r"changeme|example|foo|bar|baz|test|dummy|fake|value|something|x+|\*+|\.+)([ _-]?here)?"
    r"[>})\]%]*$",
    re.IGNORECASE)
# Values encrypted for a CI service (`secure: "..."` in .travis.yml): safe by design.
_ENCRYPTED_CI = re.compile(r"^\s*-?\s*secure\s*:")


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
_SELF_NAMED = re.compile(r"secret|example|sample|dummy|placeholder|change[_-]?me|replace[_-]?me",
                         re.IGNORECASE)
_WORDY = re.compile(r"[A-Za-z0-9 ._-]{1,40}")


def is_illustration(path: str, value: str, kind: str) -> bool:
    """On a documentation page (Markdown, reStructuredText), a value found only by the name
    beside it that spells out what it stands for, or is words (`"password": "for encrypted
    privkey file"`). In code or a config file the same value is a credential something runs
    with, and is reported."""
    return kind in _NAMED_KINDS and is_prose(path) and (
        (_SELF_NAMED.search(value) is not None and _WORDY.fullmatch(value) is not None)
        or any(c.isspace() for c in value.strip()))


def scan_line(path: str, text: str, quiet: bool = False, candidate: bool = False,
              plugins: frozenset[int] | None = None,
              left_out: LeftOut | None = None,
              ) -> dict[str, tuple[Severity, str]]:
    """Secrets on one line: value -> (severity, type), the most severe detector winning.
    `candidate`: the line is known to pass `candidate_lines`; `plugins`: the detectors that
    can report anything on it (`_plugins_for`), all when None; `left_out` receives the
    values the line's own words leave out (a placeholder, an illustration, an encrypted
    value's detectors), as they would have been reported."""
    best: dict[str, tuple[Severity, str]] = {}
    encrypted = (_ENCRYPTED_CI.match(text) is not None
                 and path.lower().endswith((".yml", ".yaml")))
    if encrypted or len(text) > MINIFIED_LINE_CHARS:
        # Minified code, or a CI service's encrypted value (`secure: "..."` in YAML): the
        # well-known token formats (linear patterns) find what a person would have pasted
        # (no encrypted value has one); entropy and keyword detectors would flag every other
        # string.
        long_hits = _own_hits(path, text, quiet) + (
            [] if encrypted else [*_long_keyword_hits(path, text, quiet),
                                  *_long_entropy_hits(path, text, quiet)])
        for value, level, kind in long_hits:
            if level is not None and not documented_example(value) and (
                    value not in best or _rank(level) > _rank(best[value][0])):
                best[value] = (level, kind)
        if encrypted and left_out is not None and (candidate or could_hold(path, text)):
            left_out.update((value, (level, kind, "encrypted")) for value, level, kind
                            in _detect_secrets_hits(path, text, quiet, plugins)
                            if level is not None and value not in best)
        return best
    if not (candidate or could_hold(path, text)):
        return best
    placeholders: dict[str, tuple[Severity, str]] = {}
    for value, level, kind in (*_own_hits(path, text, quiet),
                               *_detect_secrets_hits(path, text, quiet, plugins)):
        if level is None:
            continue
        placeholder = (is_placeholder(value) or is_illustration(path, value, kind)
                       or documented_example(value))
        kept = placeholders if placeholder else best
        if value not in kept or _rank(level) > _rank(kept[value][0]):
            kept[value] = (level, kind)
    if left_out is not None:  # unless another detector reports it
        left_out.update((value, (level, kind, "placeholder"))
                        for value, (level, kind) in placeholders.items() if value not in best)
    return best


_Hit = tuple[str, Severity | None, str]


def documented_example(value: str) -> bool:
    """One of DOCUMENTED_EXAMPLES, exactly (quoted or not)."""
    return value.strip("\"'") in DOCUMENTED_EXAMPLES


def _own_hits(path: str, text: str, quiet: bool) -> list[_Hit]:
    """Well-known token formats, whole; `KEY=value` credentials in config files."""
    hits: list[_Hit] = [(m.group(0), "warning" if quiet else "error", token.kind)
                        for m, token in token_matches(text)]
    if bare_values_are_literal(path):
        hits += [(text[span.start:span.end], "info" if quiet else "warning",
                  "credential in a config file")
                 for span in find_secrets(text) if span.kind == "credential"]
    return hits


def _long_keyword_hits(path: str, text: str, quiet: bool) -> list[_Hit]:
    """On a long line of code, what the keyword detector reports on a short one (a quoted
    value named like a credential, `password = "..."`), found by redaction's linear search:
    padding a line past the limit does not hide a password. Config files have theirs in
    `_own_hits` already."""
    if bare_values_are_literal(path):
        return []
    # The quoted ones (a bare value in code is a reference); searched as redaction searches
    # the same line, whose answer is remembered.
    return [(value, "info" if quiet else "warning", "Secret Keyword")
            for span in find_secrets(text)
            if span.kind == "credential" and span.start and text[span.start - 1] in "\"'`"
            and not is_placeholder(value := text[span.start:span.end])
            and not any(c.isspace() for c in value)]


# What stands before a value on a long line, for the detectors' reading of its context (a
# secret-like word names a hex string a key).
_CONTEXT = 80


def _long_entropy_hits(path: str, text: str, quiet: bool) -> list[_Hit]:
    """On a long line of code, what the entropy detectors report on a short one: each quoted
    string they could report (one RE2 pass) whose entropy passes their limit is read with the
    words before it, as a line of its own. Padding a line past the limit does not hide a
    high-entropy value; a minified line's strings are names and words, which no limit passes
    (detect-secrets is loaded only for one that does)."""
    encoded = text.encode("utf-8", "surrogatepass")
    hits: list[_Hit] = []
    # One pass (a shared quote between two strings is code no minifier writes).
    for match in _QUOTED.finditer(encoded):
        quoted = match.group(0)[1:-1]
        if not _random_enough(quoted):
            continue
        at, close = match.start(), match.end() - 1
        window = encoded[max(0, at - _CONTEXT):close + 1].decode("utf-8", "replace")
        entropy = frozenset(index for index, plugin in enumerate(_plugins())
                            if type(plugin).__name__ in _ENTROPY)
        hits += _detect_secrets_hits(path, window, quiet, entropy)
    return hits


def _sequential(value: bytes) -> bool:
    """An alphabet (`0123456789abcdef`, `A...Za...z0...9+/`): mostly characters in a row,
    which detect-secrets' own filter leaves out too."""
    steps = sum(1 for a, b in pairwise(value) if b == a + 1)
    return steps * 5 >= (len(value) - 1) * 4


# detect-secrets' entropy limits (bits a character) for base64 and hex strings.
_BASE64_LIMIT, _HEX_LIMIT = 4.5, 3.0


def _random_enough(value: bytes) -> bool:
    """Whether an entropy detector's limit passes for the value: its Shannon entropy over
    its own characters (base64's 4.5 bits needs 23 different ones, hex's 3.0 bits 9)."""
    distinct = len(set(value))
    hex_value = _HEX.fullmatch(value) is not None
    if distinct < (9 if hex_value else _BASE64_MIN) or _sequential(value):
        return False
    size = len(value)
    bits = -sum(count / size * math.log2(count / size) for count in Counter(value).values())
    return bits > (_HEX_LIMIT if hex_value else _BASE64_LIMIT)


def _detect_secrets_hits(path: str, text: str, quiet: bool,
                         plugins: frozenset[int] | None = None) -> list[_Hit]:
    whole = [m.group(0) for m, _ in token_matches(text)]
    hits: list[_Hit] = []
    for index, plugin in enumerate(_plugins()):
        if plugins is not None and index not in plugins:
            continue
        if type(plugin).__name__ in _KEYWORD and not _keyword_words().search(text):
            continue  # each of its patterns starts with one of its words
        for found in plugin.analyze_line(filename=path, line=text, line_number=0):
            value = _value(found)
            # A format matched above reports the whole token; detect-secrets may report
            # only part of it (an unquoted GitHub token's value is "ghp").
            if (value is None or _filtered_out(value, text, plugin)
                    or any(value in token for token in whole)
                    or _is_digest(type(plugin).__name__, text)
                    or _is_key_name(type(plugin).__name__, text)
                    or _is_prose(type(plugin).__name__, value)):
                continue
            hits.append((value, _severity(type(plugin).__name__, quiet),
                         _kind(value, str(found.type))))
    return hits


def _key_body_follows(change: FileChange, number: int, text: str) -> bool:
    """Whether key material goes with the armour on this line (redaction.key_follows: on
    the line itself, a key in one string with `\\n`s, or on the lines after it in any layout
    a key reader accepts). A header alone is no key."""
    armour = KEY_ARMOUR.search(text)
    if armour is None:
        return True  # detect-secrets' own armour forms: its detector decides
    if armour.group(0).startswith("PuTTY"):
        return True
    return key_follows(text[armour.end():], _following(change, number))


def _following(change: FileChange, number: int) -> Iterator[str]:
    """The new file's lines after line `number` (added ones from the diff, the others from
    the file, read only if asked)."""
    added = change.added_by_line
    at = number + 1
    while at in added:
        yield added[at]
        at += 1
    lines = (change.new_text or "").split("\n")
    yield from lines[at - 1:]


def _is_key_name(plugin_name: str, text: str) -> bool:
    """`r'BEGIN DSA PRIVATE KEY'` in a detector's pattern list names a key format; a key
    itself comes with its armour."""
    return plugin_name == "PrivateKeyDetector" and not KEY_ARMOUR.search(text)


def _is_prose(plugin_name: str, value: str) -> bool:
    """A keyword match whose value has spaces (`password="a secret"` in a docstring): words,
    not a credential."""
    return plugin_name in _KEYWORD and any(c.isspace() for c in value.strip())


def _is_digest(plugin_name: str, text: str) -> bool:
    """A hex string with no secret-like word on its line: a digest, a commit, a colour
    table, an id; flagging every checksum teaches people to ignore the rule."""
    return plugin_name == "HexHighEntropyString" and not _SECRET_WORD.search(text)


def _kind(value: str, reported: str) -> str:
    """detect-secrets calls the AWS secret key an "AWS Access Key" too."""
    if reported == "AWS Access Key":
        return "AWS access key ID" if known_token(value) else "AWS secret access key"
    return reported


def secret_values(units: Iterable[ReviewUnit], findings: Iterable[Finding]) -> set[str]:
    """The secrets behind the secrets findings, for redaction; kept in memory only."""
    lines = {(f.file_path, n) for f in findings if f.category == "secrets"
             for n in range(f.start_line, f.end_line + 1)}
    values: set[str] = set()
    for unit in units:
        for line in unit.hunk.added() if unit.hunk else ():
            if (unit.file_path, line.new_lineno) in lines:
                values |= set(scan_line(unit.file_path, line.text))
    return values


def _value(found: Any) -> str | None:
    value = getattr(found, "secret_value", None)
    return value if isinstance(value, str) and value else None


def _severity(plugin_name: str, quiet: bool) -> Severity | None:
    if plugin_name in _ENTROPY:
        return None if quiet else "info"
    if plugin_name in _KEYWORD:
        return "info" if quiet else "warning"
    return "warning" if quiet else "error"


def _rank(level: Severity) -> int:
    return {"info": 0, "warning": 1, "error": 2}[level]


class HistorySecretsRule(RuleBase, frozen=True):
    """Secrets in commits of a pushed range that a later commit of it removed again.

    They are not in the change's result, so no file check sees them, but they are in the
    history being pushed. The engine feeds this rule the diff stage's `history` lines."""

    def applies_to(self, change: FileChange) -> bool:
        return False

    def check(self, change: FileChange) -> Iterator[Hit]:
        return iter(())

    def check_history(self, lines: Iterable[HistoryLine],
                      quiet_paths: Mapping[str, Quiet] | None = None,
                      ) -> Iterator[tuple[Finding, Quiet | None]]:
        """Each finding, at the level it would have had, with what quietens it: the kind
        (test code, documentation) of its file (`quiet_paths`: a file the range added and
        removed again had a name only the change gave it), a placeholder, or an allowlist
        pragma in a comment of the line (the line alone: a commit's patch shows no more)."""
        for line in lines:
            left_out: LeftOut = {}
            found = scan_line(line.file_path, line.text, left_out=left_out)
            if not found and not left_out:
                continue
            comment = line_comments(line.text, detect_language(line.file_path)).get(1, "")
            allowed = directive(comment, self.id, secret=True) if comment else None
            for value, (level, kind) in [*found.items(), *_levels(left_out)]:
                quiet = (Quiet("allowlist", "change", justification=allowed.justification)
                         if allowed is not None
                         else Quiet(left_out[value][2], "change") if value in left_out
                         else quieter((quiet_paths or {}).get(line.file_path), level, kind))
                yield Finding(
                    file_path=line.file_path, start_line=max(line.line, 1),
                    end_line=max(line.line, 1), severity=level, category="secrets",
                    rule_id=self.id, title=f"Secret in the pushed history: {kind}",
                    message=(f"Commit {line.commit[:12]} adds what looks like a secret: {kind} "
                             f"({redact(value)}). A later commit removes it, but it stays in "
                             "the history being pushed."),
                    suggestion=("Rewrite those commits (`git rebase -i`) so the secret never "
                                "appears, and revoke it if it was ever pushed anywhere."),
                ), quiet


HISTORY_RULE = HistorySecretsRule(RuleInfo(
    id="secrets.in-history", title="Secret in the pushed history", severity="error",
    category="secrets",
    rationale="A secret added by one commit and removed by the next is still published "
              "with the history; only rewriting the commits takes it out.",
))
RULES = (
    SecretsRule(RuleInfo(
        id="secrets.hardcoded", title="Hard-coded secret", severity="error",
        category="secrets",
        rationale="A credential in source is readable by everyone with the repository "
                  "and stays in its history after removal.",
        # A known token format, a keyword match, a bare high-entropy string.
        levels=("info", "warning", "error"),
    )),
    HISTORY_RULE,
)
