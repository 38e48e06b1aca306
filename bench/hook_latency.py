"""Whole-process time of `reviewbot --mode staged --offline` on a staged change of about
20 files / 500 added lines, next to `bandit` plus `detect-secrets-hook` on the same files
(what a user would otherwise put in their pre-commit hooks).

The change is real code: 20 modules of the installed GitPython package, committed without
their last 25 lines and then staged whole. Runs alternate between the tools; medians.

    python bench/hook_latency.py [--runs 9]

Needs the bench extra (`pip install -e '.[bench]'`) for bandit.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FILES, LINES_PER_FILE = 20, 25


def tool(name: str) -> str:
    """A console script next to this interpreter (the venv the bench runs in)."""
    path = Path(sys.executable).parent / name
    if not path.exists():
        sys.exit(f"{name} is not installed in this environment: pip install -e '.[bench]'")
    return str(path)


def source_files() -> list[Path]:
    import git

    package = Path(git.__file__).parent
    candidates = sorted(p for p in package.rglob("*.py") if len(p.read_text().splitlines()) > 80)
    if len(candidates) < FILES:
        sys.exit(f"expected {FILES} modules of 80+ lines in {package}")
    return candidates[:FILES]


def build_repo(root: Path) -> list[str]:
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@example.invalid"}
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    names = []
    for index, source in enumerate(source_files()):
        name = f"pkg/m{index:02d}_{source.name}"
        lines = source.read_text().splitlines(keepends=True)
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(lines[:-LINES_PER_FILE]))
        names.append((name, "".join(lines)))
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "base"], cwd=root, check=True, env=env)
    for name, full in names:
        (root / name).write_text(full)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    return [name for name, _ in names]


def timed(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="reviewbot-bench-"))
    try:
        repo = work / "repo"
        files = build_repo(repo)
        added = subprocess.run(["git", "diff", "--cached", "--numstat"], cwd=repo, check=True,
                               capture_output=True, text=True).stdout.split()
        total_added = sum(int(n) for n in added[0::3])
        reviewbot = [tool("reviewbot"), "--mode", "staged", "--offline",
                     "--output-dir", str(work / "runs")]
        bandit = [tool("bandit"), "-q", *files]
        secrets_hook = [tool("detect-secrets-hook"), *files]
        ours, theirs, bandit_times, secrets_times = [], [], [], []
        timed(reviewbot, repo)  # warm the file cache once for everyone
        for _ in range(args.runs):
            ours.append(timed(reviewbot, repo))
            bandit_times.append(timed(bandit, repo))
            secrets_times.append(timed(secrets_hook, repo))
            theirs.append(bandit_times[-1] + secrets_times[-1])
        med = statistics.median
        print(f"staged change: {len(files)} files, {total_added} added lines; "
              f"{args.runs} runs, medians")
        print("| command | median s |")
        print("| --- | ---: |")
        print(f"| reviewbot --mode staged --offline | {med(ours):.3f} |")
        print(f"| bandit -q FILES | {med(bandit_times):.3f} |")
        print(f"| detect-secrets-hook FILES | {med(secrets_times):.3f} |")
        print(f"| bandit + detect-secrets-hook | {med(theirs):.3f} |")
        print(f"ratio reviewbot / (bandit + detect-secrets-hook) = {med(ours) / med(theirs):.2f} "
              "(target <= 0.50)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
