"""What quietenings removed or lowered, said the same way in every summary: the terminal,
`--format markdown` (the job summary), and the pull or merge request's summary comment.

First every error-level finding the change itself keeps from being reported (a suppression
it adds, a config it edits in the hook), with its file and line (what a reviewer must not
miss); then the counts by who decided (the change, the base, you)
and by kind; then each new file the rules read for secrets only. Every finding behind the
counts is in the JSON report (`quieted`) and in SARIF as a suppressed result.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from reviewbot.report import display_path
from reviewbot.report.markup import inert_line, inline_code
from reviewbot.schema.findings import DecidedBy, Quieted, QuietedFile, QuietKind
from reviewbot.schema.runs import RunReport
from reviewbot.text.words import counted

KIND_WORDS: dict[QuietKind, str] = {
    "suppression": "`reviewbot: ignore`", "nosec": "`nosec`",
    "allowlist": "`pragma: allowlist secret`", "config": "a rule setting",
    "ignore": "`ignore`", "vendored": "vendored code", "generated": "generated code",
    "lockfile": "a lockfile", "test_code": "test code", "docs": "documentation",
    "placeholder": "a placeholder value", "encrypted": "an encrypted CI value",
    "long_line": "a long line", "minified": "minified code",
}
WHO: dict[DecidedBy, str] = {"change": "the change", "base": "the base", "user": "you"}
# The kinds that are a comment on the finding's line.
SUPPRESSIONS = frozenset({"suppression", "nosec", "allowlist"})
# How many of the change's suppressed errors, or new files, a summary names one by one (the
# count says how many there are: decoys cannot hide the rest).
NAMED = 50


# What the change chooses to quieten: a comment it adds, a setting its config makes (a
# placeholder or an encrypted value is what the line's value is, not a choice).
_CHOSEN = SUPPRESSIONS | {"config", "ignore"}


def said_first(report: RunReport) -> list[Quieted]:
    """The error-level findings the change itself keeps from being reported (a suppression
    it adds, a config it edits): named before anything."""
    return [q for q in report.quieted if q.decided_by == "change" and q.kind in _CHOSEN
            and q.given is None and q.finding.severity == "error"]


# Files the line-pattern rules read only in part (the long lines of a file the base holds
# minified), not files read for secrets only.
_PASSED_OVER = frozenset({"long_line", "minified"})


def new_files(report: RunReport) -> list[QuietedFile]:
    """The files the change names that the rules read for secrets only."""
    return [f for f in report.quieted_files if f.new and f.kind not in _PASSED_OVER]


def long_lines(report: RunReport) -> list[QuietedFile]:
    """The files with added lines the line-pattern rules pass over."""
    return [f for f in report.quieted_files if f.kind in _PASSED_OVER]


def counts(quieted: Sequence[Quieted]) -> str:
    """`1 by the change (1 nosec), 2 by the base (test code: 2 lowered)`: who decided, then
    by kind, removed and lowered."""
    groups = []
    for who in ("change", "base", "user"):
        mine = [q for q in quieted if q.decided_by == who]
        if not mine:
            continue
        removed = Counter(q.kind for q in mine if q.given is None)
        lowered = Counter(q.kind for q in mine if q.given is not None)
        kinds = [f"{KIND_WORDS[kind]}: " + ", ".join(
            part for part in (f"{removed[kind]} not reported" if removed[kind] else "",
                              f"{lowered[kind]} lowered" if lowered[kind] else "") if part)
            for kind in dict.fromkeys([*removed, *lowered])]
        groups.append(f"{len(mine)} by {WHO[who]} ({'; '.join(kinds)})")
    return ", ".join(groups)


def text_lines(report: RunReport) -> list[str]:
    """For the terminal (escaped by the caller's display functions)."""
    lines = [f"quietened by the change: {display_path(q.finding.file_path)}:"
             f"{q.finding.start_line} error {q.finding.rule_id} "
             f"({_how(q)})" for q in said_first(report)[:NAMED]]
    rest = len(said_first(report)) - NAMED
    if rest > 0:
        lines.append(f"quietened by the change: {rest} more errors (the JSON report lists "
                     "them)")
    if report.quieted:
        lines.append(f"quietened: {counts(report.quieted)}")
    files = new_files(report)
    if files:
        named = ", ".join(f"{display_path(f.file_path)} ({_file_how(f, False)})"
                          for f in files[:NAMED])
        more = f" and {len(files) - NAMED} more" if len(files) > NAMED else ""
        lines.append(f"new files checked for secrets only: {named}{more}")
    if long := long_lines(report):
        lines.append("passed over by the line-pattern rules: " + ", ".join(
            f"{display_path(f.file_path)} ({f.justification})" for f in long[:NAMED])
            + (f" and {len(long) - NAMED} more files" if len(long) > NAMED else ""))
    return lines


# Where every quietened finding is listed, as a Markdown summary says it.
LISTED = "the JSON report, and in SARIF as a suppressed result"
LISTED_BY_A_RUN = ("the list at the end (as far as a comment holds it) and in the run's JSON "
                   "report")


def markdown_lines(report: RunReport, listed: str = LISTED) -> list[str]:
    """For a Markdown summary; every word from the repository made inert."""
    lines: list[str] = []
    first = said_first(report)
    if first:
        lines += [f"**The change suppresses {counted(len(first), 'error')}** (not counted in "
                  "the result):", ""]
        lines += [f"- {inline_code(display_path(q.finding.file_path))} L{q.finding.start_line}"
                  f" `{q.finding.rule_id}` {inert_line(q.finding.title)}: {_how(q, inert=True)}"
                  for q in first[:NAMED]]
        if len(first) > NAMED:
            lines.append(f"- … and {len(first) - NAMED} more (the JSON report lists them)")
        lines.append("")
    if report.quieted:
        lines += [f"**Quietened:** {counted(len(report.quieted), 'finding')}, "
                  f"{counts(report.quieted)}. Each is in {listed}.", ""]
    files = new_files(report)
    if files:
        named = ", ".join(f"{inline_code(display_path(f.file_path))} ({_file_how(f, True)})"
                          for f in files[:NAMED])
        more = f" and {len(files) - NAMED} more" if len(files) > NAMED else ""
        lines += [f"**New files checked for secrets only:** {named}{more}.", ""]
    if long := long_lines(report):
        lines += ["**Passed over by the line-pattern rules:** " + ", ".join(
            f"{inline_code(display_path(f.file_path))} ({f.justification})"
            for f in long[:NAMED])
            + (f" and {len(long) - NAMED} more files" if len(long) > NAMED else "") + ".", ""]
    return lines[:-1] if lines else []


def markdown_details(report: RunReport) -> list[str]:
    """Every quietened finding, collapsed: what it would have been, and what quietened it."""
    if not report.quieted:
        return []
    lines = ["<details>", f"<summary>{counted(len(report.quieted), 'quietened finding')}: "
             "what each would have been, and what quietened it</summary>", ""]
    for q in report.quieted:
        f = q.finding
        span = f"L{f.start_line}" if f.start_line == f.end_line else \
            f"L{f.start_line}-L{f.end_line}"
        now = f"lowered to {q.given}" if q.given else "not reported"
        lines.append(f"- **{f.severity}**, {now}: {inline_code(display_path(f.file_path))} "
                     f"{span} {inert_line(f.title)} (`{f.rule_id}`), by {WHO[q.decided_by]} "
                     f"({_how(q, inert=True)})")
    return [*lines, "", "</details>"]


def _how(quiet: Quieted, inert: bool = False) -> str:
    words = KIND_WORDS[quiet.kind]
    why = quiet.justification
    if why:
        why = inert_line(why) if inert else display_path(why)
        return f"{words}: “{why}”"
    return words


def _file_how(file: QuietedFile, markdown: bool) -> str:
    what = KIND_WORDS[file.kind]
    if file.kind == "ignore" and file.justification:
        glob = (inline_code(file.justification) if markdown
                else f"`{display_path(file.justification)}`")
        what = f"`ignore` glob {glob}"
    return f"{what}, decided by {WHO[file.decided_by]}"
