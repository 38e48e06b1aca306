"""Offline review of real open-source changes: findings per 100 units, by severity, and time.

The corpus is consecutive releases of real projects, taken from the package registries
(PyPI wheels, npm tarballs): each pair becomes a repository with the old release as the
base commit and the new one as the head, and `reviewbot --mode pr --offline` reviews the
head. None of the code was written to match reviewbot's rules.

    python bench/corpus.py [--cache bench/.cache] [--show-findings] [--package NAME ...]

`--package` keeps only the named packages' changes (a quick run; the tests' smoke run gives it
a cache of tiny archives under the same names, so nothing is downloaded).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

# (registry, package, old release, new release)
PAIRS: tuple[tuple[str, str, str, str], ...] = (
    ("pypi", "requests", "2.31.0", "2.32.3"),
    ("pypi", "flask", "2.3.3", "3.0.0"),
    ("pypi", "click", "8.1.3", "8.1.7"),
    ("pypi", "jinja2", "3.1.2", "3.1.4"),
    ("pypi", "urllib3", "2.0.7", "2.2.1"),
    ("pypi", "paramiko", "3.3.1", "3.4.0"),
    ("pypi", "werkzeug", "2.3.7", "3.0.1"),
    ("pypi", "httpx", "0.25.0", "0.27.0"),
    ("pypi", "django", "4.2.9", "4.2.10"),
    ("npm", "express", "4.18.2", "4.19.2"),
    ("npm", "axios", "1.6.0", "1.6.8"),
    ("npm", "ws", "8.14.0", "8.16.0"),
    ("npm", "jsonwebtoken", "9.0.0", "9.0.2"),
)

T = TypeVar("T")

GIT_ENV = {"GIT_AUTHOR_NAME": "corpus", "GIT_AUTHOR_EMAIL": "c@example.invalid",
           "GIT_COMMITTER_NAME": "corpus", "GIT_COMMITTER_EMAIL": "c@example.invalid"}


@dataclass
class Result:
    name: str
    units: int
    files: int
    seconds: float
    severities: Counter[str]
    rules: Counter[str]
    findings: list[dict[str, object]]


def fetch(registry: str, package: str, version: str, cache: Path) -> Path:
    """The release archive, downloaded once into the cache."""
    cache.mkdir(parents=True, exist_ok=True)
    prefixes = {f"{package.replace('-', '_')}-{version}".lower(),
                f"{package}-{version}".lower()}
    # Exactly this version: "django-3.2" must not find Django-3.2.1's wheel.
    found = [p for p in cache.iterdir() for prefix in prefixes
             if p.name.lower().startswith(prefix)
             and p.name[len(prefix):].startswith(("-", ".tar", ".zip", ".tgz"))]
    if found:
        return found[0]
    if registry == "pypi":
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "--only-binary", ":all:", "-d", str(cache), f"{package}=={version}"],
                       check=True, stderr=subprocess.DEVNULL)
    else:
        subprocess.run(["npm", "pack", "--silent", f"{package}@{version}"], cwd=cache,
                       check=True, stdout=subprocess.DEVNULL)
    return fetch(registry, package, version, cache)


def unpack(archive: Path, into: Path) -> None:
    """Release contents into a work tree (wheel metadata and npm's package/ folder removed)."""
    for child in into.iterdir():
        if child.name != ".git":
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as wheel:
            for member in wheel.namelist():
                if ".dist-info/" not in member:
                    wheel.extract(member, into)
    else:
        with tarfile.open(archive) as tar:
            tar.extractall(into, filter="data")
        package = into / "package"
        for child in package.iterdir():
            child.rename(into / child.name)
        package.rmdir()


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, stdout=subprocess.DEVNULL,
                   env={**os.environ, **GIT_ENV})


