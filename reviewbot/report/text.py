"""`--format text`: findings grouped by file, for a terminal (or a hook's log).

Colour only on a terminal and never with NO_COLOR set; plain text otherwise. The lines are
built once as styled segments: plain output joins them (rich is not even imported, which a
hook's log never needs), colour output hands them to rich.
"""

from __future__ import annotations

import io
import os
from itertools import groupby
from pathlib import Path

from reviewbot.report import (
    ReportInput,
    clip_lines,
    display_lines,
    display_path,
    model_line,
    nothing_to_review,
)
from reviewbot.report.quietened import text_lines
from reviewbot.schema.findings import Finding
from reviewbot.schema.runs import RunReport
from reviewbot.schema.units import IndexUnit
from reviewbot.text.words import counted

_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
_WIDTH = 100
# A line: (text, rich style) segments.
Line = list[tuple[str, str]]


class TextReporter:
    def render(self, data: ReportInput) -> str:
        lines = _lines(data)
        if data.color and "NO_COLOR" not in os.environ:
            return _coloured(lines)
        return "\n".join("".join(text for text, _ in line) for line in lines).rstrip("\n")


def _lines(data: ReportInput) -> list[Line]:
    report = data.report
    empty = nothing_to_review(report)
    if empty is not None:
        return [] if data.quiet else [[(f"reviewbot: {empty}.", "")], *_quietened(data)]
    lines: list[Line] = []
    if data.verbose:
        lines.append([(f"reviewbot: {counted(len(report.units), 'unit')} in "
                        f"{counted(report.stats.files, 'file')}",
                       "")])
        lines += [_unit_line(unit) for unit in report.units]
        lines.append([])
    for path, findings in groupby(report.findings, key=lambda f: f.file_path):
        lines.append([(display_path(path), "bold underline")])
        for finding in findings:
            lines += _finding_lines(data, finding)
        lines.append([])
    lines += _quietened(data)
    if not data.quiet:
        lines += [[(text, "")] for text in summary_line(report, data.run_dir).split("\n")]
    return lines


def _quietened(data: ReportInput) -> list[Line]:
    """What was quietened: the change's suppressed errors always (like a finding), the
    counts and the new files checked for secrets only unless quiet."""
    said = text_lines(data.report)
    if data.quiet:
        said = [line for line in said if line.startswith("quietened by the change")]
    return [[(line, "magenta" if line.startswith("quietened by the change") else "dim")]
            for line in said]


def _finding_lines(data: ReportInput, finding: Finding) -> list[Line]:
    head: Line = [(f"{finding.start_line:>5}  ", ""),
                  (f"{finding.severity:<8}", _STYLE[finding.severity]),
                  (f"{display_path(finding.title)}  ", ""),
                  (f"[{display_path(finding.rule_id)}]", "dim")]
    if not finding.in_diff:
        head.append(("  (outside the changed lines)", "dim"))
    if finding.base_line is not None:
        head.append((f"  (removed line {finding.base_line} of the base)", "dim"))
    lines = [head]
    lines += [[(f"       │ {display_path(line.strip())}", "dim")]
              for line in data.code_of(finding)[:3]]
    lines += [[(f"         {line}", "")] for line in display_lines(finding.message)]
    if finding.suggestion:
        lines += [[(f"         {'fix: ' if n == 0 else '     '}{line}", "green")]
                  for n, line in enumerate(display_lines(finding.suggestion))]
    if finding.replacement is not None:
        lines.append([("         replace with:", "green")])
        lines += [[(f"       + {display_path(line)}", "green")]
                  for line in clip_lines(finding.replacement)]
    return lines


def _unit_line(unit: IndexUnit) -> Line:
    where = unit.line_numbers.new_compact or unit.line_numbers.old_compact or "whole file"
    renamed = f" (from {display_path(unit.old_path)})" if unit.old_path else ""
    line: Line = [(f"  {display_path(unit.file_path)}{renamed} {where}  {unit.patch_type} "
                   f"{unit.language} +{unit.metrics.added_lines} -{unit.metrics.removed_lines}",
                   "")]
    if unit.tags:
        line.append((f" [{', '.join(unit.tags)}]", "magenta"))
    line.append((f"  {unit.agent_decision.priority}/{unit.rule_context_level}  "
                 f"{unit.unit_id}", "dim"))
    return line


def _coloured(lines: list[Line]) -> str:
    from rich.console import Console
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=_WIDTH, highlight=False,
                      soft_wrap=True)
    for line in lines:
        text = Text()
        for segment, style in line:
            text.append(segment, style=style or None)
        console.print(text)
    return buffer.getvalue().rstrip("\n")


def summary_line(report: RunReport, run_dir: Path | None) -> str:
    counts = report.stats.findings
    found = ", ".join(f"{counts.get(level, 0)} {level}" for level in ("error", "warning", "info"))
    where = f"; artifacts in {run_dir}" if run_dir else ""
    line = (f"findings: {found} in {counted(report.stats.units, 'unit')} of "
            f"{counted(report.stats.files, 'file')}{_elsewhere(report)} "
            f"({report.stats.duration_ms} ms){where}")
    model = model_line(report)
    return f"{model}\n{line}" if model else line


def _elsewhere(report: RunReport) -> str:
    """The files with findings the change's units do not cover (a secret a later pushed
    commit removed again), so that the count does not read as every finding's file."""
    reviewed = {unit.file_path for unit in report.units}
    other = [f for f in report.findings if f.file_path not in reviewed]
    if not other:
        return ""
    files = counted(len({f.file_path for f in other}), "more file")
    history = all(f.rule_id == "secrets.in-history" for f in other)
    return f", and {files} of the pushed history" if history else f", and {files}"
