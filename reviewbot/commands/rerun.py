"""`reviewbot rerun RUN_DIR --from STAGE`: a finished run's later stages run again from its
artifacts, into a new run folder."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, cast

from reviewbot.commands.cache import run_cache
from reviewbot.commands.run_config import config_for, with_flags
from reviewbot.commands.running import (
    errors_as_events,
    model_session,
    print_report,
    progress,
    run_events,
)
from reviewbot.repo.git import open_repo

if TYPE_CHECKING:
    pass


def rerun_command(args: argparse.Namespace) -> int:
    from reviewbot.run.artifacts import load_artifact
    from reviewbot.run.pipeline import rerun
    from reviewbot.schema.units import DiffResult
    from reviewbot.store.paths import runs_folder
    from reviewbot.text.redaction import Redactor

    diff = cast(DiffResult, load_artifact(args.run_dir / "step1_diff.json", "diff"))
    repo = open_repo(Path(diff.repo_root))
    redactor = Redactor()
    events = run_events(args, redactor)
    args.config = None
    config = with_flags(config_for(repo, diff.request, args, events), args, repo)
    session = None if args.offline else model_session(config, events, redactor, diff.request.mode)
    with errors_as_events(events), progress(events, args):
        outcome = rerun(args.run_dir, args.from_stage, repo, config,
                        config.output_dir or runs_folder(repo.root, None), events, session,
                        redactor, run_cache(args, repo, session, events))
    return print_report(outcome, config, args, redactor, events)
