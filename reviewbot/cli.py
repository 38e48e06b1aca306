"""`reviewbot` command line, with the one top-level handler that maps errors to exit codes.

Commands: `review` (the default: `reviewbot --mode pr ...` is `reviewbot review --mode pr
...`), `explain`, `rules`. Exit codes: 0 no finding at or above the fail level, 1 findings
at or above it, 2 usage or configuration error, 3 internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, cast

# Only what every command needs: an empty change is answered before the run's records,
# the config's parser or the redaction patterns are loaded (the rest is imported where used).
from reviewbot import __version__
from reviewbot.errors import ConfigError, GitError, ReviewbotError, UsageError
from reviewbot.levels import SEVERITIES, Severity
from reviewbot.repo.git import GitRepo, open_repo
from reviewbot.report import FORMATS
from reviewbot.report.terminal import printable

if TYPE_CHECKING:
    from reviewbot.config import Config
    from reviewbot.deliver.delivery import Inline
    from reviewbot.github.action import GithubRun
    from reviewbot.github.event import CommentEvent, PullRequestEvent
    from reviewbot.model import ModelSession
    from reviewbot.report import ReportInput
    from reviewbot.review.answer import Ask
    from reviewbot.run.cache import ResultCache
    from reviewbot.run.events import Events
    from reviewbot.run.pipeline import ReviewOutcome
    from reviewbot.run.redaction import Redactor
    from reviewbot.schema import ChangeRequest

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
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
    command: Callable[[argparse.Namespace], int] = _COMMANDS[args.command]
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
    check_flags(args)
    repo = open_repo(args.repo)
    if _nothing_staged(args, repo):
        # The commonest review of all, answered before the pipeline is even imported (a
        # config file there is still checked, so a broken one is said at once).
        if _config_files(repo, args):
            from reviewbot.config import load_config

            load_config(repo.root, repo_config=args.config)
        if not args.quiet:
            print("reviewbot: nothing to review (the change is empty).")
        return EXIT_CLEAN
    from reviewbot.run.redaction import Redactor

    redactor = Redactor()
    events = _events(args, redactor)
    with _errors_as_events(events):
        return _review_in(args, repo, redactor, events)


def _nothing_staged(args: argparse.Namespace, repo: GitRepo) -> bool:
    """A plain staged review (text, no events) of an index that matches HEAD. Outside
    pre-commit only: with nothing staged, pre-commit's `--all-files` means the tracked files."""
    return (args.mode in (None, "staged") and not args.pre_push and args.format == "text"
            and not args.events and os.environ.get("PRE_COMMIT") != "1"
            and not repo.has_staged_changes())


def _config_files(repo: GitRepo, args: argparse.Namespace) -> bool:
    """Whether any config file would be read (without parsing one)."""
    from reviewbot.run.paths import REPO_FILE, user_config_path

    pyproject = repo.root / "pyproject.toml"
    # REVIEWBOT_CONFIG set counts even when it names no file: that is an error to say
    # (/dev/null is no file on purpose).
    named = os.environ.get("REVIEWBOT_CONFIG")
    return bool(args.config or (repo.root / REPO_FILE).is_file()
                or (named and named != os.devnull) or user_config_path(os.environ).is_file()
                or (pyproject.is_file() and b"reviewbot" in pyproject.read_bytes()))


@contextmanager
def _errors_as_events(events: Events) -> Iterator[None]:
    """A run that fails says so on the event stream too (then the handler in main reports)."""
    try:
        yield
    except ReviewbotError as exc:
        events.emit("error", str(exc), exit_code=exc.exit_code)
        raise
    except Exception as exc:
        events.emit("error", f"internal error: {type(exc).__name__}", exit_code=EXIT_INTERNAL)
        raise


