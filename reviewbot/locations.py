"""Where reviewbot's files are unless told otherwise, as plain facts: the repository's config
file, the user's, the runs folder, and what makes a path one into a `.git` folder. It imports
nothing: the hook's fast path asks whether a config file exists before anything else loads,
and the config checks the folders it is given with the same facts the folders' users do."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

# Where reviewbot writes its runs unless told otherwise.
DEFAULT_RUNS = Path(".reviewbot/runs")
# The repository's config file (else `[tool.reviewbot]` in pyproject.toml).
REPO_FILE = ".reviewbot.toml"


def user_config_path(env: Mapping[str, str]) -> Path:
    """`$REVIEWBOT_CONFIG`, else `~/.config/reviewbot/config.toml` (XDG_CONFIG_HOME)."""
    if env.get("REVIEWBOT_CONFIG"):
        return Path(env["REVIEWBOT_CONFIG"]).expanduser()
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")) / ".config")
    return Path(base).expanduser() / "reviewbot" / "config.toml"


def has_git_part(path: Path, repo_root: Path) -> bool:
    """Whether a path names a `.git` folder on its way (below the repository's root when it
    is under it): any repository's git directory, as written ('.GIT' too, for file systems
    that ignore case)."""
    parts = path.relative_to(repo_root).parts if path.is_relative_to(repo_root) else path.parts
    return any(part.casefold() == ".git" for part in parts)
