"""bandit and reviewbot's offline rules on the same real changes.

Two corpora, both from PyPI releases (nothing here was written to match either tool):

1. Vulnerability fixes (bench/vulnerability_fixes.py): the change that brings a fixed
   vulnerability back (fixed release -> vulnerable release, the fixed file only). Does a
   finding land on a vulnerable line, per class? Are the units holding them tagged
   `security_sensitive`?
2. Ordinary changes (the release pairs of bench/corpus.py): security findings per 100 units
   on added lines, the share of units tagged `security_sensitive`, and every finding one tool
   makes that the other does not (bandit by test id, reviewbot by rule id).

bandit runs on the whole new file and is then held to the added lines, as reviewbot is.

    python bench/bandit_parity.py [--cache bench/.cache] [--only fixes|releases]
        [--round N] [--whole-release] [--list] [--package NAME ...]

bandit and ruff come with the bench extra (`pip install -e '.[bench]'`); without one of them
its columns say "not installed" and reviewbot's figures are still printed.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import PAIRS, add_package_option, git, only, release_repo
from vulnerability_fixes import FIXES, VulnFix

SECURITY = ("security", "secrets")
BIN = Path(sys.executable).parent
Json = dict[str, Any]
PEERS = ("bandit", "ruff")
INSTALLED = frozenset(name for name in PEERS if (BIN / name).exists())


def cell(peer: str, text: str) -> str:
    """A peer's figure, or why there is none (0 would read as "found nothing")."""
    return text if peer in INSTALLED else "not installed"


# --- fetching releases -----------------------------------------------------------------------

_ARCHIVE = re.compile(r"^(?P<name>.+?)-(?P<version>\d[^-]*?)(-.*\.whl|\.tar\.gz|\.zip)$")


def fetch_release(package: str, version: str, cache: Path) -> Path:
    """A wheel if there is one, else the sdist; downloaded once into the cache."""
    cache.mkdir(parents=True, exist_ok=True)
    for archive in sorted(cache.iterdir()):
        match = _ARCHIVE.match(archive.name)
        if match and match["version"] == version and _normal(match["name"]) == _normal(package):
            return archive
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d",
                    str(cache), f"{package}=={version}"], check=True,
                   stderr=subprocess.DEVNULL)
    return fetch_release(package, version, cache)


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def extract(archive: Path, into: Path) -> None:
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as wheel:
            wheel.extractall(into)  # noqa: S202 (zipfile drops `..` and absolute names)
    else:
        with tarfile.open(archive) as tar:
            tar.extractall(into, filter="data")


def find(root: Path, suffix: str) -> Path:
    found = sorted((p for p in root.rglob(Path(suffix).name)
                    if p.as_posix().endswith("/" + suffix)), key=lambda p: len(p.parts))
    if not found:
        raise SystemExit(f"{suffix} is not in {root}")
    return found[0]


# --- running the tools -----------------------------------------------------------------------

@dataclass
class Review:
    findings: list[Json]
    units: list[Json]
    tagged: dict[str, bool]


def run_reviewbot(repo: Path, runs: Path) -> Review:
    out = subprocess.run([str(BIN / "reviewbot"), "--mode", "pr", "--base", "HEAD~1",
                          "--offline", "--format", "json", "--output-dir", str(runs)],
                         cwd=repo, capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1):
        raise SystemExit(f"reviewbot failed in {repo}: {out.stderr}")
    report = json.loads(out.stdout)
    run_dir = runs / report["run_id"]
    units = json.loads((run_dir / "step1_diff.json").read_text())["units"]
    rated = json.loads((run_dir / "step2_rules.json").read_text())["units"]
    tagged = {u["unit_id"]: "security_sensitive" in u["tags"] for u in rated}
    return Review(findings=report["findings"], units=units, tagged=tagged)


