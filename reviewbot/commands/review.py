"""`reviewbot [review]`: a change reviewed (staged, working tree, a range, a pre-push), an
empty one answered before the pipeline is imported, and flags that do not fit the mode
refused."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, cast

from reviewbot.commands.cache import run_cache
from reviewbot.commands.run_config import config_for, say_unused_config_edit, with_flags
from reviewbot.commands.running import (
    errors_as_events,
    model_session,
    print_report,
    progress,
    run_events,
)
from reviewbot.errors import EXIT_CLEAN, UsageError
from reviewbot.repo.git import GitRepo, open_repo

if TYPE_CHECKING:
    from reviewbot.progress.events import Events
    from reviewbot.schema.units import ChangeRequest
    from reviewbot.text.redaction import Redactor


def review(args: argparse.Namespace) -> int:
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
    from reviewbot.text.redaction import Redactor

    redactor = Redactor()
    events = run_events(args, redactor)
    with errors_as_events(events):
        return _review_in(args, repo, redactor, events)


def _nothing_staged(args: argparse.Namespace, repo: GitRepo) -> bool:
    """A plain staged review (text, no events) of an index that matches HEAD. Outside
    pre-commit only: with nothing staged, pre-commit's `--all-files` means the tracked files."""
    return (args.mode in (None, "staged") and not args.pre_push and args.format == "text"
            and not args.events and os.environ.get("PRE_COMMIT") != "1"
            and not repo.has_staged_changes())


def _config_files(repo: GitRepo, args: argparse.Namespace) -> bool:
    """Whether any config file would be read (without parsing one)."""
    from reviewbot.locations import REPO_FILE, user_config_path

    pyproject = repo.root / "pyproject.toml"
    # REVIEWBOT_CONFIG set counts even when it names no file: that is an error to say
    # (/dev/null is no file on purpose).
    named = os.environ.get("REVIEWBOT_CONFIG")
    return bool(args.config or (repo.root / REPO_FILE).is_file()
                or (named and named != os.devnull) or user_config_path(os.environ).is_file()
                or (pyproject.is_file() and b"reviewbot" in pyproject.read_bytes()))


def _review_in(args: argparse.Namespace, repo: GitRepo, redactor: Redactor,
               events: Events) -> int:
    # Imported past the empty change's answer: the pipeline is most of a run's imports.
    from reviewbot.run.pipeline import run_review
    from reviewbot.store.paths import runs_folder

    # The forge entries are imported in their own modes only: the hook never loads them.
    if args.mode == "github":
        from reviewbot.commands.github import review_github

        return review_github(args, repo, redactor, events)
    if args.mode == "gitlab":
        from reviewbot.commands.gitlab import review_gitlab

        return review_gitlab(args, repo, redactor, events)
    request = _request(args, repo, events)
    # --all-files has no base to compare with: its config is read at --base, else at the head.
    config_at = (args.base or args.head or "HEAD") if args.all_files else None
    config = with_flags(config_for(repo, request, args, events, config_at), args, repo)
    if args.mode == "pr" and not args.pre_push and request.base:
        say_unused_config_edit(repo, request.base, args.config, config, events)
    session = None if args.offline else model_session(config, events, redactor, request.mode)
    with progress(events, args):
        outcome = run_review(repo, request, config,
                             config.output_dir or runs_folder(repo.root, None), events, session,
                             redactor, run_cache(args, repo, session, events), args.keep_context)
    return print_report(outcome, config, args, redactor, events)


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
    from reviewbot.schema.records import Mode
    from reviewbot.schema.units import ChangeRequest

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
