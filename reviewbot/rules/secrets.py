"""Hard-coded secrets on added lines: detect-secrets' detectors and filters, plus the
well-known token formats and `KEY=value` credentials of `reviewbot.run.redaction`.

The plugins are called directly rather than through `scan_line`: its per-call filter
injection costs ~1 ms a line, the detectors themselves ~0.1 ms (measured on 500 lines).
Findings carry the secret's type and at most a public prefix, never the secret.
"""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any

from reviewbot.code.whole_text import JoinedTexts, compile_whole_text
from reviewbot.rules.base import MINIFIED_LINE_CHARS, FileChange, Hit, RuleBase, RuleInfo
from reviewbot.rules.quieting import is_prose
from reviewbot.run.redaction import (
    TOKEN_SIGNS,
    bare_values_are_literal,
    find_secrets,
    known_token,
    preview,
    token_matches,
)
from reviewbot.schema import Finding, HistoryLine, ReviewUnit, Severity

if TYPE_CHECKING:
    from detect_secrets.plugins.base import BasePlugin

# Detectors that match a shape rather than a known token format: they cannot tell a
# checksum or fixture from a credential, so they report info (entropy) or warning.
_ENTROPY = frozenset({"Base64HighEntropyString", "HexHighEntropyString"})
_KEYWORD = frozenset({"KeywordDetector"})
# Not secrets: a public IP address is not a credential.
_SKIPPED = frozenset({"IPPublicDetector"})
_ALLOWLIST_PRAGMA = "pragma: allowlist secret"
# One level lower there: what a keyword or entropy detector finds (it cannot tell a fixture
# or an illustration from a credential) in test code and documentation; a known token format
# in documentation only. A known format in test code is a key like any other: tests are
# pushed, cloned and published with the rest, and a real key there is leaked all the same.
QUIET_TAGS = frozenset({"test_file", "docs"})
FORMATS_QUIET_TAGS = frozenset({"docs"})
# Formats a test makes of its own (a JWT it signs with a test key, like the key pairs it makes
# for TLS and signing tests): quieter wherever QUIET_TAGS are.
_SELF_MADE = frozenset({"JSON Web Token"})
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
            or h.is_likely_id_string(secret, line, plugin) or h.is_templated_secret(secret)
            or h.is_prefixed_with_dollar_sign(secret) or h.is_indirect_reference(line)
            or h.is_not_alphanumeric_string(secret))


def redact(secret: str) -> str:
    """A preview that identifies a secret without disclosing any of it: a well-known public
    prefix (`ghp_`, `AKIA`) at most."""
    return preview(secret)


class SecretsRule(RuleBase, frozen=True):
    def check(self, change: FileChange) -> Iterator[Hit]:
        quiet = bool(change.tags & QUIET_TAGS)
        formats_quiet = bool(change.tags & FORMATS_QUIET_TAGS)
        added = change.added_by_line
        candidates = candidate_lines(change.path, added)
        plugins = _plugins_for("\n".join(added[n] for n in candidates
                                         if len(added[n]) <= MINIFIED_LINE_CHARS))
        for number in candidates:
            text = added[number]
            if _ALLOWLIST_PRAGMA in text:
                continue
            for value, (level, kind) in scan_line(change.path, text, quiet, candidate=True,
                                                  plugins=plugins,
                                                  formats_quiet=formats_quiet).items():
                if kind == "Private Key" and not _key_body_follows(change, number, text):
                    continue  # the armour alone (a constant, a comment): no key is here
                yield Hit(
                    rule_id=self.id, line=number, severity=level,
                    title=f"Hard-coded secret: {kind}",
                    message=(f"Line {number} contains what looks like a secret: {kind} "
                             f"({redact(value)}). Committed secrets stay in git history."),
                    suggestion=("Load it from the environment or a secret manager, and "
                                "revoke the value if it was ever pushed."),
                )


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
              plugins: frozenset[int] | None = None, *,
              formats_quiet: bool | None = None) -> dict[str, tuple[Severity, str]]:
    """Secrets on one line: value -> (severity, type), the most severe detector winning.
    `quiet`: keyword and entropy matches one level lower (QUIET_TAGS); `formats_quiet`: known
    token formats too (FORMATS_QUIET_TAGS; default: as `quiet`). `candidate`: the line is
    known to pass `candidate_lines`; `plugins`: the detectors that can report anything on it
    (`_plugins_for`), all when None."""
    formats = quiet if formats_quiet is None else formats_quiet
    best: dict[str, tuple[Severity, str]] = {}
    encrypted = (_ENCRYPTED_CI.match(text) is not None
                 and path.lower().endswith((".yml", ".yaml")))
    if encrypted or len(text) > MINIFIED_LINE_CHARS:
        # Minified code, or a CI service's encrypted value (`secure: "..."` in YAML): the
        # well-known token formats (linear patterns) find what a person would have pasted
        # (no encrypted value has one); entropy and keyword detectors would flag every other
        # string.
        for value, level, kind in _own_hits(path, text, quiet, formats):
            if level is not None and not documented_example(value):
                best[value] = (level, kind)
        return best
    if not (candidate or could_hold(path, text)):
        return best
    for value, level, kind in (*_own_hits(path, text, quiet, formats),
                               *_detect_secrets_hits(path, text, quiet, plugins, formats)):
        if (is_placeholder(value) or is_illustration(path, value, kind)
                or documented_example(value)):
            continue
        if level is not None and (value not in best or _rank(level) > _rank(best[value][0])):
            best[value] = (level, kind)
    return best