def _review_in(args: argparse.Namespace, repo: GitRepo, redactor: Redactor,
               events: Events) -> int:
    # Imported here so `reviewbot --help` stays instant.
    from reviewbot.run.paths import runs_folder
    from reviewbot.run.pipeline import run_review

    if args.mode == "github":
        return _review_github(args, repo, redactor, events)
    if args.mode == "gitlab":
        return _review_gitlab(args, repo, redactor, events)
    request = _request(args, repo, events)
    # --all-files has no base to compare with: its config is read at --base, else at the head.
    config_at = (args.base or args.head or "HEAD") if args.all_files else None
    config = _with_flags(_load_config(repo, request, args, events, config_at), args, repo)
    if args.mode == "pr" and not args.pre_push and request.base:
        _say_unused_config_edit(repo, request.base, args.config, config, events)
    session = None if args.offline else _session(config, events, redactor, request.mode)
    with _progress(events, args):
        outcome = run_review(repo, request, config,
                             config.output_dir or runs_folder(repo.root, None), events, session,
                             redactor, _cache(args, repo, session, events), args.keep_context)
    return _print_report(outcome, config, args, redactor, events)


def _review_github(args: argparse.Namespace, repo: GitRepo, redactor: Redactor,
                   events: Events) -> int:
    from reviewbot.github.action import prepare, token_of
    from reviewbot.github.event import CommentEvent, read_event

    # The token is a secret whatever its shape: nothing reviewbot writes may hold it.
    redactor.add([token_of(os.environ)])
    inline = _inline(args)
    trigger = read_event(os.environ)
    if isinstance(trigger, CommentEvent):
        return _answer_github(args, repo, redactor, events, trigger, inline)
    run = prepare(trigger, os.environ, args.reporter or "pr-review", inline,
                  events.notice, _forge_redact(redactor))
    if args.full:  # every run reviews the whole pull request; --full also asks the model anew
        args.no_cache = True
    return _deliver_github(args, repo, redactor, events, run)


def _inline(args: argparse.Namespace) -> Inline:
    from reviewbot.deliver.delivery import Inline

    if args.max_comments is not None and args.max_comments < 0:
        raise UsageError("--max-comments must be 0 or more.")
    return Inline(max_comments=30 if args.max_comments is None else args.max_comments,
                  level=args.inline_level or "warning")


def _review_gitlab(args: argparse.Namespace, repo: GitRepo, redactor: Redactor,
                   events: Events) -> int:
    """A GitLab merge request pipeline: the Code Quality report, then the review posted. The
    exit code follows the findings; 3 when GitLab kept failing or refused the post."""
    from reviewbot.gitlab.action import (
        default_codequality,
        deliver,
        prepare,
        token_of,
        unreviewed,
    )
    from reviewbot.gitlab.ci import read_pipeline
    from reviewbot.gitlab.clone import prepare_clone

    # The token is a secret whatever its shape (an instance may set its own prefix).
    redactor.add([token_of(os.environ)])
    inline = _inline(args)
    pipeline = read_pipeline(os.environ)
    redact = _forge_redact(redactor)
    codequality = args.codequality or default_codequality(pipeline)
    try:
        prepare_clone(repo, pipeline, events.notice)
        run = prepare(pipeline, os.environ, inline, events.notice, redact)
        if args.full:  # every run reviews the whole merge request; --full asks the model anew
            args.no_cache = True
        done = _forge_review(args, repo, redactor, events, run.request, pipeline.base_sha)
    except ReviewbotError:
        unreviewed(codequality, events.notice)  # the job's report artifact still exists
        raise
    posted = deliver(run, done.data, codequality, events.notice, redact)
    code = _print_report(done.outcome, done.config, args, redactor, events)
    return code if posted else EXIT_INTERNAL


def _forge_redact(redactor: Redactor) -> Callable[[str], str]:
    return lambda text: redactor.text(text, literal_bare_values=False)


@dataclass(frozen=True)
class _ForgeReview:
    outcome: ReviewOutcome
    config: Config
    data: ReportInput
    session: ModelSession | None
    cache: ResultCache | None


