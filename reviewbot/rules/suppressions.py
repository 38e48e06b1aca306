"""What a comment on a finding's first line quietens, and who decided it.

- `reviewbot: ignore[rule-id, other-id]` (bare `reviewbot: ignore`: every rule), bandit's
  `nosec` (bare, or naming the bandit tests whose findings it quietens) for the Python rules
  that find what those tests find, and detect-secrets' `pragma: allowlist secret` for a
  secret; the words after it are its justification;
- only in a comment of the file's language (code/comments.py: `f"ssh {host} # nosec"` is a
  string), on the line the finding starts on (the line it is reported at: a suppression
  further down a long statement is no suppression);
- decided by the change, on a line the change adds: the reviewer reads it in the diff. A
  comment on an unchanged line is the base's, and covers only what it covered at the base,
  where the finding was not (every finding reported is one the change brings: on lines it
  adds, or, for an analyzer that compares, absent from the base's file). Such a finding
  needs its own suppression on its first line, in the diff, and says so.
"""

from __future__ import annotations

from functools import lru_cache

import msgspec

from reviewbot.lazy_re import lazy_re
from reviewbot.rules.base import FileChange, Quiet
from reviewbot.schema.findings import QuietKind

# Bare, or naming rules: `ignore[js.eval` (no `]`) or `ignored` is neither.
_IGNORE = lazy_re(r"reviewbot:\s*ignore(?:\[(?P<ids>[^\]]*)\]|(?![\[\w.-]))")
# bandit's marker, bare or with its test ids (`nosec B602, B607`, `nosec: B602`).
_NOSEC = lazy_re(r"\bnosec\b(?P<ids>(?:[\s,:]+B\d{3}\b)*)")
_TEST_ID = lazy_re(r"B\d{3}")
# detect-secrets' own pragma (its `pragma: ?allowlist[ -]secret`).
_ALLOWLIST = lazy_re(r"pragma: ?allowlist[ -]secret")
# What a line must hold for a directive to be on it at all: most lines are spared reading
# the file's comments.
WORDS = ("reviewbot", "nosec", "allowlist")
_BANDIT: dict[str, frozenset[str]] = {
    "python.shell-injection": frozenset({"B602", "B604", "B605", "B609"}),
    "python.sql-injection": frozenset({"B608", "B610", "B611"}),
    "python.eval-exec": frozenset({"B102", "B307"}),
    "python.unsafe-deserialization": frozenset({"B301", "B302", "B403", "B506"}),
    "python.tls-verify-disabled": frozenset({"B501", "B502", "B503", "B504", "B323"}),
    "python.weak-hash": frozenset({"B303", "B324"}),
    "python.world-writable": frozenset({"B103"}),
    "python.insecure-tempfile": frozenset({"B306"}),
    "python.xss": frozenset({"B308", "B701", "B703"}),
    "python.path-traversal": frozenset({"B202"}),
    "python.debug-leftover": frozenset({"B101"}),
}
# What ends a line for Python or JavaScript and not for git.
_LINE_BREAKS = lazy_re("[\r\u2028\u2029\x0b\x0c\x1c-\x1e\x85]")
# A justification is the author's words, shown where the reviewer looks: bounded.
MAX_JUSTIFICATION = 200


class Directive(msgspec.Struct, frozen=True):
    """A suppression found in a comment: its kind and the words after it."""

    kind: QuietKind
    justification: str = ""


def directive(comment: str, rule_id: str, secret: bool) -> Directive | None:
    """The directive in a comment's text that quietens this rule's finding, or None. A
    `nosec` never quietens a secret, nor a rule bandit has no test for; the allowlist
    pragma quietens secrets only."""
    for match in _IGNORE.finditer(comment):
        ids = match.group("ids")
        if ids is None or rule_id in {part.strip() for part in ids.split(",")}:
            return Directive("suppression", _words_after(comment, match.end()))
    if secret and (found := _ALLOWLIST.search(comment)):
        return Directive("allowlist", _words_after(comment, found.end()))
    tests = _BANDIT.get(rule_id, frozenset())
    for match in _NOSEC.finditer(comment) if tests else ():
        named = set(_TEST_ID.findall(match.group("ids")))
        if not named or named & tests:
            return Directive("nosec", _words_after(comment, match.end()))
    return None


def _words_after(comment: str, at: int) -> str:
    words = comment[at:].strip().removesuffix("*/").removesuffix("-->")
    words = " ".join(words.strip(" \t-:;,.#/*").split())
    return words[:MAX_JUSTIFICATION]


class Suppressed(msgspec.Struct, frozen=True):
    """What a suppression does to a finding: quietens it (`quiet`), or nothing, with a note
    for the finding when a base suppression no longer covers it (`note`)."""

    quiet: Quiet | None = None
    note: str = ""


NOTHING = Suppressed()


@lru_cache(maxsize=64)
def _mentions(text: str) -> bool:
    """Whether a line holds a directive's word at all: asked once a line, however many
    findings start on it (a minified line is megabytes)."""
    return any(word in text for word in WORDS)


def suppression(change: FileChange, first: int, rule_id: str, secret: bool) -> Suppressed:
    """Whether a comment on the line a finding starts on quietens it."""
    text = change.line(first)
    if not _mentions(text):
        return NOTHING
    found = directive(change.comment_on(first), rule_id, secret)
    if found is None:
        return NOTHING
    if _LINE_BREAKS.search(text.rstrip("\r")):
        # One line to git, several to the language (a bare `\r`, U+2028): a comment on any of
        # them would read as on the finding's line.
        return Suppressed(note=(
            f"Line {first} holds more than one line of code (a bare carriage return or a line "
            "separator): a suppression on it covers nothing."))
    if first in change.added_by_line:
        return Suppressed(Quiet(found.kind, "change", justification=found.justification))
    return Suppressed(note=(
        f"The suppression on line {first} is the base's, and this finding is the change's: "
        "it covers only what it covered at the base. Suppress it again on line "
        f"{first}, in the change, if it is accepted."))
