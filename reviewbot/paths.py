"""Where reviewbot reads and writes on disk: the one place that decides folders."""

from __future__ import annotations

import tempfile
from pathlib import Path

DEFAULT_RUNS = Path(".reviewbot/runs")
DEFAULT_CACHE = Path(".reviewbot/cache")


def runs_folder(repo_root: Path, configured: Path | None, flag: Path | None = None) -> Path:
    """`--output-dir`, else the config's `output_dir`, else `.reviewbot/runs` in the repo."""
    if flag is not None:
        return flag.resolve()
    return configured if configured is not None else repo_root / DEFAULT_RUNS


def cache_folder(repo_root: Path) -> Path:
    return repo_root / DEFAULT_CACHE


def crash_log_folders(runs: Path | None, repo_root: Path) -> list[Path]:
    """Where a traceback may go, best first: the runs folder, else the temp folder."""
    return [runs or repo_root / DEFAULT_RUNS, Path(tempfile.gettempdir())]