def _forge_review(args: argparse.Namespace, repo: GitRepo, redactor: Redactor,
                   events: Events, request: ChangeRequest, base_sha: str) -> _ForgeReview:
    """The change reviewed, its config read at the base (forge modes)."""
    from reviewbot.run.paths import runs_folder
    from reviewbot.run.pipeline import run_review

    config = _with_flags(_load_config(repo, request, args, events, base_sha), args, repo)
    session = None if args.offline else _session(config, events, redactor, "pr")
    cache = _cache(args, repo, session, events)
    with _progress(events, args):
        outcome = run_review(repo, request, config,
                             config.output_dir or runs_folder(repo.root, None), events, session,
                             redactor, cache, args.keep_context)
    return _ForgeReview(outcome, config, _report_input(outcome, args), session, cache)


def _deliver_github(args: argparse.Namespace, repo: GitRepo, redactor: Redactor,
                    events: Events, run: GithubRun) -> int:
    from reviewbot.github.action import default_sarif, deliver

    done = _forge_review(args, repo, redactor, events, run.request,
                          run.event.base_sha)
    posted = deliver(run, done.data, args.sarif or default_sarif(os.environ), os.environ,
                     events.notice, _forge_redact(redactor))
    code = _print_report(done.outcome, done.config, args, redactor, events)
    return code if posted else EXIT_INTERNAL


def _answer_github(args: argparse.Namespace, repo: GitRepo, redactor: Redactor,
                   events: Events, trigger: CommentEvent, inline: Inline) -> int:
    """A comment that talks to reviewbot: answered, or the review it asks for. The exit code
    is 0 unless GitHub could not be written to (3), or, for `review`, by the findings."""
    from reviewbot.deliver.conversation import Answered
    from reviewbot.github import conversation
    from reviewbot.github.action import prepare

    redact = _forge_redact(redactor)
    asked = conversation.start(trigger, os.environ, inline, events.notice, redact)
    if isinstance(asked, Answered):
        return EXIT_CLEAN if asked.ok else EXIT_INTERNAL
    talk = asked.talk
    _fetch_pull(repo, asked.pull, events)
    run = prepare(asked.pull, os.environ, "pr-review", inline, events.notice, redact,
                  delivery=talk.delivery)
    if talk.command.name == "ignore":
        config = _load_config(repo, run.request, args, events, run.event.base_sha)
        done = conversation.dismiss(talk, config.dismissals_to_propose, events.notice)
        return EXIT_CLEAN if done else EXIT_INTERNAL
    if talk.command.name == "review":
        args.no_cache = True  # "as it stands now, in full": the model is asked anew
        code = _deliver_github(args, repo, redactor, events, run)
        ok = conversation.confirm_review(talk, events.notice)
        return code if ok else EXIT_INTERNAL
    reviewed = _forge_review(args, repo, redactor, events, run.request,
                          run.event.base_sha)
    answered = conversation.explain(talk, reviewed.data, events.notice,
                                    _asker(repo, reviewed))
    return EXIT_CLEAN if answered else EXIT_INTERNAL


def _asker(repo: GitRepo, reviewed: _ForgeReview) -> Ask | None:
    """The model's answers about the reviewed change's findings; None without a model."""
    from reviewbot.repo.source import RepoSource
    from reviewbot.review.answer import asker
    from reviewbot.run.paths import private_folders

    state = reviewed.outcome.state
    if reviewed.session is None or state.diff is None:
        return None
    source = RepoSource(repo, state.diff, private=private_folders(
        repo.root, reviewed.outcome.run_dir.path.parent))
    return asker(reviewed.session, source, state.diff.units, state.bundle, reviewed.config,
                 reviewed.cache)


def _fetch_pull(repo: GitRepo, pull: PullRequestEvent, events: Events) -> None:
    """A comment's run checks out the default branch: the pull request's commits are fetched
    as objects (`refs/pull/N/head`), never checked out."""
    if repo.rev_parse(pull.head_sha) is not None or "origin" not in repo.remotes():
        return
    events.notice(f"fetching pull request #{pull.number}'s commits from origin")
    repo.fetch("origin", f"+refs/pull/{pull.number}/head:refs/remotes/origin/pull/"
                         f"{pull.number}")


