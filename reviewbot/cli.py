"""`reviewbot` command line, with the one top-level handler that maps errors to exit codes.

It parses the arguments and hands each command to its module in `reviewbot/commands/`.
Commands: `review` (the default: `reviewbot --mode pr ...` is `reviewbot review --mode pr
...`), `explain`, `rerun`, `rules`, `cache`. Exit codes: 0 no finding at or above the fail
level, 1 findings at or above it, 2 usage or configuration error, 3 internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from importlib import import_module
from pathlib import Path
from typing import cast

# Only what parsing needs: an empty change is answered before the run's records, the
# config's parser or the redaction patterns are loaded (each command imports what it uses).
from reviewbot import __version__
from reviewbot.errors import EXIT_CLEAN, EXIT_INTERNAL, ReviewbotError
from reviewbot.levels import SEVERITIES
from reviewbot.report import FORMATS

COMMANDS = ("review", "explain", "rerun", "rules", "cache")
_TOP_LEVEL_FLAGS = ("-h", "--help", "--version")

_EPILOG = """\
commands:
  review    review a change (the default: `reviewbot --mode pr --base main` is
            `reviewbot review --mode pr --base main`); `reviewbot review --help` for its flags
  explain   show what a finished run reviewed and why: `reviewbot explain [RUN_DIR]`
  rerun     run a finished run's later stages again from its artifacts (another model,
            another prompt): `reviewbot rerun RUN_DIR --from plan --model M`
  rules     list every rule with its id, severity and category
  cache     show the size of the model-result cache, or empty it (--clear)

exit codes: 0 clean, 1 findings at or above the fail level, 2 usage or configuration
error, 3 internal error."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reviewbot", usage="reviewbot [COMMAND] [options]",
        description="Review a git change: staged, working tree, or a pull request.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"reviewbot {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    _review_arguments(commands.add_parser(
        "review", prog="reviewbot [review]", help="review a change (the default command)",
        description="Review a git change: staged (default), working tree, or a pull request."))
    commands.add_parser(
        "explain", prog="reviewbot explain", help="show what a finished run reviewed and why",
        description="Show what a finished run reviewed, how it rated each unit, and why.",
    ).add_argument("run_dir", nargs="?", type=Path,
                   help="a run folder (default: the newest finished run in the repository's "
                        "output folder, .reviewbot/runs unless configured)")
    rerun = commands.add_parser(
        "rerun", prog="reviewbot rerun", help="run a finished run's stages again from a stage on",
        description="Load a finished run's artifacts up to a stage and run the rest again "
                    "into a new run folder (steps 1-3 are never re-read from git).")
    rerun.add_argument("run_dir", type=Path, help="the finished run's folder")
    rerun.add_argument("--from", dest="from_stage", required=True, metavar="STAGE",
                       help="the first stage to run again: plan, fuse, context, review, verify "
                            "or report")
    _output_arguments(rerun)
    _model_arguments(rerun)
    commands.add_parser("rules", prog="reviewbot rules", help="list every rule",
                        description="Every rule with its id, severity, category and rationale.")
    cache = commands.add_parser(
        "cache", prog="reviewbot cache", help="the model-result cache: its size, or --clear",
        description="Model results are cached in .reviewbot/cache, keyed by everything that "
                    "determines them; a re-run on an unchanged change makes no model calls.")
    cache.add_argument("--repo", metavar="PATH", type=Path, default=Path(),
                       help="the repository (default: the current directory)")
    cache.add_argument("--clear", action="store_true", help="delete every cached result")
    return parser


def _review_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mode", choices=("staged", "working", "pr", "github", "gitlab"),
                        help="what to review (default: staged); github: the pull request "
                             "of a GitHub Actions event; gitlab: the merge request of a "
                             "GitLab CI merge request pipeline")
    parser.add_argument("--base", metavar="REV", help="pr mode: the branch merged into")
    parser.add_argument("--head", metavar="REV", help="pr mode: the change (default: HEAD)")
    parser.add_argument("--all-files", action="store_true",
                        help="pr mode: review every file of --head, not a change (a baseline, "
                             "such as the target branch's Code Quality report); the "
                             "repository's config is read at --base when given, else at "
                             "--head")
    parser.add_argument("--repo", metavar="PATH", type=Path, default=Path(),
                        help="repository to review (default: the current directory)")
    parser.add_argument("--pre-push", action="store_true",
                        help="review the commits being pushed, as pre-commit's pre-push "
                             "stage describes them (the reviewbot-push hook)")
    parser.add_argument("--include-untracked", action="store_true",
                        help="working mode: also review untracked files")
    parser.add_argument("--keep-context", action="store_true",
                        help="offline: still build the context bundle of each unit (for a "
                             "later `reviewbot rerun --from review` with a model)")
    _output_arguments(parser)
    parser.add_argument("--config", metavar="FILE", type=Path,
                        help="the repository config to use instead of .reviewbot.toml")
    _model_arguments(parser)
    forges = parser.add_argument_group("github and gitlab modes")
    forges.add_argument("--max-comments", type=int, metavar="N",
                        help="inline comments per review (default 30; the rest go to the "
                             "summary comment)")
    forges.add_argument("--inline-level", choices=SEVERITIES, metavar="LEVEL",
                        help="the lowest severity posted as an inline comment: error, "
                             "warning (default) or info; the findings below it are listed in "
                             "the summary comment, collapsed")
    forges.add_argument("--full", "--full-review", dest="full", action="store_true",
                        help="ask the model about every unit again, ignoring the result cache "
                             "(every run reviews the whole pull or merge request)")
    github = parser.add_argument_group("github mode")
    github.add_argument("--reporter", choices=("pr-review", "summary", "sarif"),
                        help="pr-review (default): a review on the pull request, plus the "
                             "job summary and SARIF; summary or sarif: only those")
    github.add_argument("--sarif", metavar="FILE", type=Path,
                        help="where the SARIF file goes (default: reviewbot.sarif in the "
                             "workspace)")
    gitlab = parser.add_argument_group("gitlab mode")
    gitlab.add_argument("--codequality", metavar="FILE", type=Path,
                        help="where the Code Quality report goes (default: "
                             "gl-code-quality-report.json in CI_PROJECT_DIR)")


