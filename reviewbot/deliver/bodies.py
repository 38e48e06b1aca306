"""The text of what reviewbot posts on a pull request: an inline comment per finding, and one
summary comment. Every body ends with a hidden marker on a line of its own, so a later run
finds its own comments: the finding's fingerprint, the summary with the head commit it
reviewed, or the comment an answer answers. A marker counts only as the body's last line, in
exactly the form reviewbot writes, on a comment reviewbot wrote (`Delivery` checks the author):
marker text anywhere else (quoted code, a suggestion, a model's words) is nothing. Everything
reviewbot quotes is made inert (`reviewbot.report.markup`). Every body fits the forge's limit
(GitHub's 65,536 characters unless the forge says otherwise): the summary lists what could
not go on a line by severity as far as it fits and counts the rest, then, collapsed, the
findings below the inline level the same way; a suggestion is posted whole or not at all."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from reviewbot.lazy_re import lazy_re
from reviewbot.report import ReportInput, display_path
from reviewbot.report.markup import (
    code_block,
    inert,
    inert_line,
    inline_code,
    quoted_code,
    runs_as_command,
)
from reviewbot.report.quietened import LISTED_BY_A_RUN, markdown_details, markdown_lines
from reviewbot.report.walkthrough import walkthrough
from reviewbot.schema.findings import Finding
from reviewbot.schema.runs import RunReport
from reviewbot.text.words import counted

ICON = {"error": "🔴", "warning": "🟠", "info": "🔵"}
# GitHub refuses a comment or review body longer than this (characters).
MAX_BODY = 65_536
# Room kept below it for what the redaction pass and the markers may add.
_MARGIN = 2_000
# A finding's comment: its fingerprint, ";resolved" (gone from the pull request) or
# ";dismissed" (someone with write access dismissed it: never posted again here), and its
# rule (what repeated dismissals are counted by).
FINGERPRINT = lazy_re(r"<!-- reviewbot:fp=(?P<fp>[0-9a-f]+)(?P<state>;resolved|;dismissed)?"
                         r"(?: rule=(?P<rule>[a-z0-9_.-]+))? -->")
# reviewbot's answer to a comment, so that a re-run of the same event answers once.
REPLY = lazy_re(r"<!-- reviewbot:reply to=(?P<id>\d+) -->")
SUMMARY = lazy_re(r"<!-- reviewbot:summary head=(?P<head>[0-9a-f]*) -->")
# A review's own body, with the nonce of the write that created it.
REVIEW = lazy_re(r"<!-- reviewbot:review (?P<nonce>[0-9a-f]+) -->")
_MARKERS = (FINGERPRINT, REPLY, SUMMARY, REVIEW)


def last_line(body: str | None) -> str:
    return (body or "").rsplit("\n", 1)[-1]


def finding_marker(body: str | None) -> re.Match[str] | None:
    """The fingerprint marker of a finding's comment: its last line, exactly."""
    return FINGERPRINT.fullmatch(last_line(body))


def reply_marker(body: str | None) -> int | None:
    """The comment an answer answers (its last line), or None."""
    match = REPLY.fullmatch(last_line(body))
    return int(match["id"]) if match else None


def summary_marker(body: str | None) -> bool:
    return SUMMARY.fullmatch(last_line(body)) is not None


def review_marker(body: str | None) -> str | None:
    match = REVIEW.fullmatch(last_line(body))
    return match["nonce"] if match else None


def marked(body: str | None) -> bool:
    """Whether the body ends with one of reviewbot's markers (whoever wrote it)."""
    line = last_line(body)
    return any(marker.fullmatch(line) for marker in _MARKERS)


@dataclass(frozen=True)
class Placed:
    """A finding that is not posted on a line, and why."""

    finding: Finding
    reason: str


def github_fence(lines: int) -> str:
    """GitHub's suggestion fence: the block replaces the lines the comment is on."""
    return "suggestion"


def finding_body(finding: Finding, fingerprint: str, *, limit: int = MAX_BODY,
                 fence: Callable[[int], str] = github_fence) -> str:
    """A finding's inline comment, within `limit` characters; `fence` is the forge's info
    string for a suggestion block replacing that many lines from the comment's line on."""
    parts = [f"{ICON[finding.severity]} **{finding.severity}** {inert_line(finding.title)} "
             f"(`{finding.rule_id}`)", "", inert(finding.message)]
    if finding.suggestion:  # the model's words: never a suggestion block (only the checked fix)
        parts += ["", f"Fix: {inert(finding.suggestion)}"]
    source = "the review model (checked against the diff)" if finding.source == "model" \
        else "a rule"
    tail = ["", f"<sub>reviewbot, from {source}</sub>",
            f"<!-- reviewbot:fp={fingerprint} rule={finding.rule_id} -->"]
    if finding.replacement is not None:
        # "Commit suggestion" writes the block into the code: it is the whole fix or nothing.
        # The fix is verbatim (it is committed as shown); its fence is longer than any
        # backtick run in it, and marker text in it is not the body's last line.
        lines = finding.end_line - finding.start_line + 1
        fix = finding.replacement.split("\n")
        block = code_block(fix, fence(lines), indent="")
        if runs_as_command(fix):
            # GitLab would run it as a quick action (its reading of a block can end at a
            # fence line inside it): the fix cannot be quoted verbatim.
            parts += ["", "_The suggested fix has a line starting with `/`, which GitLab "
                          "reads as a command in a note; it is not shown._"]
        elif len("\n".join([*parts, "", block, *tail])) <= limit - _MARGIN:
            parts += ["", block]
        else:
            parts += ["", "_A suggested fix is too long for a comment; it is in the run's "
                          "report files (SARIF, JSON)._"]
    return "\n".join([*parts, *tail])


