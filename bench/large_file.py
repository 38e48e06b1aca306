"""One large file staged as new, at growing sizes: the whole hook (`reviewbot --mode staged`,
the entry in .pre-commit-hooks.yaml, no model configured) must grow linearly with the file's
lines and definitions. A file of small functions is the worst case for anything that
compares each line with each function.

    python bench/large_file.py [--sizes 7000,14000,28000] [--runs 3]

Prints seconds per run (median) and microseconds per line; the last column is the ratio of
each size's time per line to the smallest size's (1.0 is linear). The default sizes stay
under the 512 KB a file may have to be read whole (28,000 lines of this module are 500 KB);
a larger file is checked on its added lines only, with no context, by design.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def module(lines: int) -> str:
    """Functions of five lines each, with a class every 50 functions."""
    parts: list[str] = ["import os\n\n"]
    count = 2
    n = 0
    while count < lines:
        if n % 50 == 0:
            parts.append(f"class Group{n}:\n    pass\n\n\n")
            count += 4
        parts.append(f"def f{n}(value):\n    total = value + {n}\n    if total > 10:\n"
                     f"        return os.path.join('a', str(total))\n    return total\n\n\n")
        count += 7
        n += 1
    return "".join(parts)


def staged(root: Path, lines: int) -> None:
    root.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "empty"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    (root / "big.py").write_text(module(lines), encoding="utf-8")
    subprocess.run(["git", "add", "big.py"], cwd=root, check=True, capture_output=True)


def time_hook(root: Path, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "reviewbot", "--mode", "staged", "--quiet",
                               "--repo", str(root)], check=False, capture_output=True, text=True,
                              env={**os.environ, "REVIEWBOT_CONFIG": os.devnull})
        times.append(time.perf_counter() - started)
        # A review that stops on an error (2, 3) is fast and measures nothing.
        if done.returncode not in (0, 1):
            sys.exit(f"reviewbot exited {done.returncode}, so its time means nothing: "
                     f"{done.stderr.strip()[-2000:]}")
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="7000,14000,28000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    print(f"{'lines':>8} {'seconds':>8} {'us/line':>8} {'vs first':>8}")
    first: float | None = None
    with tempfile.TemporaryDirectory() as work:
        for size in sizes:
            root = Path(work) / f"r{size}"
            staged(root, size)
            seconds = time_hook(root, args.runs)
            per_line = seconds / size * 1e6
            first = first or per_line
            print(f"{size:>8} {seconds:>8.2f} {per_line:>8.1f} {per_line / first:>8.2f}")


if __name__ == "__main__":
    main()
