"""Where reviewbot reads and writes on disk: the one place that decides folders."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

DEFAULT_RUNS = Path(".reviewbot/runs")
DEFAULT_CACHE = Path(".reviewbot/cache")
# The repository's config file (else `[tool.reviewbot]` in pyproject.toml).
REPO_FILE = ".reviewbot.toml"


def user_config_path(env: Mapping[str, str]) -> Path:
    """`$REVIEWBOT_CONFIG`, else `~/.config/reviewbot/config.toml` (XDG_CONFIG_HOME)."""
    if env.get("REVIEWBOT_CONFIG"):
        return Path(env["REVIEWBOT_CONFIG"]).expanduser()
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")) / ".config")
    return Path(base).expanduser() / "reviewbot" / "config.toml"


def runs_folder(repo_root: Path, configured: Path | None, flag: Path | None = None) -> Path:
    """`--output-dir`, else the config's `output_dir`, else `.reviewbot/runs` in the repo."""
    if flag is not None:
        return flag.resolve()
    return configured if configured is not None else repo_root / DEFAULT_RUNS


def cache_folder(repo_root: Path) -> Path:
    return repo_root / DEFAULT_CACHE


def user_cache_folder(env: Mapping[str, str]) -> Path:
    """reviewbot's cache outside any repository (`$XDG_CACHE_HOME/reviewbot`)."""
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME", "~")) / ".cache")
    return Path(base).expanduser() / "reviewbot"


def private_folders(repo_root: Path, *folders: Path) -> tuple[str, ...]:
    """reviewbot's own folders as repository paths (`.reviewbot`, and a configured output
    folder inside the repository): what a model's tools never read."""
    found = [DEFAULT_RUNS.parts[0]]
    for folder in folders:
        try:
            found.append(folder.resolve().relative_to(repo_root.resolve()).as_posix())
        except ValueError:
            continue  # outside the repository: no repository path leads there
    return tuple(dict.fromkeys(f for f in found if f != "."))


def crash_log_folders(runs: Path | None, repo_root: Path) -> list[Path]:
    """Where a traceback may go, best first: the runs folder, else the temp folder."""
    import tempfile

    return [runs or repo_root / DEFAULT_RUNS, Path(tempfile.gettempdir())]