def _rerun(args: argparse.Namespace) -> int:
    from reviewbot.run.artifacts import load_artifact
    from reviewbot.run.paths import runs_folder
    from reviewbot.run.pipeline import rerun
    from reviewbot.run.redaction import Redactor
    from reviewbot.schema import DiffResult

    diff = cast(DiffResult, load_artifact(args.run_dir / "step1_diff.json", "diff"))
    repo = open_repo(Path(diff.repo_root))
    redactor = Redactor()
    events = _events(args, redactor)
    args.config = None
    config = _with_flags(_load_config(repo, diff.request, args, events), args, repo)
    session = None if args.offline else _session(config, events, redactor, diff.request.mode)
    with _errors_as_events(events), _progress(events, args):
        outcome = rerun(args.run_dir, args.from_stage, repo, config,
                        config.output_dir or runs_folder(repo.root, None), events, session,
                        redactor, _cache(args, repo, session, events))
    return _print_report(outcome, config, args, redactor, events)


def _cache(args: argparse.Namespace, repo: GitRepo, session: ModelSession | None,
           events: Events) -> ResultCache | None:
    from reviewbot.run.cache import ResultCache
    from reviewbot.run.paths import cache_folder

    if session is None or args.no_cache:
        return None
    folder = cache_folder(repo.root)
    problem = _cache_problem(repo, folder)
    if problem is not None:
        events.notice(f"{folder} {problem}; the model-result cache is not used for this run")
        return None
    return ResultCache(folder)


def _cache_problem(repo: GitRepo, folder: Path) -> str | None:
    """Why the cache folder is not reviewbot's to use, or None. The reviewed repository must
    not hand the run its own "model answers" (a folder it leads elsewhere with a symlink, or
    fills with committed entries), nor lead the cache's writes and deletions among git's
    files or out of the repository."""
    from reviewbot.run.paths import git_dir_problem

    if not folder.resolve().is_relative_to(repo.root):
        return "leads out of the repository (a symlink?)"
    if repo.tracks(folder):
        return "holds files git tracks"
    return git_dir_problem(folder, repo.root, repo.git_dirs)


def _cache_command(args: argparse.Namespace) -> int:
    from reviewbot.run.cache import ResultCache
    from reviewbot.run.paths import cache_folder

    repo = open_repo(args.repo)
    folder = cache_folder(repo.root)
    problem = _cache_problem(repo, folder)
    if problem is not None:
        raise UsageError(f"{folder} {problem}: reviewbot neither reads nor deletes anything "
                         "there. Remove it (a fresh one is made by the next review).")
    cache = ResultCache(folder)
    if args.clear:
        print(f"reviewbot: removed {cache.clear()} cached results from {cache.folder}")
    else:
        entries, size = cache.size()
        print(f"{cache.folder}: {entries} cached results, {size:,} bytes "
              f"(at most {cache.max_bytes:,}; `reviewbot cache --clear` empties it)")
    return EXIT_CLEAN


def _report_input(outcome: ReviewOutcome, args: argparse.Namespace) -> ReportInput:
    from reviewbot.report import ReportInput
    from reviewbot.review.meta import model_rule_metadata
    from reviewbot.rules import rule_metadata

    written = outcome.run_dir.problem is None  # never "artifacts in X" when they are not
    return ReportInput(report=outcome.report, run_dir=outcome.run_dir.path if written else None,
                       code=outcome.code,
                       rules={**rule_metadata(), **model_rule_metadata()},
                       verbose=args.verbose, quiet=args.quiet, color=sys.stdout.isatty())


def _print_report(outcome: ReviewOutcome, config: Config, args: argparse.Namespace,
                  redactor: Redactor, events: Events) -> int:
    from reviewbot.report import render
    from reviewbot.run.pipeline import fails, model_findings_block

    data = _report_input(outcome, args)
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
        _notice(f"{len(advisory)} model finding(s) at or above {config.fail_level} did not "
                f"decide the exit code: model findings are advisory in "
                f"{outcome.request.mode} mode (model_findings_block = true lets them block).")
    return EXIT_FINDINGS if failed else EXIT_CLEAN


