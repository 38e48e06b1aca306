"""`--format text`: the units of the change and the findings, for a terminal."""

from __future__ import annotations

from pathlib import Path

from reviewbot.schema import Finding, IndexUnit, RunReport


class TextReporter:
    def render(self, report: RunReport, run_dir: Path | None) -> str:
        if not report.units:
            return "reviewbot: nothing to review (the change is empty)."
        lines = [f"reviewbot: {len(report.units)} units in {report.stats.files} files"]
        lines += [_unit_line(unit) for unit in report.units]
        if report.findings:
            lines.append("")
            lines += [_finding_line(f) for f in report.findings]
        lines.append("")
        lines.append(_summary_line(report, run_dir))
        return "\n".join(lines)


def _unit_line(unit: IndexUnit) -> str:
    where = unit.line_numbers.new_compact or unit.line_numbers.old_compact or "whole file"
    renamed = f" (from {unit.old_path})" if unit.old_path else ""
    tags = f" [{', '.join(unit.tags)}]" if unit.tags else ""
    return (f"  {unit.file_path}{renamed} {where}  {unit.patch_type} {unit.language} "
            f"+{unit.metrics.added_lines} -{unit.metrics.removed_lines}{tags}  {unit.unit_id}")


def _finding_line(finding: Finding) -> str:
    span = (f"{finding.start_line}" if finding.start_line == finding.end_line
            else f"{finding.start_line}-{finding.end_line}")
    return (f"{finding.file_path}:{span}: {finding.severity}: {finding.title} "
            f"[{finding.rule_id}]\n    {finding.message}")


def _summary_line(report: RunReport, run_dir: Path | None) -> str:
    counts = report.stats.findings
    found = ", ".join(f"{counts.get(level, 0)} {level}" for level in ("error", "warning", "info"))
    where = f"; artifacts in {run_dir}" if run_dir else ""
    return f"findings: {found} ({report.stats.duration_ms} ms){where}"
