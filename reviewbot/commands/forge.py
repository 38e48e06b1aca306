"""What the GitHub and GitLab entries share: the inline-comment limits from the flags, the
redaction of what is posted, and the change reviewed with its config read at the base."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from reviewbot.commands.cache import run_cache
from reviewbot.commands.run_config import config_for, with_flags
from reviewbot.commands.running import model_session, progress, report_input
from reviewbot.errors import UsageError
from reviewbot.repo.git import GitRepo

if TYPE_CHECKING:
    from reviewbot.config import Config
    from reviewbot.deliver.delivery import Inline
    from reviewbot.model import ModelSession
    from reviewbot.progress.events import Events
    from reviewbot.report import ReportInput
    from reviewbot.run.pipeline import ReviewOutcome
    from reviewbot.schema.units import ChangeRequest
    from reviewbot.store.cache import ResultCache
    from reviewbot.text.redaction import Redactor



def inline_limits(args: argparse.Namespace) -> Inline:
    from reviewbot.deliver.delivery import Inline

    if args.max_comments is not None and args.max_comments < 0:
        raise UsageError("--max-comments must be 0 or more.")
    return Inline(max_comments=30 if args.max_comments is None else args.max_comments,
                  level=args.inline_level or "warning")


def forge_redact(redactor: Redactor) -> Callable[[str], str]:
    return lambda text: redactor.text(text, literal_bare_values=False)


@dataclass(frozen=True)
class ForgeReview:
    outcome: ReviewOutcome
    config: Config
    data: ReportInput
    session: ModelSession | None
    cache: ResultCache | None


def forge_review(args: argparse.Namespace, repo: GitRepo, redactor: Redactor,
                   events: Events, request: ChangeRequest, base_sha: str) -> ForgeReview:
    """The change reviewed, its config read at the base (forge modes)."""
    from reviewbot.run.pipeline import run_review
    from reviewbot.store.paths import runs_folder

    config = with_flags(config_for(repo, request, args, events, base_sha), args, repo)
    session = None if args.offline else model_session(config, events, redactor, "pr")
    cache = run_cache(args, repo, session, events)
    with progress(events, args):
        outcome = run_review(repo, request, config,
                             config.output_dir or runs_folder(repo.root, None), events, session,
                             redactor, cache, args.keep_context)
    return ForgeReview(outcome, config, report_input(outcome, args), session, cache)
