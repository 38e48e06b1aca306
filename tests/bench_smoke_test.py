"""The benches that exercise the model phase start and finish on tiny inputs, against the
local OpenAI-compatible test server they bring: a bench that no longer runs fails here, not
the day someone measures with it. Figures are not checked (timing belongs to the benches)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("command", [
    ["bench/model_phase.py", "--units", "2", "--latency", "0.01"],
    ["bench/review_quality.py", "--stub", "--fresh"],
], ids=["model_phase", "review_quality"])
def test_a_model_bench_runs_to_its_table(command: list[str], tmp_path: Path) -> None:
    extra = ["--results", str(tmp_path / "results.jsonl")] if "--stub" in command else []
    done = subprocess.run([sys.executable, *command, *extra], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "| ---" in done.stdout
