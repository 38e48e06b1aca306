"""`reviewbot` command line, with the one top-level handler that maps errors to exit codes.

Exit codes: 0 no finding at or above the fail level, 1 findings at or above it,
2 usage or configuration error, 3 internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import traceback
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, cast

from reviewbot import __version__
from reviewbot.config import SEVERITIES, Config, load_config
from reviewbot.errors import ReviewbotError, UsageError
from reviewbot.git import GitRepo, open_repo
from reviewbot.report import FORMATS
from reviewbot.schema import ChangeRequest, Mode, Severity

if TYPE_CHECKING:
    from reviewbot.model import StructuredCaller

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
DEFAULT_OUTPUT_DIR = Path(".reviewbot/runs")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reviewbot",
        description="Review a git change: staged, working tree, or a pull request.",
    )
    parser.add_argument("--version", action="version", version=f"reviewbot {__version__}")
    parser.add_argument("--mode", choices=("staged", "working", "pr"), default="staged",
                        help="what to review (default: staged)")
    parser.add_argument("--base", metavar="REV", help="pr mode: the branch merged into")
    parser.add_argument("--head", metavar="REV", help="pr mode: the change (default: HEAD)")
    parser.add_argument("--repo", metavar="PATH", type=Path, default=Path(),
                        help="repository to review (default: the current directory)")
    parser.add_argument("--pre-push", action="store_true",
                        help="pr mode: take base and head from pre-commit's pre-push "
                             "environment (PRE_COMMIT_FROM_REF, PRE_COMMIT_TO_REF)")
    parser.add_argument("--include-untracked", action="store_true",
                        help="working mode: also review untracked files")
    parser.add_argument("--format", choices=FORMATS, default="text",
                        help="output format (default: text)")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="text format: findings only, no summary or progress")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="text format: also list every unit with its tags and rating")
    parser.add_argument("--output-dir", metavar="DIR", type=Path,
                        help="where run artifacts go (default: .reviewbot/runs in the repo)")
    parser.add_argument("--fail-level", choices=SEVERITIES,
                        help="lowest severity that makes the exit code 1 (default: error)")
    parser.add_argument("--offline", action="store_true",
                        help="never call a model, even if one is configured")
    parser.add_argument("--list-rules", action="store_true",
                        help="print every rule with its id, severity and category, and exit")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["explain"]:
        from reviewbot.explain import build_explain_parser, explain

        args = build_explain_parser().parse_args(argv[1:])
        command: Callable[[argparse.Namespace], int] = explain
    else:
        args = build_parser().parse_args(argv)
        command = _list_rules if args.list_rules else _review
    try:
        return command(args)
    except ReviewbotError as exc:
        print(f"reviewbot: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("reviewbot: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`reviewbot ... | head`): not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_CLEAN
    except Exception as exc:  # the one place internal errors become exit code 3
        log = _write_traceback(getattr(args, "output_dir", None), getattr(args, "repo", Path()))
        print(f"reviewbot: internal error: {type(exc).__name__}: {exc} "
              f"(traceback in {log}; please report it)", file=sys.stderr)
        return EXIT_INTERNAL


def _review(args: argparse.Namespace) -> int:
    # Imported here so `reviewbot --help` stays instant.
    from reviewbot.pipeline import fails, run_review
    from reviewbot.progress import progress_display
    from reviewbot.report import ReportInput, render

    repo = open_repo(args.repo)
    config = _with_flags(load_config(repo.root), args, repo)
    base, head = _pre_push_refs() if args.pre_push else (args.base, args.head)
    if args.pre_push and base is None:
        print("reviewbot: nothing to compare this push against (a new root branch); skipped.",
              file=sys.stderr)
        return EXIT_CLEAN
    request = ChangeRequest(
        mode="pr" if args.pre_push else cast(Mode, args.mode), base=base, head=head,
        include_untracked=args.include_untracked,
    )
    caller = None if args.offline else _model_caller(config)
    with progress_display(enabled=not args.quiet) as progress:
        outcome = run_review(repo, request, config, config.output_dir or DEFAULT_OUTPUT_DIR,
                             progress, caller, notify=_notice)
    data = ReportInput(report=outcome.report, run_dir=outcome.run_dir.path, code=outcome.code,
                       verbose=args.verbose, quiet=args.quiet, color=sys.stdout.isatty())
    output = render(args.format, data)
    if output:
        print(output)
    return EXIT_FINDINGS if fails(outcome.report.findings, config.fail_level) else EXIT_CLEAN


def _model_caller(config: Config) -> StructuredCaller | None:
    """A caller for the configured model; None (offline) when no model is configured."""
    from reviewbot.model import OpenAITransport, StructuredCaller, model_settings

    settings = model_settings(config)
    if settings is None:
        return None
    return StructuredCaller(client=OpenAITransport(settings), settings=settings)


def _notice(message: str) -> None:
    print(f"reviewbot: {message}", file=sys.stderr)


def _pre_push_refs() -> tuple[str | None, str]:
    """The pushed range, as pre-commit's pre-push stage exports it (old and new names)."""
    to_ref = os.environ.get("PRE_COMMIT_TO_REF") or os.environ.get("PRE_COMMIT_ORIGIN")
    if not to_ref:
        raise UsageError("--pre-push reads PRE_COMMIT_TO_REF, which is not set: run it as "
                         "pre-commit's reviewbot-push hook (stage pre-push).")
    from_ref = os.environ.get("PRE_COMMIT_FROM_REF") or os.environ.get("PRE_COMMIT_SOURCE")
    return from_ref or None, to_ref


def _list_rules(args: argparse.Namespace) -> int:
    from reviewbot.rules import RULES

    for rule in RULES.values():
        print(f"{rule.id:34} {rule.severity:8} {rule.category:16} {rule.title}")
        print(f"{'':34} {rule.rationale}")
    return EXIT_CLEAN


def _with_flags(config: Config, args: argparse.Namespace, repo: GitRepo) -> Config:
    output_dir = args.output_dir.resolve() if args.output_dir else (
        config.output_dir or repo.root / DEFAULT_OUTPUT_DIR)
    fail_level = cast(Severity, args.fail_level) if args.fail_level else config.fail_level
    return replace(config, output_dir=output_dir, fail_level=fail_level)


def _write_traceback(output_dir: Path | None, repo: Path) -> Path:
    """Save the traceback where the user can find it; the terminal gets one line."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    candidates = [output_dir or repo / DEFAULT_OUTPUT_DIR, Path(tempfile.gettempdir())]
    for folder in candidates:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            log = folder / f"reviewbot-crash-{stamp}.log"
            log.write_text(traceback.format_exc(), encoding="utf-8")
            return log.resolve()
        except OSError:
            continue
    return Path("<unwritable>")


def entry() -> None:
    sys.exit(main())
