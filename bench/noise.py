"""Noise on real histories: each of a repository's last N commits reviewed offline as a pull
request against its parent, the way a new user would try reviewbot on a project they know.
Prints findings per 100 units by rule and severity, and the most frequent pairs of rule and
top-level folder (where noise gathers: fixtures, scripts, docs).

    python bench/noise.py --repo PATH [--last 1000] [--jobs 2] [--category security]
                          [--grep TEXT] [--list] [--save FILE]

`--list` prints every finding (`commit path:line severity rule: message`); `--save` writes
them as JSON lines, for comparing two versions of reviewbot on the same commits. Merge
commits are skipped: each change is reviewed once, in the commit that made it. A commit whose
review fails (exit 2, 3) is counted apart and named, never read as "no findings".
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple


class Review(NamedTuple):
    commit: str
    units: int
    findings: list[dict[str, Any]]
    failed: str


def commits(repo: Path, last: int) -> list[str]:
    out = subprocess.run(["git", "rev-list", "--no-merges", f"--max-count={last}", "HEAD"],
                         cwd=repo, capture_output=True, text=True, check=True).stdout.split()
    return out[::-1]


def has_parent(repo: Path, commit: str) -> bool:
    return subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{commit}~1"], cwd=repo,
                          capture_output=True, check=False).returncode == 0


def review(repo: Path, commit: str, runs: Path) -> Review:
    if not has_parent(repo, commit):
        return Review(commit, 0, [], "")  # a root commit has nothing to compare with
    reviewbot = Path(sys.executable).parent / "reviewbot"
    out = subprocess.run([str(reviewbot), "--mode", "pr", "--base", f"{commit}~1", "--head",
                          commit, "--offline", "--format", "json", "--output-dir", str(runs)],
                         cwd=repo, capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1):
        return Review(commit, 0, [], f"exit {out.returncode}: {out.stderr.strip()[-300:]}")
    report = json.loads(out.stdout)
    return Review(commit, len(report["units"]), list(report["findings"]), "")


def top_folder(path: str) -> str:
    head, _, rest = path.partition("/")
    return f"{head}/" if rest else "(root)"


def table(title: str, counts: Counter[str], units: int, limit: int = 0) -> list[str]:
    rows = counts.most_common(limit or None)
    lines = [f"\n{title}", "", "| | findings | per 100 units |", "| --- | ---: | ---: |"]
    lines += [f"| {key} | {n} | {100 * n / max(units, 1):.2f} |" for key, n in rows]
    return lines if rows else [f"\n{title}: none"]


def wanted(finding: dict[str, Any], args: argparse.Namespace) -> bool:
    return ((not args.category or finding["category"] == args.category)
            and args.grep in str(finding["message"]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--last", type=int, default=1000, help="commits to review (default 1000)")
    parser.add_argument("--jobs", type=int, default=2, help="reviews run at once (default 2)")
    parser.add_argument("--category", default="", help="count only this category (security…)")
    parser.add_argument("--grep", default="", help="count only findings whose message holds it")
    parser.add_argument("--list", action="store_true", help="print every finding")
    parser.add_argument("--save", type=Path, help="write the findings as JSON lines")
    args = parser.parse_args()
    shown = commits(args.repo, args.last)
    done: list[Review] = []
    with tempfile.TemporaryDirectory() as runs, ThreadPoolExecutor(args.jobs) as pool:
        for result in pool.map(lambda c: review(args.repo, c, Path(runs)), shown):
            done.append(result)
            print(f"[{len(done)}/{len(shown)}]", file=sys.stderr, end="\r")
    units = sum(r.units for r in done)
    found = [(r.commit, f) for r in done for f in r.findings if wanted(f, args)]
    if args.list:
        for commit, f in found:
            print(f"{commit[:10]} {f['file_path']}:{f['start_line']} {f['severity']} "
                  f"{f['rule_id']}: {f['message']}")
    if args.save:
        with args.save.open("w", encoding="utf-8") as out:
            for commit, f in found:
                out.write(json.dumps({"commit": commit, **f}) + "\n")
    failed = [r for r in done if r.failed]
    print(f"\n{args.repo.resolve().name}: {len(shown)} commits, {units} units, "
          f"{len(found)} findings ({100 * len(found) / max(units, 1):.2f} per 100 units)"
          + (f", {len(failed)} reviews failed" if failed else ""))
    for r in failed:
        print(f"  failed {r.commit[:10]}: {r.failed}")
    print("\n".join(
        table("By rule and severity", Counter(f"{f['rule_id']} ({f['severity']})"
                                              for _, f in found), units)
        + table("Most frequent rule and top folder", Counter(
            f"{f['rule_id']} in {top_folder(str(f['file_path']))}" for _, f in found),
            units, 10)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
