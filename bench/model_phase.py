"""The model phase's wall time, calls and tokens on a 40-unit change, against the local
OpenAI-compatible test server answering every request after a fixed latency (0.5 s): at
concurrency 1, 4 and 8, and the re-run of an unchanged change from the result cache.

    python bench/model_phase.py [--units 40] [--latency 0.5]

Each unit is one module with one changed function; the server plays a reviewer that records
nothing and finishes (one request per unit). The goal: the review stage within 1.5x of
ceil(units / concurrency) x latency, and no call on the re-run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from msgspec.structs import replace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reviewbot.config import Config, Limits, ModelConfig, Origin
from reviewbot.model import open_session
from reviewbot.progress.events import Event, Events
from reviewbot.repo.git import open_repo
from reviewbot.run.pipeline import run_review
from reviewbot.schema.units import ChangeRequest
from reviewbot.store.cache import ResultCache
from tests.fake_openai import FakeOpenAI, Received, Scripted, completion


def build(root: Path, units: int) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"}
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for n in range(units):
        path = root / "pkg" / f"m{n:02d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"def f{n}(value):\n    return value\n")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "base"], cwd=root, check=True, env=env)
    for n in range(units):
        (root / "pkg" / f"m{n:02d}.py").write_text(
            f"def f{n}(value):\n    checked = validate(value)\n    return checked\n")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)


def server(latency: float) -> FakeOpenAI:
    fake = FakeOpenAI().start()
    finish = completion(None, tool_calls=[{"id": "c0", "type": "function", "function": {
        "name": "finish", "arguments": '{"summary": "fine"}'}}], tokens=(900, 20))

    def respond(request: Received) -> Scripted:
        if (request.messages[0]["content"] or "").startswith("You plan"):
            return Scripted(body=completion(json.dumps({"plan": []}), tokens=(2000, 10)),
                            delay=latency)
        return Scripted(body=finish, delay=latency)
    fake.responder = respond
    return fake


def measure(root: Path, base_url: str, concurrency: int,
            cache: ResultCache | None) -> dict[str, float]:
    config = replace(Config(), model=ModelConfig(
        name="bench", name_origin=Origin("--model"), base_url=base_url,
        base_url_origin=Origin("--base-url")),
        limits=Limits(concurrency=concurrency, max_model_calls=500, model_deadline_s=600))
    session = open_session(config)
    marks: dict[str, float] = {}
    events = Events()

    def mark(event: Event) -> None:
        if event.kind == "stage":
            marks[event.data["stage"]] = time.monotonic()
    events.subscribe(mark)
    started = time.monotonic()
    outcome = run_review(open_repo(root), ChangeRequest(mode="staged"), config,
                         root / ".reviewbot" / "runs", events, session, cache=cache)
    totals = session.ledger.log().totals if session else None
    return {"run": time.monotonic() - started,
            "plan": marks["fuse"] - marks["plan"],
            "review": marks["verify"] - marks["review"],
            "calls": totals.requests if totals else 0,
            "tokens": (totals.tokens_in + totals.tokens_out) if totals else 0,
            "reviewed": outcome.report.stats.model.reviewed_units}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=int, default=40)
    parser.add_argument("--latency", type=float, default=0.5)
    args = parser.parse_args()
    fake = server(args.latency)
    rows = []
    with tempfile.TemporaryDirectory(prefix="reviewbot-phase-") as work:
        root = Path(work) / "repo"
        build(root, args.units)
        for concurrency in (1, 4, 8):
            figures = measure(root, fake.base_url, concurrency, None)
            rows.append((f"concurrency {concurrency}, no cache", concurrency, figures, False))
        cache = ResultCache(Path(work) / "cache")
        measure(root, fake.base_url, 4, cache)
        figures = measure(root, fake.base_url, 4, cache)
        rows.append(("re-run, unchanged, from the cache", 4, figures, True))
    fake.stop()
    print(f"{args.units} units, server latency {args.latency} s per request\n")
    print("| run | review stage s | goal s | plan s | whole run s | calls | tokens |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, concurrency, f, cached in rows:
        goal = 1.5 * math.ceil(args.units / concurrency) * args.latency
        shown_goal = "0 calls" if cached else f"<= {goal:.2f}"
        print(f"| {name} | {f['review']:.2f} | {shown_goal} | {f['plan']:.2f} | "
              f"{f['run']:.2f} | {f['calls']:.0f} | {f['tokens']:,.0f} |")


if __name__ == "__main__":
    main()
