"""reviewbot against a real llama.cpp server (SmolLM2-135M on the CPU), through its real code
path: the one call that reviews a small change (and describes a pull request), the planner's
structured answer on a large change, the agent's tool loop on a unit the rules see risk in (a
forced tool call: the model is too small to choose one), the structured fallback and the
suggestion call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reviewbot.cli import main
from reviewbot.model.servers import remember_without_tools
from tests.conftest import AGENT_ON_SMALL_CHANGES, GitFixture
from tests.llama.conftest import ForcingProxy
from tests.model.helpers import PLANNED

ADDED = ("import os\n\n\ndef export(rows, path):\n    handle = open(path, 'w')\n"
         "    for row in rows:\n        handle.write(row)\n    return path\n")
LEAK = 5  # the `handle = open(...)` line
FINDING = {"file_path": "app/export.py", "start_line": LEAK, "end_line": LEAK,
           "severity": "warning", "category": "bug", "title": "File handle never closed",
           "message": "The export file stays open until garbage collection.",
           "evidence": "handle = open(path, 'w')",
           "fix_description": "Open the file in a with block."}


@pytest.fixture
def change(repo: GitFixture, monkeypatch: pytest.MonkeyPatch) -> GitFixture:
    repo.write("app/__init__.py", "")
    repo.commit("base")
    repo.write("app/export.py", ADDED)
    repo.stage()
    config = Path.home() / ".config" / "reviewbot" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    # What fits a 135M model on two CPU cores (docs: "a local model").
    config.write_text("[limits]\ntimeout_s = 300\nmodel_deadline_s = 900\nconcurrency = 1\n"
                      "reply_tokens = 512\nunit_turns = 4\nunit_seconds = 600\n"
                      "max_model_calls = 20\n" + AGENT_ON_SMALL_CHANGES)
    monkeypatch.setenv("REVIEWBOT_MODEL", "smollm2")
    return repo


def review(change: GitFixture, base_url: str,
           monkeypatch: pytest.MonkeyPatch) -> tuple[int, Path]:
    """The exit code and the run's folder."""
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    code = main(["--repo", str(change.root), "--format", "json", "--no-cache"])
    return code, sorted((change.root / ".reviewbot" / "runs").glob("2*"))[-1]


def artifact(run: Path, name: str) -> Any:
    return json.loads(next(run.glob(f"step*_{name}.json")).read_text())


