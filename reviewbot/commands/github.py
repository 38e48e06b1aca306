"""`reviewbot --mode github`: a pull request's event reviewed and delivered, or a comment to
reviewbot answered."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from reviewbot.commands.forge import ForgeReview, forge_redact, forge_review, inline_limits
from reviewbot.commands.run_config import config_for
from reviewbot.commands.running import print_report
from reviewbot.errors import EXIT_CLEAN, EXIT_INTERNAL
from reviewbot.repo.git import GitRepo

if TYPE_CHECKING:
    from reviewbot.deliver.delivery import Inline
    from reviewbot.github.action import GithubRun
    from reviewbot.github.event import CommentEvent, PullRequestEvent
    from reviewbot.progress.events import Events
    from reviewbot.review.answer import Ask
    from reviewbot.text.redaction import Redactor



def review_github(args: argparse.Namespace, repo: GitRepo, redactor: Redactor,
                   events: Events) -> int:
    from reviewbot.github.action import prepare, token_of
    from reviewbot.github.event import CommentEvent, read_event

    # The token is a secret whatever its shape: nothing reviewbot writes may hold it.
    redactor.add([token_of(os.environ)])
    inline = inline_limits(args)
    trigger = read_event(os.environ)
    if isinstance(trigger, CommentEvent):
        return _answer_github(args, repo, redactor, events, trigger, inline)
    run = prepare(trigger, os.environ, args.reporter or "pr-review", inline,
                  events.notice, forge_redact(redactor))
    if args.full:  # every run reviews the whole pull request; --full also asks the model anew
        args.no_cache = True
    return _deliver_github(args, repo, redactor, events, run)


def _deliver_github(args: argparse.Namespace, repo: GitRepo, redactor: Redactor,
                    events: Events, run: GithubRun) -> int:
    from reviewbot.github.action import default_sarif, deliver

    done = forge_review(args, repo, redactor, events, run.request,
                          run.event.base_sha)
    posted = deliver(run, done.data, args.sarif or default_sarif(os.environ), os.environ,
                     events.notice, forge_redact(redactor))
    code = print_report(done.outcome, done.config, args, redactor, events)
    return code if posted else EXIT_INTERNAL


def _answer_github(args: argparse.Namespace, repo: GitRepo, redactor: Redactor,
                   events: Events, trigger: CommentEvent, inline: Inline) -> int:
    """A comment that talks to reviewbot: answered, or the review it asks for. The exit code
    is 0 unless GitHub could not be written to (3), or, for `review`, by the findings."""
    from reviewbot.deliver.conversation import Answered
    from reviewbot.github import conversation
    from reviewbot.github.action import prepare

    redact = forge_redact(redactor)
    asked = conversation.start(trigger, os.environ, inline, events.notice, redact)
    if isinstance(asked, Answered):
        return EXIT_CLEAN if asked.ok else EXIT_INTERNAL
    talk = asked.talk
    _fetch_pull(repo, asked.pull, events)
    run = prepare(asked.pull, os.environ, "pr-review", inline, events.notice, redact,
                  delivery=talk.delivery)
    if talk.command.name == "ignore":
        config = config_for(repo, run.request, args, events, run.event.base_sha)
        done = conversation.dismiss(talk, config.dismissals_to_propose, events.notice)
        return EXIT_CLEAN if done else EXIT_INTERNAL
    if talk.command.name == "review":
        args.no_cache = True  # "as it stands now, in full": the model is asked anew
        code = _deliver_github(args, repo, redactor, events, run)
        ok = conversation.confirm_review(talk, events.notice)
        return code if ok else EXIT_INTERNAL
    reviewed = forge_review(args, repo, redactor, events, run.request,
                          run.event.base_sha)
    answered = conversation.explain(talk, reviewed.data, events.notice,
                                    _asker(repo, reviewed))
    return EXIT_CLEAN if answered else EXIT_INTERNAL


def _asker(repo: GitRepo, reviewed: ForgeReview) -> Ask | None:
    """The model's answers about the reviewed change's findings; None without a model."""
    from reviewbot.repo.source import RepoSource
    from reviewbot.review.answer import asker
    from reviewbot.store.paths import private_folders

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