def _events(args: argparse.Namespace, redactor: Redactor) -> Events:
    """The run's emitter: notices on stderr, and `--events` as JSON lines if asked."""
    from reviewbot.run.events import Events, jsonl_writer

    events = Events(redact=lambda text: redactor.text(text, literal_bare_values=False))
    events.subscribe(lambda event: _notice(event.message) if event.kind == "notice" else None)
    if args.events == "-":
        events.subscribe(jsonl_writer(sys.stdout))
    elif args.events:
        try:
            handle = args.events.open("a", encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--events {args.events}: {exc.strerror}.") from exc
        events.subscribe(jsonl_writer(handle))
    return events


def _progress(events: Events, args: argparse.Namespace) -> AbstractContextManager[None]:
    from reviewbot.run.progress import progress_display

    return progress_display(events, enabled=not args.quiet)


# flag -> the modes it belongs to, and what to say when it is given with another one.
_MODE_FLAGS: dict[str, tuple[tuple[str, ...], str]] = {
    "base": (("pr",), "--base is for --mode pr (staged and working compare with HEAD; github "
                      "takes it from the event)"),
    "head": (("pr",), "--head is for --mode pr (staged and working review the index or "
                      "the working tree)"),
    "include_untracked": (("working",), "--include-untracked is for --mode working"),
    "all_files": (("pr",), "--all-files is for --mode pr (with pre-commit: `pre-commit run "
                           "--all-files`)"),
    "reporter": (("github",), "--reporter is for --mode github"),
    "max_comments": (("github", "gitlab"), "--max-comments is for --mode github and gitlab"),
    "inline_level": (("github", "gitlab"), "--inline-level is for --mode github and gitlab"),
    "full": (("github", "gitlab"), "--full is for --mode github and gitlab"),
    "codequality": (("gitlab",), "--codequality is for --mode gitlab (elsewhere: --format "
                                 "codequality)"),
    "sarif": (("github",), "--sarif is for --mode github (elsewhere: --format sarif)"),
}


def check_flags(args: argparse.Namespace) -> None:
    """Flags that do not fit the mode are an error, never silently ignored."""
    if args.pre_push:
        if (args.mode not in (None, "pr") or args.base or args.head or args.include_untracked
                or args.all_files):
            raise UsageError("--pre-push takes the pushed range from pre-commit; drop --mode, "
                             "--base, --head, --include-untracked and --all-files.")
        return
    mode = args.mode or "staged"
    for flag, (modes, message) in _MODE_FLAGS.items():
        if getattr(args, flag) and mode not in modes:
            raise UsageError(f"{message}; it does nothing with --mode {mode}.")


def _request(args: argparse.Namespace, repo: GitRepo, events: Events) -> ChangeRequest:
    from reviewbot.repo.hooks import all_files_request, pre_push_request
    from reviewbot.schema import ChangeRequest, Mode

    hook = None
    if args.pre_push:
        hook = pre_push_request(repo, os.environ)
    elif (args.mode in (None, "staged") and os.environ.get("PRE_COMMIT") == "1"
          and not repo.has_staged_changes()):
        # The commit hook with nothing staged: `pre-commit run --all-files`.
        hook = all_files_request(repo, "nothing is staged (pre-commit run --all-files?)")
    if hook is not None:
        if hook.notice:
            events.notice(hook.notice)
        return hook.request
    if args.all_files:  # every file of the head, as if added to an empty repository
        return ChangeRequest(mode="pr", head=args.head, base_is_root=True)
    return ChangeRequest(mode=cast(Mode, args.mode or "staged"), base=args.base,
                         head=args.head, include_untracked=args.include_untracked)


def _load_config(repo: GitRepo, request: ChangeRequest, args: argparse.Namespace,
                 events: Events, base_rev: str | None = None) -> Config:
    """The config; in pr mode the repository's file is read at the base (`base_rev`, else the
    request's base), so a change cannot loosen its own review."""
    from reviewbot.config import load_config
    from reviewbot.diff.parse import missing_commit
    from reviewbot.rules import RULES

    reader = None
    wanted = base_rev or (request.base if request.mode == "pr" else None)
    if wanted:
        base = repo.rev_parse(wanted)
        if base is None:  # never the work tree instead: that is the change's own config
            given = ("--base" if not base_rev or base_rev == args.base else
                     "--head" if getattr(args, "all_files", False) else "the change's base")
            raise GitError(missing_commit(repo, wanted, given, " (its config is read there)"))
        reader = _tree_reader(repo, base, f"{wanted} (the base)")
    config = load_config(repo.root, RULES.keys(), read_repo_file=reader,
                         revision=f"{wanted} (the base)", repo_config=args.config)
    if reader is None and config.repository_file is not None:
        from msgspec.structs import replace

        config = replace(config, repository_edited=_edited(repo, config.repository_file))
    for note in config.notes:
        events.notice(note)
    return config


def _edited(repo: GitRepo, path: str) -> bool:
    """Whether the work tree's copy of the repository's config is not what HEAD holds (the
    hook's base): untracked, or edited whether staged or not."""
    try:
        return repo.show("HEAD", path) != (repo.root / path).read_bytes()
    except (OSError, GitError):  # no HEAD yet (a first commit): all of it is the change's
        return True


def _say_unused_config_edit(repo: GitRepo, base: str, given: Path | None, config: Config,
                            events: Events) -> None:
    """A pr review reads the repository's config at the base: a notice when the config
    file has uncommitted edits, which someone trying a setting out would expect to count."""
    from reviewbot.config import repository_path
    from reviewbot.run.paths import REPO_FILE

    names = [REPO_FILE, "pyproject.toml"] if given is None else [repository_path(repo.root, given)]
    for name in names:
        if name is None:  # --config outside the repository: read from disk, edits and all
            continue
        worktree = _reviewbot_settings(name, repo.read_worktree(name))
        committed = _reviewbot_settings(name, repo.show("HEAD", name) if repo.head() else None)
        if worktree == committed or worktree == _reviewbot_settings(name, repo.show(base, name)):
            continue
        used = [source for source in config.sources if "(the base)" in source]
        events.notice(f"{name} has uncommitted changes, which this review does not use: "
                      "--mode pr reads the repository's config at the base, so that a change "
                      "cannot loosen its own review (config used: "
                      f"{' + '.join(used) or f'no repository config at {base}'})")
        return


def _reviewbot_settings(name: str, data: bytes | None) -> object:
    """What a config file holds for reviewbot: pyproject.toml's `[tool.reviewbot]` (its
    other tables are not reviewbot's), any other file's bytes."""
    import tomllib

    if name != "pyproject.toml" or data is None:
        return data
    try:
        return tomllib.loads(data.decode("utf-8")).get("tool", {}).get("reviewbot")
    except (ValueError, UnicodeDecodeError):
        return data


def _tree_reader(repo: GitRepo, rev: str, where: str) -> Callable[[str], bytes | None]:
    """Files of a commit by path, symlinks followed in that commit's tree (never on disk,
    where the work tree is the change under review); None for a path that is no file
    there."""
    def read(path: str) -> bytes | None:
        found = _tree_file(repo, rev, path, where)
        return None if found is None else repo.show(rev, found)
    return read


_LINK, _FILES = "120000", ("100644", "100755")


def _tree_file(repo: GitRepo, rev: str, path: str, where: str) -> str | None:
    """A path's file in a commit's tree, each symlink on the way resolved in the tree."""
    pending, done, hops = list(PurePosixPath(path).parts), list[str](), 0
    mode: str | None = None
    while pending:
        part = pending.pop(0)
        if part == "..":
            if not done:
                raise ConfigError(f"{path} at {where} is a symlink out of the repository; "
                                  "name a file inside it.")
            done.pop()
            continue
        mode = repo.tree_mode(rev, "/".join((*done, part)))
        if mode != _LINK:
            if mode is None:
                return None
            done.append(part)
            continue
        hops += 1
        target = os.fsdecode(repo.show(rev, "/".join((*done, part))) or b"")
        if target.startswith("/") or hops > 40:
            raise ConfigError(f"{path} at {where} is a symlink out of the repository (or a "
                              "loop of them); name a file inside it.")
        pending[:0] = PurePosixPath(target).parts
    return "/".join(done) if mode in _FILES else None


def _session(config: Config, events: Events, redactor: Redactor,
             mode: str) -> ModelSession | None:
    """A session with the configured model; None (offline) when no model is configured."""
    if not config.model.name:
        return None  # the hook's usual case: nothing of the model layer is imported
    from reviewbot.model import open_session

    return open_session(config, notify=events.notice, redactor=redactor, mode=mode)


def _notice(message: str) -> None:
    # Notices name the reviewed repository's files and quote servers: no escape sequence
    # or forged line from either reaches the terminal.
    print(f"reviewbot: {printable(message)}", file=sys.stderr)


def _rules(args: argparse.Namespace) -> int:
    from reviewbot.rules import RULES

    print(f"{'rule':34} {'severity':14} {'category':16} title")
    for rule in RULES.values():
        levels = rule.levels
        severity = levels[0] if len(levels) == 1 else f"{levels[0]}..{levels[-1]}"
        print(f"{rule.id:34} {severity:14} {rule.category:16} {rule.title}")
        print(f"{'':34} {rule.rationale}")
    print("\nA range: the finding says how sure or how bad (input from a request is an error, "
          "from a parameter a warning). In test code every rule reports one level lower, "
          "except a known token format (a real key in a test file is still a leaked key; "
          "one level lower in documentation); `[rules]` in the config re-levels a rule.")
    return EXIT_CLEAN


def _explain(args: argparse.Namespace) -> int:
    from reviewbot.run.explain import explain

    return explain(args)


def _with_flags(config: Config, args: argparse.Namespace, repo: GitRepo) -> Config:
    from msgspec.structs import replace

    from reviewbot.config import Origin
    from reviewbot.run.paths import runs_folder

    model = config.model
    if args.model:
        model = replace(model, name=args.model, name_origin=Origin("--model"))
    if args.base_url:
        model = replace(model, base_url=args.base_url, base_url_origin=Origin("--base-url"))
    fail_level = cast(Severity, args.fail_level) if args.fail_level else config.fail_level
    origin = "--output-dir" if args.output_dir else config.output_origin
    trusted = bool(args.output_dir) or config.output_trusted
    folder = runs_folder(repo.root, config.output_dir, args.output_dir)
    if trusted:
        _check_chosen_output(Path.cwd() / args.output_dir if args.output_dir else folder,
                             origin, repo)
    return replace(config, output_dir=folder, output_origin=origin, output_trusted=trusted,
                   fail_level=fail_level, model=model)


def _check_chosen_output(folder: Path, origin: str, repo: GitRepo) -> None:
    """The user's output folder is theirs to choose, anywhere but in a git directory: run
    folders among refs or hooks break the repository. (One the reviewed repository chose
    and a symlink leads there gets no artifacts instead: see the pipeline.)"""
    from reviewbot.run.paths import git_dir_problem

    problem = git_dir_problem(folder, repo.root, repo.git_dirs)
    if problem is None:
        return
    if origin == "--output-dir":
        raise UsageError(f"--output-dir {folder} {problem}, among git's own files; pass a "
                         "folder outside it.")
    raise ConfigError(f"{origin}: {folder} {problem}, among git's own files; choose a folder "
                      "outside it.")


def _write_traceback(output_dir: Path | None, repo: Path) -> Path:
    """Save the traceback where the user can find it (owner-only, through the redaction
    pass); the terminal gets one line."""
    from reviewbot.run.artifacts import write_private
    from reviewbot.run.paths import crash_log_folders
    from reviewbot.run.redaction import Redactor

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


_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "review": _review, "explain": _explain, "rerun": _rerun, "rules": _rules,
    "cache": _cache_command,
}


def entry() -> None:
    sys.exit(main())
