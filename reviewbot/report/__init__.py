"""Step 9: reporters, one module per output format, listed in one registry."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from reviewbot.text.words import counted

if TYPE_CHECKING:  # the command line imports this package for FORMATS: no records needed
    from reviewbot.schema.findings import Finding, RuleMeta
    from reviewbot.schema.runs import ModelStats, RunReport

# Quoted code stays short whatever the file (a minified line can be megabytes).
MAX_QUOTED_LINES = 10
MAX_QUOTED_CHARS = 200


@dataclass(frozen=True)
class ReportInput:
    """What a reporter renders: the run's report, where its artifacts are, the rules'
    descriptions, and the new-side code of each finding's lines (never a secret's line)."""

    report: RunReport
    run_dir: Path | None = None
    code: Mapping[tuple[str, int], str] = field(default_factory=dict)
    rules: Mapping[str, RuleMeta] = field(default_factory=dict)
    verbose: bool = False
    quiet: bool = False
    # Colour for the text format; the CLI decides (a terminal, and no NO_COLOR).
    color: bool = False

    def code_of(self, finding: Finding) -> list[str]:
        last = min(finding.end_line, finding.start_line + MAX_QUOTED_LINES - 1)
        return [clip_code(self.code[(finding.file_path, n)])
                for n in range(finding.start_line, last + 1)
                if (finding.file_path, n) in self.code]


def nothing_to_review(report: RunReport) -> str | None:
    """What to say instead of a report when there is nothing in it; None when there is."""
    if report.units or report.findings:
        return None
    ignored = report.stats.ignored_units
    if ignored:
        return (f"nothing to review: the config's `ignore` names every changed file "
                f"({counted(ignored, 'unit')}; checked for secrets only, and none was found)")
    untracked = report.stats.untracked_files
    if untracked:
        left = counted(untracked, "untracked file")
        return (f"nothing to review in the tracked files, and {left} not reviewed: "
                "`--include-untracked` reviews them too (or `git add` them)")
    return "nothing to review (the change is empty)"


def model_line(report: RunReport) -> str:
    """What the model did, in one line (empty offline)."""
    model = report.stats.model
    if model.mode == "offline":
        return ""
    skipped = ", ".join(f"{n} {reason}" for reason, n in sorted(model.skipped_units.items()))
    cost = f", cost {model.cost:.4f}" if model.cost is not None else ""
    partial = ", ".join(f"{n} {bound}" for bound, n in sorted(model.partial_units.items()))
    total = model.reviewed_units + sum(model.skipped_units.values())
    return (f"model ({model.mode}): {model.reviewed_units} of {counted(total, 'unit')} reviewed"
            + (f" ({model.cached_units} from the cache)" if model.cached_units else "")
            + (f", in part: {partial}" if partial else "")
            + (f", skipped: {skipped}" if skipped else "")
            + (f", {model.clipped_units} with clipped context" if model.clipped_units else "")
            + f"; {model.calls} calls, {model.tokens_in:,} tokens in, "
            f"{model.tokens_out:,} out ({model.cached_tokens:,} cached){cost}"
            + _per_unit(model))


def _per_unit(model: ModelStats) -> str:
    """What one reviewed unit cost: the model's time on its review, and tokens."""
    fresh = model.reviewed_units - model.cached_units
    if fresh <= 0 or not model.review_seconds:
        return ""
    tokens = (model.tokens_in + model.tokens_out) // max(fresh, 1)
    return f"; {model.review_seconds / fresh:.1f} s and {tokens:,} tokens per unit reviewed"


def clip_lines(text: str) -> list[str]:
    """A suggestion's lines as a report quotes them: clipped like any quoted code."""
    lines = text.split("\n")
    shown = [clip_code(line) for line in lines[:MAX_QUOTED_LINES * 2]]
    if len(lines) > len(shown):
        shown.append(f"... ({len(lines) - len(shown)} more lines)")
    return shown


def clip_code(line: str) -> str:
    if len(line) <= MAX_QUOTED_CHARS:
        return line
    return f"{line[:MAX_QUOTED_CHARS]}… ({len(line) - MAX_QUOTED_CHARS:,} more characters)"


_CONTROL = {code: f"\\x{code:02x}" for code in (*range(32), *range(0x7f, 0xa0))} | {
    code: f"\\u{code:04x}" for code in (0x2028, 0x2029, *range(0x202a, 0x202f),
                                       *range(0x2066, 0x206a))} | {
    ord("\n"): "\\n", ord("\t"): "\\t", ord("\r"): "\\r"}


def display_path(path: str) -> str:
    """A path on one line: control characters (a newline in a file name), C1 controls and
    bidi overrides as visible escapes."""
    return path.translate(_CONTROL)


def display_lines(text: str) -> list[str]:
    """Text from the run (a message, a line of code) for a terminal: one entry per line,
    each with its control characters and bidi overrides as visible escapes, so nothing from
    the reviewed repository, a model or a tool runs an escape sequence or reorders a line."""
    return [display_path(line) for line in text.splitlines()] or [""]


class Reporter(Protocol):
    def render(self, data: ReportInput) -> str:
        """The whole output for a finished run, ready to print."""
        ...


def _registry() -> dict[str, Reporter]:
    from reviewbot.report import codequality, json_report, markdown, rdjson, sarif, text

    return {
        "text": text.TextReporter(),
        "json": json_report.JsonReporter(),
        "markdown": markdown.MarkdownReporter(),
        "sarif": sarif.SarifReporter(),
        "rdjson": rdjson.RdjsonReporter(),
        "codequality": codequality.CodequalityReporter(),
    }


FORMATS = ("text", "json", "markdown", "sarif", "rdjson", "codequality")


def render(name: str, data: ReportInput) -> str:
    return _registry()[name].render(data)
