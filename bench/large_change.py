"""A very large staged change: Django's Python modules staged as new files in an empty
repository (about 900 files, 135,000 lines by default), reviewed by the hook
(`reviewbot --mode staged --offline`): wall time, peak memory (RSS) and the size of the
run's artifacts, at several sizes to show how they grow.

    python bench/large_change.py [--lines 135000] [--cache bench/.cache]

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
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import fetch, git, unpack

VERSION = "5.0"


def django_files(cache: Path, work: Path) -> list[Path]:
    source = work / "django-src"
    source.mkdir()
    git(source, "init", "-q")
    unpack(fetch("pypi", "django", VERSION, cache), source)
    return sorted(p for p in source.rglob("*.py") if ".git" not in p.parts)


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


def measure(repo: Path, runs: Path) -> tuple[float, int, int]:
    """Seconds, peak RSS in KB (of the reviewbot process), bytes of artifacts."""
    command = [str(Path(sys.executable).parent / "reviewbot"), "--mode", "staged",
               "--offline", "--quiet", "--output-dir", str(runs)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    subprocess.run(command, cwd=repo, env=env, stdout=subprocess.DEVNULL, check=False)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    newest = sorted(p for p in runs.iterdir() if p.is_dir())[-1]
    size = sum(p.stat().st_size for p in newest.iterdir())
    return seconds, max(peak, before), size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=135_000)
    parser.add_argument("--cache", type=Path, default=Path(__file__).parent / ".cache")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="reviewbot-large-"))
    try:
        files = django_files(args.cache, work)
        print("| staged change | files | lines | seconds | peak RSS MB | artifacts MB |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for share in (4, 2, 1):
            lines = args.lines // share
            repo = work / f"repo-{lines}"
            count, total = stage(files, work / "django-src", repo, lines)
            # One run per process: ru_maxrss of children is the largest so far, so sizes
            # are measured from the smallest up.
            seconds, peak_kb, size = measure(repo, work / f"runs-{lines}")
            print(f"| {share and f'1/{share}' if share > 1 else 'all'} | {count} | {total:,} | "
                  f"{seconds:.1f} | {peak_kb / 1024:.0f} | {size / 1e6:.1f} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
