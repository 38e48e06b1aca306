"""detect-secrets' detectors called on a line, with their false-positive filters, and reviewbot's
own known token formats and `KEY=value` credentials (`reviewbot.text.redaction`), as hits:
the secret, its severity and its type. The plugins are called directly rather than through
`scan_line`: its per-call filter injection costs ~1 ms a line, the detectors themselves
~0.1 ms (measured on 500 lines)."""

from __future__ import annotations

import importlib.util
import math
import re
import sys
import types
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import cache, lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from reviewbot.code.whole_text import compile_whole_text, utf8
from reviewbot.levels import Severity
from reviewbot.rules.base import MINIFIED_LINE_CHARS, FileChange
from reviewbot.rules.secret_lines import (
    BASE64_MIN,
    ENCRYPTED_CI,
    HEX,
    SECRET_WORD,
    could_hold,
    is_illustration,
    is_placeholder,
)
from reviewbot.schema.findings import QuietKind
from reviewbot.text.private_keys import KEY_ARMOUR, KEY_WINDOW, key_follows, key_material_at
from reviewbot.text.redaction import (
    bare_values_are_literal,
    find_secrets,
    is_wrapped_name,
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
    with _without_requests(), _without_package_init():
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


def plugins_for(lines: str) -> frozenset[int]:
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


@contextmanager
def _without_requests() -> Iterator[None]:
    """detect-secrets imports `requests` (~0.1 s, a third of the hook's rule time) only to
    verify secrets against their services, which reviewbot never does: it never sends a
    secret anywhere. While its modules load, `requests` is a placeholder."""
    placeholder = types.ModuleType("requests")
    placeholder.__getattr__ = _never_used  # type: ignore[method-assign]
    with _standing_in("requests", placeholder):
        yield


@contextmanager
def _without_package_init() -> Iterator[None]:
    """detect-secrets' package `__init__` imports its scanning machinery (SecretsCollection,
    and with it `multiprocessing`: a quarter of loading it) that only its own command line
    uses. While the plugins load, the package is a namespace for its submodules (which are
    its own: `import detect_secrets` afterwards gets the real package with them)."""
    spec = None if "detect_secrets" in sys.modules else importlib.util.find_spec(
        "detect_secrets")
    package = None
    if spec is not None and spec.submodule_search_locations is not None:
        package = types.ModuleType("detect_secrets")
        package.__path__ = list(spec.submodule_search_locations)
        package.__spec__ = spec
    with _standing_in("detect_secrets", package):
        yield


@contextmanager
def _standing_in(name: str, module: types.ModuleType | None) -> Iterator[None]:
    """`module` imported as `name` while the block runs, unless the real one is loaded
    already (or there is no stand-in); removed from sys.modules afterwards, so that anything
    else that imports `name` gets the real one."""
    if module is None or name in sys.modules:
        yield
        return
    sys.modules[name] = module
    try:
        yield
    finally:
        if sys.modules.get(name) is module:
            del sys.modules[name]


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


# Values a line's own words leave out, as they would have been reported, and why: a
# placeholder or an illustration, a CI service's encrypted value.
LeftOut = dict[str, tuple[Severity, str, QuietKind]]


@lru_cache(maxsize=8)
def _long_line_hits(path: str, text: str, quiet: bool,
                    encrypted: bool) -> tuple[_Hit, ...]:
    """A long line's hits, found once: the rules and the redaction of the run's records both
    ask (a minified bundle's line is megabytes)."""
    return tuple(_own_hits(path, text, quiet) + (
        [] if encrypted else [*_long_key_hits(text, quiet),
                              *_long_keyword_hits(path, text, quiet),
                              *_long_entropy_hits(path, text, quiet)]))


def scan_line(path: str, text: str, quiet: bool = False, candidate: bool = False,
              plugins: frozenset[int] | None = None,
              left_out: LeftOut | None = None,
              ) -> dict[str, tuple[Severity, str]]:
    """Secrets on one line: value -> (severity, type), the most severe detector winning.
    `candidate`: the line is known to pass `candidate_lines`; `plugins`: the detectors that
    can report anything on it (`plugins_for`), all when None; `left_out` receives the
    values the line's own words leave out (a placeholder, an illustration, an encrypted
    value's detectors), as they would have been reported."""
    best: dict[str, tuple[Severity, str]] = {}
    encrypted = (ENCRYPTED_CI.match(text) is not None
                 and path.lower().endswith((".yml", ".yaml")))
    if encrypted or len(text) > MINIFIED_LINE_CHARS:
        # Minified code, or a CI service's encrypted value (`secure: "..."` in YAML): the
        # well-known token formats (linear patterns) find what a person would have pasted
        # (no encrypted value has one); entropy and keyword detectors would flag every other
        # string.
        for value, level, kind in _long_line_hits(path, text, quiet, encrypted):
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


def _long_key_hits(text: str, quiet: bool) -> list[_Hit]:
    """On a long line, the private keys redaction's search finds (from each armour, the
    pass over the line the redaction of the run's records shares): padding a line past the
    limit does not hide a key. Whether material goes with the armour is the rule's to say
    (key_body_follows)."""
    # As much of it as redaction.KEY_WINDOW: the rest of a line whose key has no footer is
    # the bundle's code.
    return [(text[span.start:min(span.end, span.start + KEY_WINDOW)],
             "warning" if quiet else "error", "Private Key")
            for span in find_secrets(text) if span.kind == "private key"]


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
# The quoted strings (secret_lines.QUOTED) whose entropy can pass a limit: hex of 12 or more
# characters, or any other of BASE64_MIN or more (a shorter one has too few different
# characters for base64's limit). A minified line's thousands of short quoted names are not
# even made into matches.
_ENTROPY_CANDIDATES = compile_whole_text("|".join(
    f"{q}(?:[0-9A-Fa-f]{{12,}}|[A-Za-z0-9+/=_\\\\-]{{{BASE64_MIN},}}){q}" for q in "'\""))


def _long_entropy_hits(path: str, text: str, quiet: bool) -> list[_Hit]:
    """On a long line of code, what the entropy detectors report on a short one: each quoted
    string they could report (one RE2 pass) whose entropy passes their limit is read with the
    words before it, as a line of its own. Padding a line past the limit does not hide a
    high-entropy value; a minified line's strings are names and words, which no limit passes
    (detect-secrets is loaded only for one that does)."""
    encoded = utf8(text)
    hits: list[_Hit] = []
    # One pass (a shared quote between two strings is code no minifier writes).
    for match in _ENTROPY_CANDIDATES.finditer(encoded):
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
    hex_value = HEX.fullmatch(value) is not None
    if distinct < (9 if hex_value else BASE64_MIN) or _sequential(value):
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


def key_body_follows(change: FileChange, number: int, text: str,
                     at_once: bool = False) -> bool:
    """Whether key material goes with the armour on this line (private_keys.key_follows: on
    the line itself, a key in one string with `\\n`s, or on the lines after it in any layout
    a key reader accepts). A header alone is no key. `at_once`: `text` is a long line's key,
    from its armour, whose material must follow the armour at once
    (private_keys.key_material_at): a minified bundle holds armour constants among its code."""
    armour = KEY_ARMOUR.search(text)
    if armour is None:
        return True  # detect-secrets' own armour forms: its detector decides
    rest, following = text[armour.end():], _following(change, number)
    if at_once:
        return key_material_at(armour.group(0), rest, following)
    if armour.group(0).startswith("PuTTY"):
        return True
    return key_follows(rest, following)


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
    return plugin_name == "HexHighEntropyString" and not SECRET_WORD.search(text)


def _kind(value: str, reported: str) -> str:
    """detect-secrets calls the AWS secret key an "AWS Access Key" too."""
    if reported == "AWS Access Key":
        return "AWS access key ID" if known_token(value) else "AWS secret access key"
    return reported


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
