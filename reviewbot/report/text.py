"""`--format text`: findings grouped by file, for a terminal (or a hook's log).

Colour only on a terminal and never with NO_COLOR set; plain text otherwise.
"""

from __future__ import annotations

import io
import os
from itertools import groupby
from pathlib import Path

from rich.console import Console
from rich.text import Text

from reviewbot.report import ReportInput, clip_lines, display_path, model_line
from reviewbot.schema import Finding, IndexUnit, RunReport

_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
_WIDTH = 100


class TextReporter:
    def render(self, data: ReportInput) -> str:
        color = data.color and "NO_COLOR" not in os.environ
        buffer = io.StringIO()
        console = Console(file=buffer, force_terminal=color, no_color=not color,
                          width=_WIDTH, highlight=False, soft_wrap=True)
        report = data.report
        if not report.units:
            if not data.quiet:
                console.print("reviewbot: nothing to review (the change is empty).")
            return buffer.getvalue().rstrip("\n")
        if data.verbose:
            console.print(f"reviewbot: {len(report.units)} units in {report.stats.files} files")
            for unit in report.units:
                console.print(_unit_line(unit))
            console.print()
        for path, findings in groupby(report.findings, key=lambda f: f.file_path):
            console.print(Text(display_path(path), style="bold underline"))
            for finding in findings:
                _print_finding(console, data, finding)
            console.print()
        if not data.quiet:
            console.print(summary_line(report, data.run_dir))
        return buffer.getvalue().rstrip("\n")


def _print_finding(console: Console, data: ReportInput, finding: Finding) -> None:
    head = Text(f"{finding.start_line:>5}  ")
    head.append(f"{finding.severity:<8}", style=_STYLE[finding.severity])
    head.append(f"{finding.title}  ")
    head.append(f"[{finding.rule_id}]", style="dim")
    if not finding.in_diff:
        head.append("  (outside the changed lines)", style="dim")
    console.print(head)
    for line in data.code_of(finding)[:3]:
        console.print(Text(f"       │ {line.strip()}", style="dim"))
    console.print(Text(f"         {finding.message}"))
    if finding.suggestion:
        console.print(Text(f"         fix: {finding.suggestion}", style="green"))
    if finding.replacement is not None:
        console.print(Text("         replace with:", style="green"))
        for line in clip_lines(finding.replacement):
            console.print(Text(f"       + {line}", style="green"))


def _unit_line(unit: IndexUnit) -> Text:
    where = unit.line_numbers.new_compact or unit.line_numbers.old_compact or "whole file"
    renamed = f" (from {unit.old_path})" if unit.old_path else ""
    line = Text(f"  {unit.file_path}{renamed} {where}  {unit.patch_type} {unit.language} "
                f"+{unit.metrics.added_lines} -{unit.metrics.removed_lines}")
    if unit.tags:
        line.append(f" [{', '.join(unit.tags)}]", style="magenta")
    line.append(f"  {unit.agent_decision.priority}/{unit.rule_context_level}  {unit.unit_id}",
                style="dim")
    return line


def summary_line(report: RunReport, run_dir: Path | None) -> str:
    counts = report.stats.findings
    found = ", ".join(f"{counts.get(level, 0)} {level}" for level in ("error", "warning", "info"))
    where = f"; artifacts in {run_dir}" if run_dir else ""
    line = (f"findings: {found} in {report.stats.units} units of {report.stats.files} files "
            f"({report.stats.duration_ms} ms){where}")
    model = model_line(report)
    return f"{model}\n{line}" if model else line
