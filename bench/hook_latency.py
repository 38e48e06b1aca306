"""Whole-process time of the pre-commit hook (`reviewbot --mode staged --offline`) next to
`bandit` plus `detect-secrets-hook` on the same files (what a user would otherwise put in
their hooks), on three staged changes:

- edits: 20 real modules (GitPython's), each committed without its last 25 lines and then
  staged whole: 500 added lines;
- new files: 20 whole modules of 80-200 lines (rich's, about 2,600 lines) staged as new;
- minified: one 5 MB line of minified JavaScript (bandit does not read JavaScript: the
  comparison is detect-secrets-hook alone).

Runs alternate between the tools; medians. Every command runs with bytecode caching on, as
an installed hook does (this machine sets PYTHONDONTWRITEBYTECODE, which would make an
editable install recompile its modules on every run), after one warm-up run.

    python bench/hook_latency.py [--runs 9] [--shape edits|new|minified|all]

Needs the bench extra (`pip install -e '.[bench]'`) for bandit.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FILES, LINES_PER_FILE = 20, 25
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
GIT_ENV = {**ENV, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@example.invalid"}


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


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, env=GIT_ENV)


def build_edits(root: Path) -> list[str]:
    _git(root.parent, "init", "-q", str(root))
    names = []
    for index, source in enumerate(source_files()):
        name = f"pkg/m{index:02d}_{source.name}"
        lines = source.read_text().splitlines(keepends=True)
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(lines[:-LINES_PER_FILE]))
        names.append((name, "".join(lines)))
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    for name, full in names:
        (root / name).write_text(full)
    _git(root, "add", "-A")
    return [name for name, _ in names]


def small_modules() -> list[Path]:
    import rich

    package = Path(rich.__file__).parent
    return sorted(p for p in package.glob("*.py")
                  if 80 <= len(p.read_text().splitlines()) <= 200)[:FILES]


def build_new(root: Path) -> list[str]:
    _git(root.parent, "init", "-q", str(root))
    _git(root, "commit", "-q", "--allow-empty", "-m", "empty")
    names = []
    for index, source in enumerate(small_modules()):
        name = f"pkg/m{index:02d}_{source.name}"
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source.read_text())
        names.append(name)
    _git(root, "add", "-A")
    return names


def build_minified(root: Path) -> list[str]:
    _git(root.parent, "init", "-q", str(root))
    _git(root, "commit", "-q", "--allow-empty", "-m", "empty")
    rng = random.Random(7)  # noqa: S311 (sample data, not a secret)
    parts, size = [], 0
    while size < 5_000_000:
        word = "".join(rng.choice("abcdefghij") for _ in range(20))
        part = (f"function f{rng.randrange(10**6)}(a,b){{return a+b*{rng.randrange(99)}}}"
                f'var v{rng.randrange(10**6)}="{word}";')
        parts.append(part)
        size += len(part)
    (root / "bundle.js").write_text("".join(parts))
    _git(root, "add", "-A")
    return ["bundle.js"]


SHAPES = {"edits": build_edits, "new": build_new, "minified": build_minified}


def timed(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def measure(shape: str, work: Path, runs: int) -> None:
    repo = work / shape
    files = SHAPES[shape](repo)
    added = subprocess.run(["git", "diff", "--cached", "--numstat"], cwd=repo, check=True,
                           capture_output=True, text=True).stdout.split()
    reviewbot = [tool("reviewbot"), "--mode", "staged", "--offline",
                 "--output-dir", str(work / "runs")]
    others = {"detect-secrets-hook": [tool("detect-secrets-hook"), *files]}
    if shape != "minified":
        others = {"bandit": [tool("bandit"), "-q", *files], **others}
    for command in (reviewbot, *others.values()):
        timed(command, repo)  # warm the file cache and write bytecode once for everyone
    ours: list[float] = []
    theirs: dict[str, list[float]] = {name: [] for name in others}
    for _ in range(runs):
        ours.append(timed(reviewbot, repo))
        for name, command in others.items():
            theirs[name].append(timed(command, repo))
    med = statistics.median
    total = sum(med(times) for times in theirs.values())
    print(f"\n{shape}: {len(files)} files, {sum(int(n) for n in added[0::3]):,} added lines "
          f"({runs} runs, medians)")
    print("| command | median s |")
    print("| --- | ---: |")
    print(f"| reviewbot --mode staged --offline | {med(ours):.3f} |")
    for name, times in theirs.items():
        print(f"| {name} FILES | {med(times):.3f} |")
    print(f"| {' + '.join(theirs)} | {total:.3f} |")
    print(f"ratio: reviewbot / ({' + '.join(theirs)}) = {med(ours) / total:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--shape", choices=(*SHAPES, "all"), default="all")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="reviewbot-bench-"))
    try:
        for shape in SHAPES if args.shape == "all" else (args.shape,):
            measure(shape, work, args.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