def test_the_tool_loop_with_real_tool_calls(
        change: GitFixture, forcing_proxy: ForcingProxy, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Turn one is forced to record_finding, turn two to finish: llama.cpp parses both into
    tool calls, reviewbot runs them, sends the results back in llama.cpp's own template, and
    the finding is verified, reported and given a suggestion by the model."""
    def force(body: dict[str, Any]) -> dict[str, Any]:
        done = any(m.get("role") == "tool" for m in body["messages"])
        return ({"name": "finish", "arguments": {"summary": "one leak"}} if done else
                {"name": "record_finding", "arguments": FINDING})

    forcing_proxy.force = force
    code, run = review(change, forcing_proxy.base_url, monkeypatch)
    report = json.loads(capsys.readouterr().out)
    [conversation] = artifact(run, "review")["reviews"]
    assert (conversation["mode"], conversation["stop_reason"]) == ("tools", "finished")
    assert (conversation["tool_calls"], conversation["text_tool_calls"]) == (2, 0)
    assert conversation["tokens"] > 0
    # The second turn carried the call and its result, and llama.cpp took them.
    second = next(b for b in forcing_proxy.received
                  if any(m.get("role") == "tool" for m in b["messages"]))
    assert any(m.get("tool_calls") for m in second["messages"] if m["role"] == "assistant")
    assert json.loads(next(m["content"] for m in second["messages"]
                           if m["role"] == "tool")) == {"recorded": "F1"}
    [finding] = [f for f in report["findings"] if f["source"] == "model"]
    assert (finding["title"], finding["start_line"]) == ("File handle never closed", LEAK)
    suggestions = artifact(run, "verified")["suggestions"]
    assert suggestions["asked"] == 1  # a plain-text call to the real model, checked
    calls = artifact(run, "model_calls")["calls"]
    assert {c["purpose"] for c in calls} == {"review", "suggestion"}  # small: no plan
    assert all(c["outcome"] in ("ok", "invalid_output", "cut") for c in calls)
    assert code == 0  # a warning does not fail the run (the fail level is error)


def test_the_planner_answers_in_its_schema(
        change: GitFixture, llama_server: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """llama.cpp turns the plan's JSON schema into a grammar: the answer validates."""
    change.write("app/limits.py", PLANNED)  # a change the model plans
    change.stage()
    monkeypatch.setenv("REVIEWBOT_CONFIG", str(Path.home() / "plan-only.toml"))
    (Path.home() / "plan-only.toml").write_text(
        "[limits]\ntimeout_s = 300\nmodel_deadline_s = 900\nreply_tokens = 512\n"
        "max_model_calls = 2\n")
    _, run = review(change, llama_server, monkeypatch)
    capsys.readouterr()
    plan_calls = [c for c in artifact(run, "model_calls")["calls"]
                  if c["purpose"] == "planner"]
    # A reply cut at its bound is asked once more with room; the last one validates.
    assert [c["outcome"] for c in plan_calls] in (["ok"], ["cut", "ok"])
    assert plan_calls[-1]["tokens_in"] > 0 and plan_calls[-1]["tokens_out"] > 0


def test_the_structured_fallback_on_a_real_server(
        change: GitFixture, llama_server: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A server remembered as refusing tools gets one structured answer per unit, in the
    finding schema (a grammar on llama.cpp), checked like any finding."""
    remember_without_tools(llama_server, "smollm2")
    code, run = review(change, llama_server, monkeypatch)
    err = capsys.readouterr().err
    assert "refused tool calls" in err
    [conversation] = artifact(run, "review")["reviews"]
    assert conversation["mode"] == "structured" and conversation["turns"] >= 1
    assert conversation["stop_reason"] in ("finished", "repeated_answer")
    assert conversation["tokens"] > 0
    assert code == 0
    review_calls = [c for c in artifact(run, "model_calls")["calls"]
                    if c["purpose"] == "review"]
    assert review_calls and all(c["outcome"] in ("ok", "invalid_output", "cut")
                                for c in review_calls)


def test_an_unforced_review_ends_cleanly_whatever_the_model_says(
        change: GitFixture, llama_server: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    code, run = review(change, llama_server, monkeypatch)
    out, err = capsys.readouterr()
    assert "internal error" not in err
    report = json.loads(out)
    assert code == 0 and report["stats"]["model"]["calls"] >= 1
    [conversation] = artifact(run, "review")["reviews"]
    assert conversation["stop_reason"] in ("finished", "no_tool_calls", "repeated_answer",
                                           "turn_limit", "tool_call_limit")


def test_one_call_reviews_and_describes_a_small_pull_request(
        repo: GitFixture, llama_server: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A change the rules see no risk in is read in one structured call, its schema (the
    change's files, the defect kinds, every bound) a grammar on llama.cpp; on a pull request
    the same call describes it. Whatever the model says, the answer validates."""
    repo.write("app/paging.py", "def page(items, number, size):\n    return items\n")
    base = repo.commit("base")
    repo.git("checkout", "-q", "-b", "topic")
    repo.write("app/paging.py", "def page(items, number, size):\n"
                                "    start = (number - 1) * size\n"
                                "    return items[start:start + size + 1]\n")
    repo.commit("paging")
    config = Path.home() / ".config" / "reviewbot" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[limits]\ntimeout_s = 300\nmodel_deadline_s = 900\nreply_tokens = 512\n")
    monkeypatch.setenv("REVIEWBOT_MODEL", "smollm2")
    monkeypatch.setenv("OPENAI_BASE_URL", llama_server)
    code = main(["--repo", str(repo.root), "--mode", "pr", "--base", base, "--format", "json",
                 "--no-cache"])
    report = json.loads(capsys.readouterr().out)
    run = sorted((repo.root / ".reviewbot" / "runs").glob("2*"))[-1]
    [review] = artifact(run, "review")["reviews"]
    assert (review["mode"], review["turns"]) == ("change", 1)
    calls = [c for c in artifact(run, "model_calls")["calls"] if c["purpose"] == "review"]
    assert calls and calls[-1]["outcome"] == "ok"
    assert {c["purpose"] for c in artifact(run, "model_calls")["calls"]} <= {"review",
                                                                              "suggestion"}
    assert report["description"] is not None  # from the same call: no description call
    assert code in (0, 1)
