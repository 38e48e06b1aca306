"""Hard-coded secrets on added lines, as rules: every added line that can hold one read by the
detectors (`secret_lines`, `secret_detectors`), one level quieter in test code and
documentation; the secrets of a pushed history that a later commit removed; and the secret
values behind the findings, for redaction. Findings carry the secret's type and at most a
public prefix, never the secret."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

import msgspec

from reviewbot.code.comments import line_comments
from reviewbot.code.languages import detect_language
from reviewbot.code.long_lines import long_line_code
from reviewbot.levels import Severity
from reviewbot.rules.base import MINIFIED_LINE_CHARS, FileChange, Hit, Quiet, RuleBase, RuleInfo
from reviewbot.rules.literal_values import program_lines
from reviewbot.rules.secret_detectors import (
    LeftOut,
    key_body_follows,
    plugins_for,
    redact,
    scan_line,
)
from reviewbot.rules.secret_lines import candidate_lines
from reviewbot.rules.suppressions import directive
from reviewbot.schema.findings import Finding
from reviewbot.schema.records import Tag
from reviewbot.schema.units import HistoryLine, ReviewUnit

if TYPE_CHECKING:
    pass

# One level lower there: what a keyword or entropy detector finds (it cannot tell a fixture
# or an illustration from a credential) in test code and documentation; a known token format
# in documentation only. A known format in test code is a key like any other: tests are
# pushed, cloned and published with the rest, and a real key there is leaked all the same.
QUIET_TAGS = frozenset({"test_file", "docs"})


# What test code may hold at one level lower: what a detector cannot tell from a fixture, and
# what a test makes of its own (the key pairs of TLS and signing tests, a JWT it signs).
_QUIET_IN_TESTS = frozenset({"Secret Keyword", "Base64 High Entropy String",
                             "Hex High Entropy String", "Private Key", "JSON Web Token"})


# One level quieter (in tests and documentation): a bare high-entropy string is then nothing.
_QUIETER: dict[Severity, Severity | None] = {"error": "warning", "warning": "info",
                                             "info": None}


class SecretsRule(RuleBase, frozen=True):
    def check(self, change: FileChange) -> Iterator[Hit]:
        # Documentation's kind wins where a file has both: it quietens every type.
        tag: Tag | None = ("docs" if "docs" in change.tags
                           else "test_file" if "test_file" in change.tags else None)
        quiet = (Quiet("docs" if tag == "docs" else "test_code", change.kind.decided(tag))
                 if tag is not None else None)
        added = change.added_by_line
        candidates = candidate_lines(change.path, added)
        plugins = plugins_for("\n".join(added[n] for n in candidates
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
                at_once = len(read) > MINIFIED_LINE_CHARS  # a long line's key, by its span
                if kind == "Private Key" and not key_body_follows(
                        change, number, value if at_once else text, at_once):
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


def _levels(left_out: LeftOut) -> list[tuple[str, tuple[Severity, str]]]:
    return [(value, (level, kind)) for value, (level, kind, _) in left_out.items()]


def quieter(quiet: Quiet | None, level: Severity, kind: str) -> Quiet | None:
    """A file's test or documentation kind, applied to a secret of this level and type: one
    level quieter (None: the file has no such kind, or it is test code and the secret a
    service's token format, reported there as anywhere)."""
    if quiet is None or (quiet.kind == "test_code" and kind not in _QUIET_IN_TESTS):
        return None
    return msgspec.structs.replace(quiet, given=_QUIETER[level])


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
