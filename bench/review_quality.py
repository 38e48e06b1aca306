"""Review quality on changes with planted, labelled defects (bench/review_cases.py): the
model's findings (before they merge into rule findings) and everything reviewbot reports
(rules and model), matched to the labels by file and line (within 2 lines).

    python bench/review_quality.py --base-url http://127.0.0.1:11434/v1 --model qwen2.5-coder
    OPENAI_API_KEY=... python bench/review_quality.py --model gpt-4o-mini

Any OpenAI-compatible endpoint works; the key, if one is needed, comes from OPENAI_API_KEY.
Limits come from your user config (`~/.config/reviewbot/config.toml`, or REVIEWBOT_CONFIG), as
for any review: a slow local server needs the ones docs/MODEL.md gives for it. `--stub` runs
against a local server that reviews nothing (a baseline: the rules alone).

Each case's result is appended to `--results` (one JSON line) as soon as it is done, and a
second run skips the cases already there: a run against a slow server can be stopped and
resumed (`--fresh` starts over). Prints precision, recall and F1 per category, model calls,
tokens and wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from msgspec.structs import replace

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from review_cases import CASES, Case, Defect

from reviewbot.config import Config, Origin, load_config
from reviewbot.model import open_session
from reviewbot.repo.git import open_repo
from reviewbot.run.pipeline import run_review
from reviewbot.schema import ChangeRequest, Finding, ReviewResult

SLACK = 2


def build(case: Case, root: Path) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@example.invalid"}
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for files in (case.base, case.change):
        for path, text in files.items():
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        subprocess.run(["git", "add", "-A"], cwd=root, check=True)
        if files is case.base:
            subprocess.run(["git", "commit", "-qm", "base"], cwd=root, check=True, env=env)


def review(case: Case, config: Config, work: Path) -> dict[str, object]:
    """One case reviewed: the model's findings, everything reported, calls, tokens, time."""
    root = work / case.name
    build(case, root)
    session = open_session(config, notify=lambda message: print(f"  {message}",
                                                                file=sys.stderr))
    started = time.monotonic()
    outcome = run_review(open_repo(root), ChangeRequest(mode="staged"), config,
                         root / ".reviewbot" / "runs", session=session)
    raw = outcome.state.review or ReviewResult()
    model = [{"file_path": f.file_path, "start_line": f.start_line, "end_line": f.end_line,
              "category": f.category} for conversation in raw.reviews
             for f in conversation.recorded]
    everything = [{"file_path": f.file_path, "start_line": f.start_line,
                   "end_line": f.end_line, "category": f.category}
                  for f in outcome.report.findings]
    totals = session.ledger.log().totals if session else None
    return {"case": case.name, "model": model, "all": everything,
            "calls": totals.requests if totals else 0,
            "tokens": (totals.tokens_in + totals.tokens_out) if totals else 0,
            "seconds": round(time.monotonic() - started, 1)}


def _findings(rows: list[dict[str, object]]) -> list[Finding]:
    return [Finding(file_path=str(r["file_path"]), start_line=int(str(r["start_line"])),
                    end_line=int(str(r["end_line"])), severity="info",
                    category=r["category"], rule_id="x", title="x", message="x")  # type: ignore[arg-type]
            for r in rows]


def matches(finding: Finding, defect: Defect) -> bool:
    return (finding.file_path == defect.path
            and finding.start_line - SLACK <= defect.line <= finding.end_line + SLACK)


def score(results: list[tuple[Case, list[Finding]]]) -> dict[str, tuple[int, int, int]]:
    """category -> (true positives, false positives, false negatives); "all" for the total."""
    counts: Counter[tuple[str, str]] = Counter()
    for case, findings in results:
        found = [d for d in case.defects if any(matches(f, d) for f in findings)]
        for defect in case.defects:
            counts[(defect.category, "tp" if defect in found else "fn")] += 1
        for finding in findings:
            if not any(matches(finding, d) for d in case.defects):
                counts[(finding.category, "fp")] += 1
    categories = sorted({c for c, _ in counts})
    table = {c: (counts[(c, "tp")], counts[(c, "fp")], counts[(c, "fn")]) for c in categories}
    table["all"] = tuple(sum(v[i] for v in table.values()) for i in range(3))  # type: ignore
    return table


def prf(tp: int, fp: int, fn: int) -> str:
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return f"{precision:.2f} | {recall:.2f} | {f1:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="stub")
    parser.add_argument("--base-url")
    parser.add_argument("--stub", action="store_true",
                        help="a local server that reviews nothing (the rules alone)")
    parser.add_argument("--results", type=Path,
                        help="where each case's result is kept (default: bench/.cache/"
                             "review_quality-MODEL.jsonl)")
    parser.add_argument("--fresh", action="store_true", help="forget earlier results")
    args = parser.parse_args()
    stub = None
    if args.stub:
        from tests.fake_openai import FakeOpenAI

        stub = FakeOpenAI().start()
        stub.finish_every_review()
        args.base_url = stub.base_url
    safe_name = re.sub(r"[^\w.-]", "_", args.model)
    results = args.results or (Path(__file__).parent / ".cache" /
                                f"review_quality-{safe_name}.jsonl")
    results.parent.mkdir(parents=True, exist_ok=True)
    if args.fresh or args.stub:
        results.unlink(missing_ok=True)
    done = {}
    if results.is_file():
        done = {row["case"]: row for row in map(json.loads, results.read_text().splitlines())}
    # The user's limits, as any review has them; the model and endpoint from the flags.
    base = load_config(Path.cwd())
    config = replace(base, model=replace(
        base.model, name=args.model, name_origin=Origin("--model"), base_url=args.base_url,
        base_url_origin=Origin("--base-url")))
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="reviewbot-quality-") as work:
        for index, case in enumerate(CASES, 1):
            if case.name in done:
                continue
            elapsed = time.monotonic() - started
            print(f"[{index}/{len(CASES)}] {case.name} ({elapsed:.0f} s so far)",
                  file=sys.stderr, flush=True)
            row = review(case, config, Path(work))
            done[case.name] = row
            with results.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")
    if stub is not None:
        stub.stop()
    rows = [done[case.name] for case in CASES]
    calls = sum(int(str(r["calls"])) for r in rows)
    tokens = sum(int(str(r["tokens"])) for r in rows)
    seconds = sum(float(str(r["seconds"])) for r in rows)
    print(f"model: {args.model} at {args.base_url or 'the SDK default'}; "
          f"{len(CASES)} changes, {sum(len(c.defects) for c in CASES)} planted defects; "
          f"{calls} model calls, {tokens:,} tokens, {seconds:.0f} s of review\n")
    print("| category | model: precision | recall | F1 | reviewbot: precision | recall | F1 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    model_table = score([(case, _findings(done[case.name]["model"]))  # type: ignore[arg-type]
                         for case in CASES])
    all_table = score([(case, _findings(done[case.name]["all"]))  # type: ignore[arg-type]
                       for case in CASES])
    for category in sorted(set(model_table) | set(all_table), key=lambda c: (c == "all", c)):
        print(f"| {category} | {prf(*model_table.get(category, (0, 0, 0)))} | "
              f"{prf(*all_table.get(category, (0, 0, 0)))} |")
    print(json.dumps({"calls": calls, "tokens": tokens, "seconds": round(seconds, 1)}),
          file=sys.stderr)


if __name__ == "__main__":
    main()
