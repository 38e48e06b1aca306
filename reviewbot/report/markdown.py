"""`--format markdown`: a summary for a pull request comment or a job summary."""

from __future__ import annotations

from itertools import groupby

from reviewbot.report import ReportInput, clip_lines, display_path, nothing_to_review
from reviewbot.report.markup import code_block, inert, inert_line, inline_code, quoted_code
from reviewbot.report.quietened import markdown_details, markdown_lines
from reviewbot.report.walkthrough import walkthrough
from reviewbot.schema.findings import Finding
from reviewbot.text.terminal import visible
from reviewbot.text.words import counted

_ICON = {"error": "🔴", "warning": "🟠", "info": "🔵"}


class MarkdownReporter:
    def render(self, data: ReportInput) -> str:
        # Titles, messages and code come from the repository and the model: nothing in
        # them may run in a terminal or reorder a line (GitHub's job summary shows it raw).
        return visible(self._render(data))

    def _render(self, data: ReportInput) -> str:
        report = data.report
        counts = report.stats.findings
        lines = ["## reviewbot", ""]
        empty = nothing_to_review(report)
        quietened = markdown_lines(report)
        if empty is not None:
            return "\n".join([*lines, f"{empty[0].upper()}{empty[1:]}.",
                              *(["", *quietened] if quietened else [])])
        lines.append(f"Reviewed {counted(report.stats.units, 'unit')} in "
                     f"{counted(report.stats.files, 'file')} "
                     f"(+{report.stats.added_lines} -{report.stats.removed_lines}).")
        lines.append("")
        lines.append("| error | warning | info |")
        lines.append("| ---: | ---: | ---: |")
        lines.append(f"| {counts.get('error', 0)} | {counts.get('warning', 0)} | "
                     f"{counts.get('info', 0)} |")
        if quietened:
            lines += ["", *quietened]
        lines += ["", *walkthrough(data)]
        details = markdown_details(report)
        if not report.findings:
            return "\n".join([*lines, "", "No findings.", *(["", *details] if details else [])])
        lines += ["", "### Findings"]
        for path, findings in groupby(report.findings, key=lambda f: f.file_path):
            lines += ["", f"#### {inline_code(display_path(path))}", ""]
            lines += [_item(data, f) for f in findings]
        return "\n".join([*lines, *(["", *details] if details else [])])


def _item(data: ReportInput, finding: Finding) -> str:
    span = (f"L{finding.start_line}" if finding.start_line == finding.end_line
            else f"L{finding.start_line}-L{finding.end_line}")
    outside = " (outside the changed lines)" if not finding.in_diff else ""
    # Titles, messages and code come from the repository and the model: inert, as on a
    # pull request (a job summary renders Markdown and HTML too).
    text = (f"- {_ICON[finding.severity]} **{finding.severity}** {span}{outside} "
            f"{inert_line(finding.title)} (`{finding.rule_id}`): {inert_line(finding.message)}")
    code = data.code_of(finding)
    if code:
        text += "\n\n" + quoted_code(code, indent="  ")
    if finding.suggestion:
        text += "\n\n  Fix: " + inert(finding.suggestion).replace("\n", "\n  ")
    if finding.replacement is not None:
        # A ```suggestion block is committable on GitHub: only ever the whole fix.
        shown = clip_lines(finding.replacement)
        whole = shown == finding.replacement.split("\n")
        text += "\n\n" + code_block(shown, "suggestion" if whole else "")
    return text
