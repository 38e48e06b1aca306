"""`reviewbot --mode gitlab`: a merge request pipeline's Code Quality report, then the review
posted."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from reviewbot.commands.forge import forge_redact, forge_review, inline_limits
from reviewbot.commands.running import print_report
from reviewbot.errors import EXIT_INTERNAL, ReviewbotError
from reviewbot.repo.git import GitRepo

if TYPE_CHECKING:
    from reviewbot.progress.events import Events
    from reviewbot.text.redaction import Redactor



def review_gitlab(args: argparse.Namespace, repo: GitRepo, redactor: Redactor,
                   events: Events) -> int:
    """A GitLab merge request pipeline: the Code Quality report, then the review posted. The
    exit code follows the findings; 3 when GitLab kept failing or refused the post."""
    from reviewbot.gitlab.action import default_codequality, deliver, prepare, token_of, unreviewed
    from reviewbot.gitlab.ci import read_pipeline
    from reviewbot.gitlab.clone import prepare_clone

    # The token is a secret whatever its shape (an instance may set its own prefix).
    redactor.add([token_of(os.environ)])
    inline = inline_limits(args)
    pipeline = read_pipeline(os.environ)
    redact = forge_redact(redactor)
    codequality = args.codequality or default_codequality(pipeline)
    try:
        prepare_clone(repo, pipeline, events.notice)
        run = prepare(pipeline, os.environ, inline, events.notice, redact)
        if args.full:  # every run reviews the whole merge request; --full asks the model anew
            args.no_cache = True
        done = forge_review(args, repo, redactor, events, run.request, pipeline.base_sha)
    except ReviewbotError:
        unreviewed(codequality, events.notice)  # the job's report artifact still exists
        raise
    posted = deliver(run, done.data, codequality, events.notice, redact)
    code = print_report(done.outcome, done.config, args, redactor, events)
    return code if posted else EXIT_INTERNAL