def run_bandit(repo: Path, files: list[str]) -> list[Json]:
    if not files or "bandit" not in INSTALLED:
        return []
    out = subprocess.run([str(BIN / "bandit"), "-f", "json", "-q", *files], cwd=repo,
                         capture_output=True, text=True, check=False)
    results = list(json.loads(out.stdout or "{}").get("results", []))
    for result in results:
        result["filename"] = result["filename"].removeprefix("./")
    return results


def run_ruff(repo: Path, files: list[str]) -> list[Json]:
    """ruff's S rules (bandit's checks re-implemented), as {"test_id", "line_range"} like
    bandit's results."""
    if not files or "ruff" not in INSTALLED:
        return []
    out = subprocess.run([str(BIN / "ruff"), "check", "--isolated", "--no-cache", "--select",
                          "S", "--output-format", "json", "--exit-zero", *files], cwd=repo,
                         capture_output=True, text=True, check=False)
    return [{"test_id": r["code"], "filename": Path(r["filename"]).relative_to(repo.resolve())
             .as_posix(), "line_number": r["location"]["row"],
             "line_range": list(range(r["location"]["row"], r["end_location"]["row"] + 1)),
             "issue_text": r["message"]} for r in json.loads(out.stdout or "[]")
            # Its S rules only: a file it cannot parse (a template) is not a finding.
            if (r["code"] or "").startswith("S")]


def added_lines(repo: Path) -> dict[str, set[int]]:
    diff = subprocess.run(["git", "diff", "-U0", "HEAD~1", "HEAD"], cwd=repo,
                          capture_output=True, text=True, check=True).stdout
    added: dict[str, set[int]] = defaultdict(set)
    path = ""
    for line in diff.splitlines():
        if line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else ""
        elif line.startswith("@@") and path:
            match = re.search(r"\+(\d+)(?:,(\d+))?", line)
            if match:
                start, count = int(match.group(1)), int(match.group(2) or 1)
                added[path].update(range(start, start + count))
    return added


def bandit_lines(result: Json) -> set[int]:
    return set(result.get("line_range") or [result["line_number"]])


def finding_lines(finding: Json) -> set[int]:
    return set(range(finding["start_line"], finding["end_line"] + 1))


def unit_added(unit: Json) -> set[int]:
    hunk = unit.get("hunk") or {}
    return {line["new_lineno"] for line in hunk.get("lines", ())
            if line["kind"] == "add" and line.get("new_lineno")}


# --- 1. vulnerability fixes ------------------------------------------------------------------

@dataclass
class FixResult:
    fix: VulnFix
    vulnerable: set[int]
    reviewbot: list[str]
    bandit: list[str]
    ruff: list[str]
    units: int
    tagged: int


def review_fix(fix: VulnFix, cache: Path, work: Path, whole: bool = False) -> FixResult:
    case = work / re.sub(r"\W+", "-", fix.name)
    texts = []
    found = []
    for version in (fix.fixed, fix.vulnerable):
        release = case / version
        extract(fetch_release(fix.package, version, cache), release)
        found.append(find(release, fix.path))
        texts.append(found[-1].read_text(encoding="utf-8", errors="replace"))
    repo = case / "repo"
    target = repo / fix.path
    if whole:  # the fixed release's every file, so the fix's imports resolve in the project
        shutil.copytree(found[0].parents[len(Path(fix.path).parts) - 1], repo)
    target.parent.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q")
    for version, text in zip((fix.fixed, fix.vulnerable), texts, strict=True):
        target.write_text(text, encoding="utf-8")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", version)
    lines = texts[1].splitlines()
    vulnerable = {n for n in added_lines(repo).get(fix.path, set())
                  if any(marker in lines[n - 1] for marker in fix.markers)}
    if not vulnerable:
        raise SystemExit(f"{fix.name}: no added line matches the markers")
    review = run_reviewbot(repo, case / "runs")
    ours = sorted({f["rule_id"] for f in review.findings
                   if f["category"] in SECURITY and finding_lines(f) & vulnerable})
    theirs = sorted({r["test_id"] for r in run_bandit(repo, [fix.path])
                     if bandit_lines(r) & vulnerable})
    ruff = sorted({r["test_id"] for r in run_ruff(repo, [fix.path])
                   if bandit_lines(r) & vulnerable})
    units = [u for u in review.units if unit_added(u) & vulnerable]
    return FixResult(fix=fix, vulnerable=vulnerable, reviewbot=ours, bandit=theirs, ruff=ruff,
                     units=len(units), tagged=sum(review.tagged[u["unit_id"]] for u in units))


