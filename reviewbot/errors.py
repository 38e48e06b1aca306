"""Typed errors. Each says what went wrong and what the user can do about it.

The CLI's one top-level handler maps them to exit codes (see reviewbot.cli).
"""

from __future__ import annotations

# 0 no finding at or above the fail level, 1 findings at or above it, 2 usage or
# configuration error, 3 internal error: what every command returns.
EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class ReviewbotError(Exception):
    """Base of every error reviewbot raises on purpose."""

    exit_code = 3


class UsageError(ReviewbotError):
    """The command line asks for something that cannot be done."""

    exit_code = 2


class ConfigError(ReviewbotError):
    """A configuration file or setting is invalid."""

    exit_code = 2


class GitError(ReviewbotError):
    """git failed, or the repository is not in the state the mode needs."""

    exit_code = 2


class ArtifactError(ReviewbotError):
    """A stage artifact is missing or does not match its schema."""

    exit_code = 2
