"""Security findings on reviewbot's own history: every commit of this repository reviewed as a
pull request against its parent (offline), the findings a new rule would have added to code
its authors wrote and reviewed. A rule's noise on ordinary work, measured on work nobody
wrote for the rules.

    python bench/own_history.py [--repo .] [--limit N] [--grep TEXT]

`--grep` counts only findings whose message holds TEXT (for one rule's new messages, e.g.
"passes its" for the wrapper findings). Prints each finding and the totals by rule.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

SECURITY = ("security", "secrets")


def commits(repo: Path, limit: int) -> list[str]:
    out = subprocess.run(["git", "rev-list", "--first-parent", "--no-merges", "HEAD"],
                         cwd=repo, capture_output=True, text=True, check=True).stdout.split()
    return out[:limit][::-1]


def review(repo: Path, commit: str, runs: Path) -> list[dict[str, object]]:
    reviewbot = Path(sys.executable).parent / "reviewbot"
    out = subprocess.run([str(reviewbot), "--mode", "pr", "--base", f"{commit}~1", "--head",
                          commit, "--offline", "--format", "json", "--output-dir", str(runs)],
                         cwd=repo, capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1):
        return []  # the first commit has no parent; a run that fails is not a finding
    return list(json.loads(out.stdout)["findings"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--limit", type=int, default=10_000)
    parser.add_argument("--grep", default="")
    args = parser.parse_args()
    by_rule: Counter[str] = Counter()
    shown = commits(args.repo, args.limit)
    with tempfile.TemporaryDirectory() as runs:
        for index, commit in enumerate(shown, 1):
            for finding in review(args.repo, commit, Path(runs)):
                if finding["category"] not in SECURITY or args.grep not in str(
                        finding["message"]):
                    continue
                by_rule[str(finding["rule_id"])] += 1
                print(f"{commit[:10]} {finding['file_path']}:{finding['start_line']} "
                      f"{finding['severity']} {finding['rule_id']}: {finding['message']}")
            print(f"[{index}/{len(shown)}]", file=sys.stderr, end="\r")
    print(f"\n{len(shown)} commits; security findings"
          + (f" whose message holds {args.grep!r}" if args.grep else "") + ": "
          + (", ".join(f"{rule} {n}" for rule, n in by_rule.most_common()) or "none"))


if __name__ == "__main__":
    main()