def _output_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="text",
                        help="output format (default: text)")
    # One or the other: quiet and verbose together say nothing a user could mean.
    amount = parser.add_mutually_exclusive_group()
    amount.add_argument("-q", "--quiet", action="store_true",
                        help="text format: findings only, no summary or progress")
    amount.add_argument("-v", "--verbose", action="store_true",
                        help="text format: also list every unit with its tags and rating")
    parser.add_argument("--output-dir", metavar="DIR", type=Path,
                        help="where run artifacts go (default: .reviewbot/runs in the repo)")
    parser.add_argument("--fail-level", choices=SEVERITIES,
                        help="lowest severity that makes the exit code 1 (default: error)")
    parser.add_argument("--events", metavar="FILE", type=_events_target,
                        help="write progress events as JSON lines to FILE (- for stdout, "
                             "which then carries only events)")


def _model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", metavar="NAME",
                        help="the model to use (instead of REVIEWBOT_MODEL)")
    parser.add_argument("--base-url", metavar="URL",
                        help="the OpenAI-compatible endpoint (instead of OPENAI_BASE_URL, or "
                             "REVIEWBOT_BASE_URL, which wins over it)")
    parser.add_argument("--offline", action="store_true",
                        help="never call a model, even if one is configured")
    parser.add_argument("--no-cache", action="store_true",
                        help="neither read nor write the model-result cache")


def _events_target(value: str) -> Path | str:
    return value if value == "-" else Path(value)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in _TOP_LEVEL_FLAGS):
        argv = ["review", *argv]
    args = build_parser().parse_args(argv)
    command = _command(args.command)
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


def _write_traceback(output_dir: Path | None, repo: Path) -> Path:
    """Save the traceback where the user can find it (owner-only, through the redaction
    pass); the terminal gets one line."""
    from reviewbot.store.files import write_private
    from reviewbot.store.paths import crash_log_folders
    from reviewbot.text.redaction import Redactor

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    for folder in crash_log_folders(output_dir, repo):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            log = folder / f"reviewbot-crash-{stamp}.log"
            write_private(log, Redactor().text(traceback.format_exc()))
            return log.resolve()
        except OSError:
            continue
    return Path("<unwritable>")


# command -> its module in reviewbot/commands and the function that runs it; a module is
# imported only when its command runs, so `--help` and an empty change load nothing more.
_COMMANDS: dict[str, tuple[str, str]] = {
    "review": ("review", "review"), "explain": ("explain", "explain"),
    "rerun": ("rerun", "rerun_command"), "rules": ("rules", "rules"), "cache": ("cache", "cache"),
}


def _command(name: str) -> Callable[[argparse.Namespace], int]:
    module, function = _COMMANDS[name]
    return cast(Callable[[argparse.Namespace], int],
                getattr(import_module(f"reviewbot.commands.{module}"), function))


def entry() -> None:
    sys.exit(main())
