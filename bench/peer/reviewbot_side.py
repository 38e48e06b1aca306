"""reviewbot's side of the peer bench: the case's branch reviewed as a user reviews a pull
request (`reviewbot --mode pr --base main --format json`), in a fresh process, with a user
config file and the model and endpoint from the environment. Through the command line rather
than a library call, so whatever the model half becomes is measured as shipped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from .case import BASE
from .score import Remark
from .tool import Outcome

# docs/MODEL.md, "A local model on a CPU": the settings the model half is measured with.
CPU_SETTINGS = """[limits]                 # a model on a CPU (docs/MODEL.md)
timeout_s = 600          # one request
model_deadline_s = 3600  # the whole model phase
unit_seconds = 900       # one unit's conversation
concurrency = 1          # one request at a time: a CPU serves one well
reply_tokens = 512       # the longest answer asked for
"""
# Longer than the model phase's own deadline: a review that outlives it failed.
TIMEOUT_S = 4200
_TEXT_CHARS = 1000


def _remark(finding: dict[str, Any]) -> Remark:
    text = f"{finding.get('title', '')}\n{finding.get('message', '')}"
    return Remark(path=str(finding["file_path"]), start=int(finding["start_line"]),
                  end=int(finding.get("end_line") or finding["start_line"]),
                  text=text[:_TEXT_CHARS])


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _recorded(run_dir: Path) -> tuple[Remark, ...]:
    """The model's own findings as it recorded them (step 7), before the verifier merged
    them into rule findings or moved them."""
    reviews = _load(run_dir / "step7_review.json").get("reviews") or []
    return tuple(_remark(f) for review in reviews for f in review.get("recorded") or ())


def _by_purpose(run_dir: Path) -> dict[str, dict[str, int]]:
    """Calls, tokens and milliseconds by what they were for, as the run's ledger says."""
    calls = _load(run_dir / "step9_model_calls.json").get("calls") or []
    totals: dict[str, dict[str, int]] = defaultdict(lambda: {"calls": 0, "tokens": 0, "ms": 0})
    for call in calls:
        entry = totals[str(call.get("purpose", "?"))]
        entry["calls"] += 1
        entry["tokens"] += int(call.get("tokens_in") or 0) + int(call.get("tokens_out") or 0)
        entry["ms"] += int(call.get("latency_ms") or 0)
    return dict(totals)


def environment(base_url: str, model: str, config: Path, home: Path) -> dict[str, str]:
    """The environment a user's run has: their config file, model and endpoint; nothing of
    the bench's own (no REVIEWBOT_* or OPENAI_* it happens to carry)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("REVIEWBOT_", "OPENAI_", "GITHUB_", "GITLAB_", "CI_"))}
    return {**env, "REVIEWBOT_CONFIG": str(config), "REVIEWBOT_MODEL": model,
            "OPENAI_BASE_URL": base_url, "XDG_CACHE_HOME": str(home / "cache"),
            "NO_COLOR": "1"}


def review(repo: Path, base_url: str, model: str, config: Path, work: Path,
           program: Path | None = None) -> Outcome:
    """`program` is a reviewbot console script to measure (another install, another commit);
    by default the reviewbot this interpreter imports."""
    runs = work / "runs"
    command = [*([str(program)] if program else [sys.executable, "-m", "reviewbot"]),
               "--mode", "pr", "--base", BASE, "--format", "json", "--output-dir", str(runs),
               "--no-cache"]
    try:
        done = subprocess.run(command, cwd=repo, env=environment(base_url, model, config, work),
                              capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return Outcome(failed=f"no answer in {TIMEOUT_S} s")
    if done.returncode not in (0, 1):
        return Outcome(failed=f"exit {done.returncode}: {done.stderr.strip()[-500:]}")
    try:
        report = json.loads(done.stdout)
    except ValueError:
        return Outcome(failed=f"not JSON on stdout: {done.stdout[:200]!r}")
    findings = report.get("findings") or []
    run_dir = runs / str(report.get("run_id"))
    everything = tuple(_remark(f) for f in findings)
    rules = tuple(_remark(f) for f in findings if f.get("source") != "model")
    model_stats = (report.get("stats") or {}).get("model") or {}
    return Outcome(remarks=everything, parts={"model": _recorded(run_dir), "rules": rules},
                   extra={"by_purpose": _by_purpose(run_dir),
                          "mode": model_stats.get("mode"),
                          "notices": done.stderr.strip().splitlines()[-5:]})
