"""The config a reviewing command runs with: the repository's file read at the base (symlinks
followed in the base's tree, never on disk), a notice when the file has edits the review does
not use, and the flags laid over it."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, cast

from reviewbot.errors import ConfigError, GitError, UsageError
from reviewbot.levels import Severity
from reviewbot.repo.git import GitRepo

if TYPE_CHECKING:
    from reviewbot.config import Config
    from reviewbot.progress.events import Events
    from reviewbot.schema.units import ChangeRequest


def config_for(repo: GitRepo, request: ChangeRequest, args: argparse.Namespace,
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


def say_unused_config_edit(repo: GitRepo, base: str, given: Path | None, config: Config,
                            events: Events) -> None:
    """A pr review reads the repository's config at the base: a notice when the config
    file has uncommitted edits, which someone trying a setting out would expect to count."""
    from reviewbot.config import repository_path
    from reviewbot.locations import REPO_FILE

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


def with_flags(config: Config, args: argparse.Namespace, repo: GitRepo) -> Config:
    from msgspec.structs import replace

    from reviewbot.config import Origin
    from reviewbot.store.paths import runs_folder

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
    from reviewbot.store.paths import git_dir_problem

    problem = git_dir_problem(folder, repo.root, repo.git_dirs)
    if problem is None:
        return
    if origin == "--output-dir":
        raise UsageError(f"--output-dir {folder} {problem}, among git's own files; pass a "
                         "folder outside it.")
    raise ConfigError(f"{origin}: {folder} {problem}, among git's own files; choose a folder "
                      "outside it.")
