"""The text of what reviewbot posts on a pull request: an inline comment per finding, and one
summary comment. Each carries a hidden marker, so a later run finds its own comments: the
finding's fingerprint, or the summary with the head commit it reviewed. Every body fits
GitHub's 65,536 characters: the summary lists what could not go on a line by severity as far
as it fits and counts the rest; a suggestion is posted whole or not at all."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from reviewbot.report import ReportInput, display_path
from reviewbot.report.markup import code_block, inline_code
from reviewbot.report.walkthrough import walkthrough
from reviewbot.schema import Finding
from reviewbot.terminal import visible

ICON = {"error": "🔴", "warning": "🟠", "info": "🔵"}
# GitHub refuses a comment or review body longer than this (characters).
MAX_BODY = 65_536
# Room kept below it for what the redaction pass and the markers may add.
_MARGIN = 2_000
# A finding's comment: its fingerprint, ";resolved" (gone from the pull request) or
# ";dismissed" (someone with write access dismissed it: never posted again here), and its
# rule (what repeated dismissals are counted by).
FINGERPRINT = re.compile(r"<!-- reviewbot:fp=(?P<fp>[0-9a-f]+)(?P<state>;resolved|;dismissed)?"
                         r"(?: rule=(?P<rule>[a-z0-9_.-]+))? -->")
# reviewbot's answer to a comment, so that a re-run of the same event answers once.
REPLY = re.compile(r"<!-- reviewbot:reply to=(?P<id>\d+) -->")
SUMMARY = re.compile(r"<!-- reviewbot:summary head=(?P<head>[0-9a-f]*) -->")


@dataclass(frozen=True)
class Placed:
    """A finding that is not posted on a line, and why."""

    finding: Finding
    reason: str


def neutral(text: str) -> str:
    """Untrusted text (a model's words, a file name) for a comment: no @-mentions that ping
    people, no HTML comments that could forge reviewbot's markers, no control characters or
    bidi overrides."""
    return visible(text).replace("@", "@\u200b").replace("<!--", "&lt;!--")


def finding_body(finding: Finding, fingerprint: str) -> str:
    parts = [f"{ICON[finding.severity]} **{finding.severity}** {neutral(finding.title)} "
             f"(`{finding.rule_id}`)", "", neutral(finding.message)]
    if finding.suggestion:
        parts += ["", f"Fix: {neutral(finding.suggestion)}"]
    source = "the review model (checked against the diff)" if finding.source == "model" \
        else "a rule"
    tail = ["", f"<sub>reviewbot, from {source}</sub>",
            f"<!-- reviewbot:fp={fingerprint} rule={finding.rule_id} -->"]
    if finding.replacement is not None:
        # "Commit suggestion" writes the block into the code: it is the whole fix or nothing.
        block = code_block(finding.replacement.split("\n"), "suggestion", indent="")
        if len("\n".join([*parts, "", block, *tail])) <= MAX_BODY - _MARGIN:
            parts += ["", block]
        else:
            parts += ["", "_A suggested fix is too long for a comment; it is in the SARIF "
                          "file._"]
    return "\n".join([*parts, *tail])


def resolved_body(body: str, head_sha: str) -> str:
    """An earlier comment whose finding is gone (REST cannot resolve a thread: it is said)."""
    marked = _with_state(body, ";resolved")
    return f"✅ **Resolved** in `{head_sha[:12]}`: reviewbot no longer reports this.\n\n{marked}"


def dismissed_body(body: str, login: str, reason: str) -> str:
    """A finding's comment dismissed by someone with write access, with their reason."""
    why = f": {neutral(reason)}" if reason else " (no reason given)"
    return (f"🚫 **Dismissed** by {neutral('@' + login)}{why}. reviewbot will not post it "
            f"again on this pull request.\n\n{_with_state(body, ';dismissed')}")


def _with_state(body: str, state: str) -> str:
    def marked(match: re.Match[str]) -> str:
        rule = f" rule={match.group('rule')}" if match.group("rule") else ""
        return f"<!-- reviewbot:fp={match.group('fp')}{state}{rule} -->"

    return FINGERPRINT.sub(marked, body)


def reply_body(text: str, to_comment: int) -> str:
    """An answer to someone's comment, marked with the comment it answers."""
    return f"{text}\n\n<!-- reviewbot:reply to={to_comment} -->"


def explanation(finding: Finding, data: ReportInput) -> str:
    """Why a finding is a problem, without a model: the rule's reasoning, the code it is
    about and the fix."""
    parts = [f"{ICON[finding.severity]} **{finding.severity}** {neutral(finding.title)} "
             f"(`{finding.rule_id}`), {inline_code(display_path(finding.file_path))} "
             f"line {finding.start_line}" +
             (f"-{finding.end_line}" if finding.end_line != finding.start_line else ""), ""]
    rule = data.rules.get(finding.rule_id)
    if finding.source == "model":
        parts += ["Found by the review model; its quoted code was checked against the diff."]
    elif rule is not None:
        parts += [f"**Why:** {neutral(rule.rationale)}"]
    parts += ["", f"**What:** {neutral(finding.message)}"]
    code = data.code_of(finding)
    if code:
        parts += ["", "**The code:**", code_block(code, "", indent="")]
    if finding.suggestion:
        parts += ["", f"**Fix:** {neutral(finding.suggestion)}"]
    parts += ["", "To dismiss it on this pull request: reply `/reviewbot ignore <reason>`."]
    return "\n".join(parts)


@dataclass(frozen=True)
class SummaryFacts:
    head_sha: str
    posted: int
    already_posted: int
    resolved: int
    elsewhere: Sequence[Placed]
    notes: Sequence[str] = ()
    # Findings someone dismissed on this pull request (not posted again).
    dismissed: int = 0


def summary_body(data: ReportInput, facts: SummaryFacts, limit: int = MAX_BODY) -> str:
    """The summary comment, within `limit` characters: the findings not on a line are listed
    most severe first as far as they fit, and the rest counted, with where to find them."""
    report = data.report
    counts = report.stats.findings
    stats = report.stats
    lines = ["## reviewbot", ""]
    lines.append(f"Reviewed `{facts.head_sha[:12]}` (the whole pull request): {stats.units} "
                 f"units in {stats.files} files (+{stats.added_lines} -{stats.removed_lines}).")
    lines += ["", "| error | warning | info |", "| ---: | ---: | ---: |",
              f"| {counts.get('error', 0)} | {counts.get('warning', 0)} | "
              f"{counts.get('info', 0)} |", "", *walkthrough(data), ""]
    dismissed = f", {facts.dismissed} dismissed" if facts.dismissed else ""
    lines.append(f"Inline: {facts.posted} new comments, {facts.already_posted} already posted, "
                 f"{facts.resolved} earlier comments resolved{dismissed}.")
    lines += [f"> {neutral(note)}" for note in facts.notes]
    marker = ["", f"<!-- reviewbot:summary head={facts.head_sha} -->"]
    if facts.elsewhere:
        lines += ["", "### Not on a line of the diff", ""]
        budget = limit - _MARGIN - len("\n".join([*lines, *marker]))
        items = [_summary_item(placed) for placed in facts.elsewhere]
        shown = _fitting(items, budget)
        lines += items[:shown]
        if shown < len(items):
            lines.append(_the_rest(facts.elsewhere[shown:]))
    return "\n".join([*lines, *marker])


def _fitting(items: Sequence[str], budget: int) -> int:
    """How many items fit in the budget (one line each), keeping room for the last line."""
    used, room = 0, budget - 300
    for index, item in enumerate(items):
        used += len(item) + 1
        if used > room:
            return index
    return len(items)


def _the_rest(rest: Sequence[Placed]) -> str:
    by_severity = {level: sum(1 for p in rest if p.finding.severity == level)
                   for level in ("error", "warning", "info")}
    counted = ", ".join(f"{n} {level}" for level, n in by_severity.items() if n)
    return (f"- … and {len(rest)} more not shown here ({counted}): every finding is in the "
            "job summary, the SARIF file (the action's `sarif` output, for code scanning) and "
            "the run's artifacts.")


def _summary_item(placed: Placed) -> str:
    f = placed.finding
    span = f"L{f.start_line}" if f.start_line == f.end_line else f"L{f.start_line}-L{f.end_line}"
    return (f"- {ICON[f.severity]} **{f.severity}** {inline_code(display_path(f.file_path))} "
            f"{span} {neutral(f.title)} (`{f.rule_id}`; {placed.reason}): {neutral(f.message)}")