def resolved_body(body: str, head_sha: str) -> str:
    """An earlier comment whose finding is gone (REST cannot resolve a thread: it is said)."""
    marked = _with_state(body, ";resolved")
    return f"✅ **Resolved** in `{head_sha[:12]}`: reviewbot no longer reports this.\n\n{marked}"


def dismissed_body(body: str, login: str, reason: str, *, change: str) -> str:
    """A finding's comment dismissed by someone with write access, with their reason."""
    why = f": {inert_line(reason)}" if reason else " (no reason given)"
    return (f"🚫 **Dismissed** by {inert_line('@' + login)}{why}. reviewbot will not post it "
            f"again on this {change}.\n\n{_with_state(body, ';dismissed')}")


def _with_state(body: str, state: str) -> str:
    """The body with its marker (the last line, only) in the new state."""
    match = finding_marker(body)
    if match is None:
        return body
    rule = f" rule={match['rule']}" if match["rule"] else ""
    head = body[:len(body) - len(match[0])]
    return f"{head}<!-- reviewbot:fp={match['fp']}{state}{rule} -->"


def reply_body(text: str, to_comment: int) -> str:
    """An answer to someone's comment, marked with the comment it answers."""
    return f"{text}\n\n<!-- reviewbot:reply to={to_comment} -->"


def review_body(count: int, nonce: str) -> str:
    return (f"reviewbot: {counted(count, 'finding')} on the lines below; the summary comment "
            f"has the rest.\n\n<!-- reviewbot:review {nonce} -->")


def explanation(finding: Finding, data: ReportInput, *, change: str) -> str:
    """Why a finding is a problem, without a model: the rule's reasoning, the code it is
    about and the fix; `change`: what the forge calls the change."""
    parts = [f"{ICON[finding.severity]} **{finding.severity}** {inert_line(finding.title)} "
             f"(`{finding.rule_id}`), {inline_code(display_path(finding.file_path))} "
             f"line {finding.start_line}" +
             (f"-{finding.end_line}" if finding.end_line != finding.start_line else ""), ""]
    rule = data.rules.get(finding.rule_id)
    if finding.source == "model":
        parts += ["Found by the review model; its quoted code was checked against the diff."]
    elif rule is not None:
        parts += [f"**Why:** {inert(rule.rationale)}"]
    parts += ["", f"**What:** {inert(finding.message)}"]
    code = data.code_of(finding)
    if code:
        parts += ["", "**The code:**", quoted_code(code)]
    if finding.suggestion:
        parts += ["", f"**Fix:** {inert(finding.suggestion)}"]
    parts += ["", f"To dismiss it on this {change}: reply `/reviewbot ignore <reason>`."]
    return "\n".join(parts)


@dataclass(frozen=True)
class SummaryFacts:
    head_sha: str
    # What the forge calls the change ("pull request").
    change: str
    posted: int
    already_posted: int
    resolved: int
    elsewhere: Sequence[Placed]
    notes: Sequence[str] = ()
    # Findings someone dismissed on this pull request (not posted again).
    dismissed: int = 0
    # Who resolved the dismissed findings' threads, when the forge says.
    dismissed_by: Sequence[str] = ()
    # Findings below the inline level: listed in the summary only, collapsed.
    below_level: Sequence[Placed] = ()
    inline_level: str = "warning"
    # Where every finding is, and where every changed file is listed ("": nowhere else).
    reports: str = ("the job summary, the SARIF file (the action's `sarif` output, for code "
                    "scanning) and the run's artifacts")
    files_listed: str = "the job summary"


