"""Where reviewbot reads and writes on disk: the one place that decides folders (their
defaults are in `locations.py`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from reviewbot.locations import DEFAULT_RUNS, has_git_part

DEFAULT_CACHE = Path(".reviewbot/cache")


def runs_folder(repo_root: Path, configured: Path | None, flag: Path | None = None) -> Path:
    """`--output-dir`, else the config's `output_dir`, else `.reviewbot/runs` in the repo."""
    if flag is not None:
        return flag.resolve()
    return configured if configured is not None else repo_root / DEFAULT_RUNS


def git_dir_problem(folder: Path, repo_root: Path,
                    dirs: Callable[[], Sequence[Path]]) -> str | None:
    """Why reviewbot must not write in a folder, or None: it is in a git directory, as
    written or once symlinks are resolved. Files there sit among git's own: a run folder
    under refs/ is a broken ref to every later git command, one under hooks/ is in the
    way of the hooks. `dirs` gives the repository's git directories (asked only when
    the path alone does not tell)."""
    if has_git_part(folder, repo_root):
        return "is inside a .git folder"
    real, real_root = folder.resolve(), repo_root.resolve()
    for git_dir in dirs():
        if real.is_relative_to(git_dir):
            return f"leads into the git directory {git_dir} (a symlink?)"
    if has_git_part(real, real_root):
        return "leads into a .git folder (a symlink?)"
    return None


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


def crash_log_folders(runs: Path | None, repo: Path) -> list[Path]:
    """Where a traceback may go, best first: the runs folder, else the temp folder. The
    runs folder is skipped where it is, or a symlink leads it, into a .git folder, and the
    default one where a symlink leads it out of the repository (the handler asks git
    nothing: git may be what failed)."""
    import tempfile

    folder, real_repo = runs or repo / DEFAULT_RUNS, repo.resolve()
    real = folder.resolve()
    usable = not has_git_part(folder, repo) and not has_git_part(real, real_repo)
    if runs is None:
        usable = usable and real.is_relative_to(real_repo)
    return [folder, Path(tempfile.gettempdir())] if usable else [Path(tempfile.gettempdir())]