_Hit = tuple[str, Severity | None, str]


def documented_example(value: str) -> bool:
    """One of DOCUMENTED_EXAMPLES, exactly (quoted or not)."""
    return value.strip("\"'") in DOCUMENTED_EXAMPLES


def _own_hits(path: str, text: str, quiet: bool, formats_quiet: bool) -> list[_Hit]:
    """Well-known token formats, whole; `KEY=value` credentials in config files."""
    hits: list[_Hit] = [(m.group(0), "warning" if formats_quiet or (
                            quiet and token.kind in _SELF_MADE) else "error", token.kind)
                        for m, token in token_matches(text)]
    if bare_values_are_literal(path):
        hits += [(text[span.start:span.end], "info" if quiet else "warning",
                  "credential in a config file")
                 for span in find_secrets(text) if span.kind == "credential"]
    return hits


def _detect_secrets_hits(path: str, text: str, quiet: bool,
                         plugins: frozenset[int] | None = None,
                         formats_quiet: bool | None = None) -> list[_Hit]:
    formats = quiet if formats_quiet is None else formats_quiet
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
            hits.append((value, _severity(type(plugin).__name__, quiet, formats),
                         _kind(value, str(found.type))))
    return hits


# A private key starts with its armour (`-----BEGIN RSA PRIVATE KEY-----`, SSH2's
# `---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----`) or PuTTY's header.
_KEY_ARMOUR = re.compile(r"-----BEGIN|---- BEGIN|PuTTY-User-Key-File-\d+:")


# What follows a private key's armour: base64 lines, or PEM's encryption headers.
_KEY_BODY = re.compile(r"[A-Za-z0-9+/]{32,}")
_PEM_HEADERS = ("Proc-Type:", "DEK-Info:", "Comment:")


def _key_body_follows(change: FileChange, number: int, text: str) -> bool:
    """Whether key material goes with the armour on this line: on the line itself (a key in
    one string with `\\n`s) or on the next line. A header alone is no key."""
    armour = _KEY_ARMOUR.search(text)
    if armour is None or armour.group(0).startswith("PuTTY"):
        return True
    if _KEY_BODY.search(text, armour.end()):
        return True
    following = change.added_by_line.get(number + 1)
    if following is None and change.new_text is not None:
        lines = change.new_text.split("\n")
        following = lines[number] if number < len(lines) else ""
    following = (following or "").strip()
    return bool(_KEY_BODY.search(following)) or following.startswith(_PEM_HEADERS)


def _is_key_name(plugin_name: str, text: str) -> bool:
    """`r'BEGIN DSA PRIVATE KEY'` in a detector's pattern list names a key format; a key
    itself comes with its armour."""
    return plugin_name == "PrivateKeyDetector" and not _KEY_ARMOUR.search(text)


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


def _severity(plugin_name: str, quiet: bool, formats_quiet: bool) -> Severity | None:
    """An entropy or keyword match, and a private key (a test makes key pairs of its own for
    TLS and signing), by `quiet`; a service's token format by `formats_quiet`."""
    if plugin_name in _ENTROPY:
        return None if quiet else "info"
    if plugin_name in _KEYWORD:
        return "info" if quiet else "warning"
    if plugin_name == "PrivateKeyDetector":
        return "warning" if quiet else "error"
    return "warning" if formats_quiet else "error"


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
                      quiet_paths: frozenset[str] = frozenset(),
                      formats_quiet_paths: frozenset[str] = frozenset()) -> Iterator[Finding]:
        """`quiet_paths`: the files whose test or docs kind the base declares (a file the
        range added and removed again had a name only the change gave it);
        `formats_quiet_paths`: those of them where a known token format is quieter too."""
        for line in lines:
            if _ALLOWLIST_PRAGMA in line.text:
                continue
            quiet = line.file_path in quiet_paths
            for value, (level, kind) in scan_line(
                    line.file_path, line.text, quiet,
                    formats_quiet=line.file_path in formats_quiet_paths).items():
                yield Finding(
                    file_path=line.file_path, start_line=max(line.line, 1),
                    end_line=max(line.line, 1), severity=level, category="secrets",
                    rule_id=self.id, title=f"Secret in the pushed history: {kind}",
                    message=(f"Commit {line.commit[:12]} adds what looks like a secret: {kind} "
                             f"({redact(value)}). A later commit removes it, but it stays in "
                             "the history being pushed."),
                    suggestion=("Rewrite those commits (`git rebase -i`) so the secret never "
                                "appears, and revoke it if it was ever pushed anywhere."),
                )


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