def summary_body(data: ReportInput, facts: SummaryFacts, limit: int = MAX_BODY) -> str:
    """The summary comment, within `limit` characters: the findings not on a line are listed
    most severe first as far as they fit, and the rest counted, with where to find them."""
    report = data.report
    counts = report.stats.findings
    stats = report.stats
    lines = ["## reviewbot", ""]
    lines.append(f"Reviewed `{facts.head_sha[:12]}` (the whole {facts.change}): "
                 f"{counted(stats.units, 'unit')} in {counted(stats.files, 'file')} "
                 f"(+{stats.added_lines} -{stats.removed_lines}).")
    lines += ["", "| error | warning | info |", "| ---: | ---: | ---: |",
              f"| {counts.get('error', 0)} | {counts.get('warning', 0)} | "
              f"{counts.get('info', 0)} |", ""]
    quietened = markdown_lines(report, LISTED_BY_A_RUN)
    if quietened:
        lines += [*quietened, ""]
    lines += [*_walkthrough(data, limit // 2, facts.files_listed), ""]
    by = ", ".join(inline_code(login) for login in facts.dismissed_by)
    dismissed = (f", {facts.dismissed} dismissed" + (f" (threads resolved by {by})" if by else "")
                 if facts.dismissed else "")
    lines.append(f"Inline: {counted(facts.posted, 'new comment')}, {facts.already_posted} already "
                 f"posted, {counted(facts.resolved, 'earlier comment')} resolved{dismissed}.")
    lines += [f"> {inert_line(note)}" for note in facts.notes]
    marker = ["", f"<!-- reviewbot:summary head={facts.head_sha} -->"]
    below = _below_level(facts)
    if facts.elsewhere:
        lines += ["", "### Not on a line of the diff", ""]
        # What is below the inline level needs room for its heading and its end.
        budget = limit - _MARGIN - len("\n".join([*lines, *below, *marker]))
        lines += _listed(facts.elsewhere, budget, facts.reports)
    if below:
        budget = limit - _MARGIN - len("\n".join([*lines, *below, *marker]))
        lines += [*below[:-2], *_listed(facts.below_level, budget, facts.reports), *below[-2:]]
    return "\n".join([*lines, *_quietened(report, limit - _MARGIN - len(
        "\n".join([*lines, *marker]))), *marker])


def _quietened(report: RunReport, budget: int) -> list[str]:
    """Every quietened finding, collapsed, when the comment holds the list; else where it
    is."""
    details = markdown_details(report)
    if not details:
        return []
    if len("\n".join(details)) < budget:
        return ["", *details]
    return ["", f"_The {counted(len(report.quieted), 'quietened finding')} do not fit in a "
                "comment: each is in the run's JSON report._"]


def _below_level(facts: SummaryFacts) -> list[str]:
    """The collapsed section's frame for the findings below the inline level (its items go
    between its first lines and its last two); empty when there are none."""
    if not facts.below_level:
        return []
    count = len(facts.below_level)
    levels = " and ".join(dict.fromkeys(p.finding.severity for p in facts.below_level))
    # Blank lines around the list: GitHub renders Markdown inside <details> only then.
    noun = "finding" if count == 1 else "findings"
    return ["", "<details>", f"<summary>{count} {levels} {noun} below the inline level "
            f"({facts.inline_level}): listed here, not on their lines</summary>", "", "",
            "</details>"]


def _listed(placed: Sequence[Placed], budget: int, reports: str) -> list[str]:
    """Findings as far as they fit in the budget, most severe first, then the rest counted."""
    items = [_summary_item(p) for p in placed]
    shown = _fitting(items, budget)
    return items[:shown] + ([_the_rest(placed[shown:], reports)] if shown < len(items) else [])


def _walkthrough(data: ReportInput, budget: int, files_listed: str) -> list[str]:
    """The walkthrough within half the body, whole rows (a pull request of many files with
    long names must not push the summary past GitHub's limit)."""
    lines = walkthrough(data)
    shown = _fitting(lines, budget)
    if shown == len(lines):
        return lines
    rest = f"_{len(lines) - shown} more lines of the walkthrough do not fit in a comment"
    return [*lines[:shown], "", f"{rest}: {files_listed} has every file._" if files_listed
            else f"{rest}._"]


def _fitting(items: Sequence[str], budget: int) -> int:
    """How many items fit in the budget (one line each), keeping room for the last line."""
    used, room = 0, budget - 300
    for index, item in enumerate(items):
        used += len(item) + 1
        if used > room:
            return index
    return len(items)


def _the_rest(rest: Sequence[Placed], reports: str) -> str:
    by_severity = {level: sum(1 for p in rest if p.finding.severity == level)
                   for level in ("error", "warning", "info")}
    counted = ", ".join(f"{n} {level}" for level, n in by_severity.items() if n)
    return f"- … and {len(rest)} more not shown here ({counted}): every finding is in {reports}."


def _summary_item(placed: Placed) -> str:
    f = placed.finding
    span = f"L{f.start_line}" if f.start_line == f.end_line else f"L{f.start_line}-L{f.end_line}"
    why = f"; {placed.reason}" if placed.reason else ""
    return (f"- {ICON[f.severity]} **{f.severity}** {inline_code(display_path(f.file_path))} "
            f"{span} {inert_line(f.title)} (`{f.rule_id}`{why}): {inert_line(f.message)}")