def release_repo(registry: str, package: str, old: str, new: str, cache: Path,
                 repo: Path) -> Path:
    """A new repository at `repo`: the old release as the base commit, the new as HEAD."""
    repo.mkdir()
    git(repo, "init", "-q")
    for version in (old, new):
        unpack(fetch(registry, package, version, cache), repo)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "--allow-empty", "-m", version)
    return repo


def review_pair(pair: tuple[str, str, str, str], cache: Path, work: Path) -> Result:
    registry, package, old, new = pair
    repo = release_repo(registry, package, old, new, cache, work / package)
    reviewbot = Path(sys.executable).parent / "reviewbot"
    start = time.perf_counter()
    out = subprocess.run([str(reviewbot), "--mode", "pr", "--base", "HEAD~1", "--offline",
                          "--format", "json", "--output-dir", str(work / "runs")],
                         cwd=repo, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if out.returncode not in (0, 1):
        raise SystemExit(f"reviewbot failed on {package}: {out.stderr}")
    doc = json.loads(out.stdout)
    findings = doc["findings"]
    return Result(
        name=f"{package} {old} -> {new}", units=doc["stats"]["units"],
        files=doc["stats"]["files"], seconds=seconds,
        severities=Counter(f["severity"] for f in findings),
        rules=Counter(f["rule_id"] for f in findings), findings=findings,
    )


def add_package_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--package", action="append", dest="packages", metavar="NAME",
                        help="only this package's changes (repeatable): a quick run")


def only(items: Sequence[T], package: Callable[[T], str], packages: list[str] | None,
         *, strict: bool = True) -> list[T]:
    """The items of the packages asked for (every item without --package). A name that
    matches nothing stops the bench: a typo must not print an empty table."""
    if not packages:
        return list(items)
    asked = {name.lower() for name in packages}
    found = [item for item in items if package(item).lower() in asked]
    unknown = asked - {package(item).lower() for item in found}
    if strict and unknown:
        known = sorted({package(item) for item in items})
        raise SystemExit(f"no change of {', '.join(sorted(unknown))} in this bench; its "
                         f"packages: {', '.join(known)}")
    return found


def per100(count: int, units: int) -> str:
    return f"{100 * count / units:.1f}" if units else "-"


def print_table(results: list[Result]) -> None:
    print("| change | files | units | error | warning | info | findings / 100 units | time s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in results:
        total = sum(r.severities.values())
        print(f"| {r.name} | {r.files} | {r.units} | {r.severities['error']} | "
              f"{r.severities['warning']} | {r.severities['info']} | "
              f"{per100(total, r.units)} | {r.seconds:.2f} |")
    units = sum(r.units for r in results)
    sev: Counter[str] = sum((r.severities for r in results), Counter())
    print(f"| **all {len(results)} changes** | {sum(r.files for r in results)} | {units} | "
          f"{sev['error']} | {sev['warning']} | {sev['info']} | "
          f"{per100(sum(sev.values()), units)} | {sum(r.seconds for r in results):.2f} |")
    print(f"\nper 100 units: error {per100(sev['error'], units)}, warning "
          f"{per100(sev['warning'], units)}, info {per100(sev['info'], units)}")
    rules: Counter[str] = sum((r.rules for r in results), Counter())
    print("rules that fired: " + ", ".join(f"{rule} {n}" for rule, n in rules.most_common()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path(__file__).parent / ".cache")
    parser.add_argument("--show-findings", action="store_true",
                        help="print every error and warning, to judge them by hand")
    add_package_option(parser)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="reviewbot-corpus-"))
    try:
        results = []
        for pair in only(PAIRS, lambda pair: pair[1], args.packages):
            print(f"reviewing {pair[1]} {pair[2]} -> {pair[3]} ...", file=sys.stderr)
            results.append(review_pair(pair, args.cache, work))
        print_table(results)
        if args.show_findings:
            for r in results:
                for f in r.findings:
                    if f["severity"] != "info":
                        print(f"{r.name}: {f['file_path']}:{f['start_line']} {f['severity']} "
                              f"{f['rule_id']}: {f['message']}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
