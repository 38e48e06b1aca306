"""Noise on whole, trusted code bases: developer tools whose every line is reviewed as if it
were new (each release's files staged in an empty repository, one run per release), and the
security and secrets findings counted by rule and severity.

These tools run commands, read archives and hold secret-scanner patterns by design, so a
finding here is not a bug report: it is what a user would see if they staged this code.
Errors block a commit, so each error is listed for a reader to judge.

    python bench/whole_trees.py [--cache bench/.cache] [--list] [--package NAME ...]

The releases come from PyPI (the bench cache): nothing in them was written for reviewbot.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import add_package_option, fetch, git, only, unpack

RELEASES = (("pip", "24.0"), ("setuptools", "69.5.1"), ("virtualenv", "20.25.0"),
            ("pre-commit", "3.6.0"), ("GitPython", "3.1.30"), ("bandit", "1.7.7"),
            ("detect-secrets", "1.4.0"))
SECURITY = ("security", "secrets")
BIN = Path(sys.executable).parent


def review_release(package: str, version: str, cache: Path, work: Path) -> list[dict]:
    repo = work / package
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "commit", "-q", "--allow-empty", "-m", "empty")
    unpack(fetch("pypi", package, version, cache), repo)
    git(repo, "add", "-A")
    out = subprocess.run([str(BIN / "reviewbot"), "--mode", "staged", "--offline", "--format",
                          "json", "--output-dir", str(work / "runs")], cwd=repo,
                         capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1):
        raise SystemExit(f"reviewbot failed on {package} {version}: {out.stderr}")
    return [{**f, "release": f"{package} {version}"}
            for f in json.loads(out.stdout)["findings"] if f["category"] in SECURITY]


def python_lines(repo: Path) -> int:
    return sum(len(p.read_bytes().splitlines()) for p in repo.rglob("*.py"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path(__file__).parent / ".cache")
    parser.add_argument("--list", action="store_true", help="list every warning too")
    add_package_option(parser)
    args = parser.parse_args()
    releases = only(RELEASES, lambda release: release[0], args.packages)
    work = Path(tempfile.mkdtemp(prefix="reviewbot-whole-"))
    try:
        findings: list[dict] = []
        lines = 0
        for package, version in releases:
            print(f"reviewing {package} {version} ...", file=sys.stderr)
            findings += review_release(package, version, args.cache, work)
            lines += python_lines(work / package)
        severities = ("error", "warning", "info")
        by_rule = Counter((f["rule_id"], f["severity"]) for f in findings)
        print(f"{len(releases)} releases, {lines:,} lines of Python\n")
        print("| rule | " + " | ".join(severities) + " |")
        print("| --- | " + " | ".join("---:" for _ in severities) + " |")
        for rule in sorted({rule for rule, _ in by_rule}):
            print(f"| {rule} | " + " | ".join(str(by_rule[rule, s]) for s in severities) + " |")
        totals = Counter(f["severity"] for f in findings)
        print("| all | " + " | ".join(str(totals[s]) for s in severities) + " |")
        shown = ("error", "warning") if args.list else ("error",)
        for f in findings:
            if f["severity"] in shown:
                print(f"{f['severity']}: {f['release']}: {f['file_path']}:{f['start_line']} "
                      f"{f['rule_id']}: {f['message'][:140]}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