def print_fixes(results: list[FixResult]) -> None:
    print("| class | change | fix | vulnerable lines | reviewbot | bandit | ruff S | tagged |")
    print("| --- | --- | --- | ---: | --- | --- | --- | ---: |")
    for r in results:
        held = f" (held out, round {r.fix.round})" if r.fix.held_out else ""
        print(f"| {r.fix.cls} | {r.fix.package} {r.fix.vulnerable} -> {r.fix.fixed}{held} | "
              f"{r.fix.reference} | {len(r.vulnerable)} | {', '.join(r.reviewbot) or '-'} | "
              f"{cell('bandit', ', '.join(r.bandit) or '-')} | "
              f"{cell('ruff', ', '.join(r.ruff) or '-')} | "
              f"{r.tagged}/{r.units} |")
    print("\n| class | fixes | reviewbot flags a vulnerable line | bandit | ruff S | units "
          "tagged security_sensitive |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    classes = sorted({r.fix.cls for r in results}, key=["sql", "command", "path", "xss"].index)
    rounds = sorted({r.fix.round for r in results if r.fix.held_out})
    for cls in [*classes, "all", "held out", *(f"held out, round {n}" for n in rounds)]:
        rows = [r for r in results
                if cls == "all" or cls == r.fix.cls or (cls == "held out" and r.fix.held_out)
                or cls == f"held out, round {r.fix.round}"]
        ours, theirs = sum(bool(r.reviewbot) for r in rows), sum(bool(r.bandit) for r in rows)
        ruff = sum(bool(r.ruff) for r in rows)
        units, tagged = sum(r.units for r in rows), sum(r.tagged for r in rows)
        print(f"| {cls} | {len(rows)} | {ours} ({pct(ours, len(rows))}) | "
              f"{cell('bandit', f'{theirs} ({pct(theirs, len(rows))})')} | "
              f"{cell('ruff', f'{ruff} ({pct(ruff, len(rows))})')} | "
              f"{tagged}/{units} ({pct(tagged, units)}) |")


# --- 2. ordinary changes ---------------------------------------------------------------------

@dataclass
class ReleaseResult:
    name: str
    units: int
    tagged: int
    ours: list[Json]
    theirs: list[Json]
    ours_only: list[str] = field(default_factory=list)
    theirs_only: list[str] = field(default_factory=list)


def review_release(pair: tuple[str, str, str, str], cache: Path, work: Path) -> ReleaseResult:
    registry, package, old, new = pair
    repo = release_repo(registry, package, old, new, cache, work / package)
    added = added_lines(repo)
    review = run_reviewbot(repo, work / "runs")
    ours = [f for f in review.findings if f["category"] in SECURITY]
    python = sorted(p for p in added if p.endswith(".py"))
    theirs = [r for r in run_bandit(repo, python)
              if bandit_lines(r) & added.get(r["filename"], set())]
    result = ReleaseResult(name=f"{package} {old} -> {new}", units=len(review.units),
                           tagged=sum(review.tagged.values()), ours=ours, theirs=theirs)
    for r in theirs:
        if not any(f["file_path"] == r["filename"] and finding_lines(f) & bandit_lines(r)
                   for f in ours):
            result.theirs_only.append(f"{r['test_id']} {r['filename']}:{r['line_number']} "
                                      f"{r['issue_text']}")
    for f in ours:
        if not any(r["filename"] == f["file_path"] and finding_lines(f) & bandit_lines(r)
                   for r in theirs):
            result.ours_only.append(f"{f['rule_id']} ({f['severity']}) "
                                    f"{f['file_path']}:{f['start_line']} {f['message']}")
    return result


def print_releases(results: list[ReleaseResult], listing: bool) -> None:
    print("| change | units | reviewbot security findings | bandit findings on added lines | "
          "units tagged security_sensitive |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for r in results:
        print(f"| {r.name} | {r.units} | {len(r.ours)} | {cell('bandit', str(len(r.theirs)))} | "
              f"{pct(r.tagged, r.units)} |")
    units = sum(r.units for r in results)
    ours, theirs = sum(len(r.ours) for r in results), sum(len(r.theirs) for r in results)
    print(f"| **all {len(results)}** | {units} | {ours} ({100 * ours / units:.1f} / 100 units) "
          f"| {cell('bandit', f'{theirs} ({100 * theirs / units:.1f} / 100 units)')} | "
          f"{pct(sum(r.tagged for r in results), units)} |")
    if "bandit" not in INSTALLED:
        return
    missed = Counter(line.split()[0] for r in results for line in r.theirs_only)
    print("\nbandit findings reviewbot lacks, by test id: "
          + (", ".join(f"{k} {n}" for k, n in missed.most_common()) or "none"))
    extra = Counter(line.split()[0] for r in results for line in r.ours_only)
    print("reviewbot security findings bandit lacks, by rule: "
          + (", ".join(f"{k} {n}" for k, n in extra.most_common()) or "none"))
    if listing:
        for r in results:
            for line in r.theirs_only:
                print(f"  bandit only  {r.name}: {line}")
            for line in r.ours_only:
                print(f"  reviewbot only  {r.name}: {line}")


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path(__file__).parent / ".cache")
    parser.add_argument("--only", choices=("fixes", "releases"))
    parser.add_argument("--round", type=int, action="append", dest="rounds",
                        help="only the vulnerability fixes of this round (0: the fixes the "
                             "rules were written against); repeatable")
    parser.add_argument("--whole-release", action="store_true",
                        help="commit the fixed release's every file before the change, not "
                             "only the fixed file (the project's other modules present)")
    parser.add_argument("--list", action="store_true",
                        help="print every finding one tool makes on ordinary changes that "
                             "the other does not")
    add_package_option(parser)
    args = parser.parse_args()
    fixes_run = only([f for f in FIXES if args.rounds is None or f.round in args.rounds],
                     lambda fix: fix.package, args.packages, strict=False)
    releases_run = only([p for p in PAIRS if p[0] == "pypi"], lambda pair: pair[1],
                        args.packages, strict=False)
    unknown = ({name.lower() for name in args.packages or ()}
               - {fix.package.lower() for fix in fixes_run}
               - {pair[1].lower() for pair in releases_run})
    if unknown:
        raise SystemExit(f"no fix or release of {', '.join(sorted(unknown))} in this bench")
    missing = [name for name in PEERS if name not in INSTALLED]
    if missing:
        print(f"{' and '.join(missing)} not installed in this environment (pip install -e "
              "'.[bench]'): reviewbot's figures only\n")
    work = Path(tempfile.mkdtemp(prefix="reviewbot-parity-"))
    try:
        if args.only != "releases" and fixes_run:
            fixes = []
            for fix in fixes_run:
                print(f"vulnerability fix: {fix.name} ...", file=sys.stderr)
                fixes.append(review_fix(fix, args.cache, work, args.whole_release))
            print_fixes(fixes)
            print()
        if args.only != "fixes" and releases_run:
            releases = []
            for pair in releases_run:
                print(f"release: {pair[1]} {pair[2]} -> {pair[3]} ...", file=sys.stderr)
                releases.append(review_release(pair, args.cache, work))
            print_releases(releases, args.list)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
