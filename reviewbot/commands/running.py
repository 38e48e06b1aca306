"""What every reviewing command sets up around a run and does after it: the events and their
progress display, errors said on the event stream, the model session, notices on stderr,
and the report printed with the exit code it decides."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING

from reviewbot.errors import EXIT_CLEAN, EXIT_FINDINGS, EXIT_INTERNAL, ReviewbotError, UsageError
from reviewbot.text.terminal import printable

if TYPE_CHECKING:
    from reviewbot.config import Config
    from reviewbot.model import ModelSession
    from reviewbot.progress.events import Events
    from reviewbot.report import ReportInput
    from reviewbot.run.pipeline import ReviewOutcome
    from reviewbot.text.redaction import Redactor


@contextmanager
def errors_as_events(events: Events) -> Iterator[None]:
    """A run that fails says so on the event stream too (then the handler in main reports)."""
    try:
        yield
    except ReviewbotError as exc:
        events.emit("error", str(exc), exit_code=exc.exit_code)
        raise
    except Exception as exc:
        events.emit("error", f"internal error: {type(exc).__name__}", exit_code=EXIT_INTERNAL)
        raise


def run_events(args: argparse.Namespace, redactor: Redactor) -> Events:
    """The run's emitter: notices on stderr, and `--events` as JSON lines if asked."""
    from reviewbot.progress.events import Events, jsonl_writer

    events = Events(redact=lambda text: redactor.text(text, literal_bare_values=False))
    events.subscribe(lambda event: notice(event.message) if event.kind == "notice" else None)
    if args.events == "-":
        events.subscribe(jsonl_writer(sys.stdout))
    elif args.events:
        try:
            handle = args.events.open("a", encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--events {args.events}: {exc.strerror}.") from exc
        events.subscribe(jsonl_writer(handle))
    return events


def progress(events: Events, args: argparse.Namespace) -> AbstractContextManager[None]:
    from reviewbot.progress.display import progress_display

    return progress_display(events, enabled=not args.quiet)


def model_session(config: Config, events: Events, redactor: Redactor,
             mode: str) -> ModelSession | None:
    """A session with the configured model; None (offline) when no model is configured."""
    if not config.model.name:
        return None  # the hook's usual case: nothing of the model layer is imported
    from reviewbot.model import open_session

    return open_session(config, notify=events.notice, redactor=redactor, mode=mode)


def notice(message: str) -> None:
    # Notices name the reviewed repository's files and quote servers: no escape sequence
    # or forged line from either reaches the terminal.
    print(f"reviewbot: {printable(message)}", file=sys.stderr)


def report_input(outcome: ReviewOutcome, args: argparse.Namespace) -> ReportInput:
    from reviewbot.report import ReportInput
    from reviewbot.review.meta import model_rule_metadata
    from reviewbot.rules import rule_metadata

    written = outcome.run_dir.problem is None  # never "artifacts in X" when they are not
    return ReportInput(report=outcome.report, run_dir=outcome.run_dir.path if written else None,
                       code=outcome.code,
                       rules={**rule_metadata(), **model_rule_metadata()},
                       verbose=args.verbose, quiet=args.quiet, color=sys.stdout.isatty())


def print_report(outcome: ReviewOutcome, config: Config, args: argparse.Namespace,
                  redactor: Redactor, events: Events) -> int:
    from reviewbot.report import render
    from reviewbot.run.pipeline import fails, model_findings_block

    data = report_input(outcome, args)
    # The report quotes file names and code: it leaves through the redaction pass too.
    output = redactor.text(render(args.format, data), literal_bare_values=False)
    if args.events == "-":  # stdout carries events only: the report is the last of them
        events.emit("report", f"the {args.format} report", format=args.format, report=output)
    elif output:
        print(output)
    blocking = model_findings_block(config, outcome.request)
    failed = fails(outcome.report.findings, config.fail_level, blocking)
    advisory = [f for f in outcome.report.findings
                if f.source == "model" and fails((f,), config.fail_level)]
    if advisory and not blocking:
        notice(f"{len(advisory)} model finding(s) at or above {config.fail_level} did not "
                f"decide the exit code: model findings are advisory in "
                f"{outcome.request.mode} mode (model_findings_block = true lets them block).")
    return EXIT_FINDINGS if failed else EXIT_CLEAN
