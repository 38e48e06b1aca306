"""A very large staged change: Django's files staged as new files in an empty repository
(150,000 lines by default: its 803 Python modules, then templates, scripts and styles),
reviewed by the hook (`reviewbot --mode staged --offline`): wall time, peak memory (RSS) and
the size of the run's artifacts, at several sizes to show how they grow.

Memory is the peak RSS of the largest single process (reviewbot, its rule worker, git),
from the kernel, and the peak of the process tree's summed proportional set size (PSS,
sampled every 10 ms from /proc): a forked worker shares pages with its parent, which RSS
would count twice and PSS splits between them.

    python bench/large_change.py [--lines 150000] [--processes N] [--cache bench/.cache]

Django comes from PyPI (the bench cache), so none of the code was written for reviewbot.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import fetch, git, unpack

VERSION = "5.0"
# What the hook must do with a very large change on one process.
GOAL_LINES, GOAL_SECONDS, GOAL_MB = 150_000, 6, 150


def django_files(cache: Path, work: Path) -> list[Path]:
    source = work / "django-src"
    source.mkdir()
    git(source, "init", "-q")
    unpack(fetch("pypi", "django", VERSION, cache), source)
    files = [p for p in source.rglob("*") if p.is_file() and ".git" not in p.parts]
    # Its Python modules first (135,000 lines), then its templates, scripts and styles.
    python = sorted(p for p in files if p.suffix == ".py")
    return python + sorted(p for p in files if p.suffix in (".html", ".js", ".css", ".txt"))


def stage(files: list[Path], source_root: Path, repo: Path, lines: int) -> tuple[int, int]:
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "commit", "-q", "--allow-empty", "-m", "empty")
    total = count = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        target = repo / path.relative_to(source_root)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        total += text.count("\n")
        count += 1
        if total >= lines:
            break
    git(repo, "add", "-A")
    return count, total


def measure(repo: Path, runs: Path, processes: int | None) -> tuple[float, int, int, int]:
    """Seconds, peak RSS in KB (the largest single process), peak of the process tree's summed
    PSS in KB (sampled), bytes of artifacts."""
    command = [str(Path(sys.executable).parent / "reviewbot"), "--mode", "staged",
               "--offline", "--quiet", "--output-dir", str(runs)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if processes is not None:
        config = runs.parent / f"processes-{processes}.toml"
        config.write_text(f"[limits]\nprocesses = {processes}\n")
        env["REVIEWBOT_CONFIG"] = str(config)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=repo, env=env, stdout=subprocess.DEVNULL)
    tree_peak = [0]
    sampler = threading.Thread(target=_sample_tree, args=(process, tree_peak), daemon=True)
    sampler.start()
    process.wait()
    seconds = time.perf_counter() - started
    sampler.join()
    # A review that stops on an error (2, 3) is fast and measures nothing.
    if process.returncode not in (0, 1):
        sys.exit(f"reviewbot exited {process.returncode}, so its time means nothing")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    newest = sorted(p for p in runs.iterdir() if p.is_dir())[-1]
    size = sum(p.stat().st_size for p in newest.iterdir())
    return seconds, max(peak, before), tree_peak[0], size


def _sample_tree(process: subprocess.Popen[bytes], peak: list[int]) -> None:
    while process.poll() is None:
        peak[0] = max(peak[0], sum(_pss_kb(pid) for pid in _tree(process.pid)))
        time.sleep(0.01)


def _tree(pid: int) -> list[int]:
    pids, at = [pid], 0
    while at < len(pids):
        try:
            children = Path(f"/proc/{pids[at]}/task/{pids[at]}/children").read_text().split()
        except OSError:
            children = []
        pids += [int(child) for child in children]
        at += 1
    return pids


def _pss_kb(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0
    line = next((line for line in status.splitlines() if line.startswith("Pss:")), "")
    return int(line.split()[1]) if line else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=150_000)
    parser.add_argument("--processes", type=int, default=None,
                        help="limits.processes for the runs (default: reviewbot's default)")
    parser.add_argument("--cache", type=Path, default=Path(__file__).parent / ".cache")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="reviewbot-large-"))
    try:
        files = django_files(args.cache, work)
        print("| staged change | files | lines | seconds | peak RSS MB (largest process) "
              "| peak PSS MB (processes summed) | artifacts MB |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for share in (4, 2, 1):
            lines = args.lines // share
            repo = work / f"repo-{lines}"
            count, total = stage(files, work / "django-src", repo, lines)
            # One run per process: ru_maxrss of children is the largest so far, so sizes
            # are measured from the smallest up.
            runs = work / f"runs-{lines}"
            runs.mkdir()
            seconds, peak_kb, tree_kb, size = measure(repo, runs, args.processes)
            print(f"| {share and f'1/{share}' if share > 1 else 'all'} | {count} | {total:,} | "
                  f"{seconds:.1f} | {peak_kb / 1024:.0f} | {tree_kb / 1024:.0f} "
                  f"| {size / 1e6:.1f} |")
        print(f"\ngoal (one process, `--processes 1`): {GOAL_LINES:,} lines in <= {GOAL_SECONDS} s "
              f"and <= {GOAL_MB} MB, time and memory linear in the change")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
