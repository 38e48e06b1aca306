"""Who decided what the config quietens (docs/RULES.md, "What quietens a review"), and the
files the rules read for secrets only, named whether or not anything was found in them.

The repository's file decides as the base has it when it is read there (`pr`, `github`,
`gitlab`); in the hook it is read from the work tree, and it is the change's own word when
it is not as HEAD has it (edited, staged or not, or not committed at all). The user's
file, the environment and the flags are the user's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fnmatch import fnmatch
from pathlib import PurePosixPath
from typing import cast

import msgspec

from reviewbot.config import Config, Origin
from reviewbot.rules.base import MINIFIED_LINE_CHARS, SECRETS_ONLY_TAGS, FileChange
from reviewbot.schema.findings import DecidedBy, QuietedFile, QuietKind
from reviewbot.schema.records import Tag
from reviewbot.schema.units import ReviewUnit


class Policy(msgspec.Struct, frozen=True):
    """Who decided the repository's settings for this change."""

    repository: DecidedBy = "base"

    @classmethod
    def of(cls, config: Config, units: Sequence[ReviewUnit]) -> Policy:
        if config.repository_file is None:  # none, or --config outside the repository
            return cls(repository="user")
        edited = not config.repository_at_base and (config.repository_edited or any(
            config.repository_file in (unit.file_path, unit.old_path) for unit in units))
        return cls(repository="change" if edited else "base")

    def decided(self, trusted: bool) -> DecidedBy:
        """Who decided a setting: the user (their file, the environment, a flag) or the
        repository's file."""
        return "user" if trusted else self.repository


def ignore_glob(path: str, config: Config) -> tuple[str, Origin]:
    """The first of the config's `ignore` globs that names the file, and where it came
    from."""
    name = PurePosixPath(path).name
    glob = next((g for g in config.ignore if fnmatch(path, g) or fnmatch(name, g)), "")
    return glob, config.ignore_origins.get(glob, Origin())


def file_quietenings(changes: Sequence[FileChange], config: Config, policy: Policy,
                     ignored_tag: str,
                     long_lines: Mapping[str, int] | None = None) -> tuple[QuietedFile, ...]:
    """Each file checked for secrets only, and why: the config's `ignore` (the glob), or its
    kind (vendored, generated, a lockfile); and each file with added lines the line-pattern
    rules pass over (`long_lines`: how many): long lines of a file the base holds minified
    (a long line anywhere else is read)."""
    found = [QuietedFile(file_path=path, kind="minified", decided_by="base",
                         justification=f"{count} added line{'s' if count > 1 else ''} over "
                                       f"{MINIFIED_LINE_CHARS:,} characters, in a file the "
                                       "base holds minified")
             for path, count in (long_lines or {}).items()]
    for change in changes:
        if ignored_tag in change.tags:  # a link's target: by the link's name
            glob, origin = ignore_glob(change.linked or change.path, config)
            found.append(QuietedFile(file_path=change.path, kind="ignore",
                                     decided_by=policy.decided(origin.trusted),
                                     justification=glob, new=change.kind.new))
        elif kinds := sorted(change.tags & SECRETS_ONLY_TAGS):
            found.append(QuietedFile(file_path=change.path, kind=cast(QuietKind, kinds[0]),
                                     decided_by=change.kind.decided(cast(Tag, kinds[0])),
                                     new=change.kind.new))
    return tuple(sorted(found, key=lambda f: f.file_path))
