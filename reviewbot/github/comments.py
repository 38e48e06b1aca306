"""The text of what reviewbot posts on a pull request: an inline comment per finding, and one
summary comment. Each carries a hidden marker, so a later run finds its own comments: the
finding's fingerprint, or the summary with the head commit it reviewed."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from reviewbot.report import ReportInput, clip_lines, display_path, model_line
from reviewbot.report.markdown import code_block, inline_code
from reviewbot.schema import Finding
from reviewbot.terminal import visible

ICON = {"error": "🔴", "warning": "🟠", "info": "🔵"}
FINGERPRINT = re.compile(r"<!-- reviewbot:fp=(?P<fp>[0-9a-f]+)(?P<resolved>;resolved)? -->")
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
    if finding.replacement is not None:
        parts += ["", code_block(clip_lines(finding.replacement), "suggestion", indent="")]
    source = "the review model (checked against the diff)" if finding.source == "model" \
        else "a rule"
    parts += ["", f"<sub>reviewbot, from {source}</sub>", f"<!-- reviewbot:fp={fingerprint} -->"]
    return "\n".join(parts)


def resolved_body(body: str, head_sha: str) -> str:
    """An earlier comment whose finding is gone (REST cannot resolve a thread: it is said)."""
    marked = FINGERPRINT.sub(lambda m: f"<!-- reviewbot:fp={m.group('fp')};resolved -->", body)
    return f"✅ **Resolved** in `{head_sha[:12]}`: reviewbot no longer reports this.\n\n{marked}"


@dataclass(frozen=True)
class SummaryFacts:
    head_sha: str
    posted: int
    already_posted: int
    resolved: int
    elsewhere: Sequence[Placed]
    # "since <sha>" when only the commits since the last review were reviewed.
    scope: str = ""
    notes: Sequence[str] = ()


def summary_body(data: ReportInput, facts: SummaryFacts) -> str:
    report = data.report
    counts = report.stats.findings
    stats = report.stats
    lines = ["## reviewbot", ""]
    scope = f" (the commits {facts.scope})" if facts.scope else ""
    lines.append(f"Reviewed `{facts.head_sha[:12]}`{scope}: {stats.units} units in "
                 f"{stats.files} files (+{stats.added_lines} -{stats.removed_lines}).")
    lines += ["", "| error | warning | info |", "| ---: | ---: | ---: |",
              f"| {counts.get('error', 0)} | {counts.get('warning', 0)} | "
              f"{counts.get('info', 0)} |", ""]
    model = model_line(report)
    if model:
        lines += [model.replace("model (", "Model (", 1) + ".", ""]
    lines.append(f"Inline: {facts.posted} new comments, {facts.already_posted} already posted, "
                 f"{facts.resolved} earlier comments resolved.")
    lines += [f"> {note}" for note in facts.notes]
    if facts.elsewhere:
        lines += ["", "### Not on a line of the diff", ""]
        lines += [_summary_item(placed) for placed in facts.elsewhere]
    lines += ["", f"<!-- reviewbot:summary head={facts.head_sha} -->"]
    return "\n".join(lines)


def _summary_item(placed: Placed) -> str:
    f = placed.finding
    span = f"L{f.start_line}" if f.start_line == f.end_line else f"L{f.start_line}-L{f.end_line}"
    return (f"- {ICON[f.severity]} **{f.severity}** {inline_code(display_path(f.file_path))} "
            f"{span} {neutral(f.title)} (`{f.rule_id}`; {placed.reason}): {neutral(f.message)}")
