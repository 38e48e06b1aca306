"""`reviewbot cache [--clear]`: the model-result cache's size, or emptied; and whether a run
may use the cache folder at all."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from reviewbot.errors import EXIT_CLEAN, UsageError
from reviewbot.repo.git import GitRepo, open_repo

if TYPE_CHECKING:
    from reviewbot.model import ModelSession
    from reviewbot.progress.events import Events
    from reviewbot.store.cache import ResultCache


def cache(args: argparse.Namespace) -> int:
    from reviewbot.store.cache import ResultCache
    from reviewbot.store.paths import cache_folder

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


def run_cache(args: argparse.Namespace, repo: GitRepo, session: ModelSession | None,
           events: Events) -> ResultCache | None:
    from reviewbot.store.cache import ResultCache
    from reviewbot.store.paths import cache_folder

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
    from reviewbot.store.paths import git_dir_problem

    if not folder.resolve().is_relative_to(repo.root):
        return "leads out of the repository (a symlink?)"
    if repo.tracks(folder):
        return "holds files git tracks"
    return git_dir_problem(folder, repo.root, repo.git_dirs)
