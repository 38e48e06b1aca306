"""The pipeline as stages: events, and re-running later stages from a run's artifacts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewbot.cli import main
from reviewbot.config import Config
from reviewbot.errors import UsageError
from reviewbot.progress.events import Event, Events
from reviewbot.repo.git import open_repo
from reviewbot.run.pipeline import RERUNNABLE, STAGE_NAMES, load_state, rerun, run_review
from reviewbot.schema.units import ChangeRequest
from tests.conftest import GitFixture
from tests.fake_openai import FakeOpenAI
from tests.model.helpers import PLANNED

RISKY = 'import subprocess\n\n\ndef run(p):\n    subprocess.run(f"ls {p}", shell=True)\n'


@pytest.fixture
def staged(repo: GitFixture) -> GitFixture:
    repo.write("README.md", "# x\n")
    repo.commit()
    repo.write("app/run.py", RISKY)
    repo.stage()
    return repo


def test_every_stage_announces_itself_in_order(staged: GitFixture, tmp_path: Path) -> None:
    seen: list[Event] = []
    events = Events()
    events.subscribe(seen.append)
    run_review(open_repo(staged.root), ChangeRequest(mode="staged"), Config(), tmp_path, events)
    assert [e.data["stage"] for e in seen if e.kind == "stage"] == list(STAGE_NAMES)
    planned = next(e for e in seen if e.kind == "planner_update")
    assert planned.data == {"units": 1, "model_units": 0}
    final = seen[-1]
    assert final.kind == "final_report" and final.data["findings"] == 1


def test_load_state_before_a_stage(staged: GitFixture, tmp_path: Path) -> None:
    outcome = run_review(open_repo(staged.root), ChangeRequest(mode="staged"), Config(),
                         tmp_path)
    state = load_state(outcome.run_dir.path, "context")
    assert state.fused == outcome.state.fused and state.bundle is None
    assert state.rules == outcome.state.rules


def test_rerun_from_plan_with_a_model(staged: GitFixture, fake_openai: FakeOpenAI,
                                      monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    staged.write("app/run.py", RISKY + PLANNED)  # a change the model plans
    staged.stage()
    assert main(["--repo", str(staged.root), "--offline", "--quiet"]) == 1
    capsys.readouterr()
    runs = staged.root / ".reviewbot" / "runs"
    [first] = [p for p in runs.iterdir() if p.is_dir()]
    unit_id = json.loads((first / "step1_diff.json").read_text())["units"][0]["unit_id"]
    fake_openai.reply_json({"plan": [{"unit_id": unit_id, "llm_context_level": "full_file",
                                      "reason": "the whole file, please"}]})
    fake_openai.finish_every_review()
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)

    code = main(["rerun", str(first), "--from", "plan", "--model", "other-model",
                 "--format", "json"])

    out = capsys.readouterr().out
    assert code == 1
    second = runs / json.loads(out)["run_id"]
    assert second != first
    assert (second / "step1_diff.json").read_text() == (first / "step1_diff.json").read_text()
    plan = json.loads((second / "step4_llm_plan.json").read_text())
    assert plan["sources"] == {unit_id: "model"}
    assert fake_openai.received[0].body["model"] == "other-model"
    bundle = json.loads((second / "step6_context_bundle.json").read_text())
    assert bundle["items"][0]["final_context_level"] == "full_file"


def test_rerun_refuses_stages_that_read_git(staged: GitFixture, tmp_path: Path) -> None:
    outcome = run_review(open_repo(staged.root), ChangeRequest(mode="staged"), Config(),
                         tmp_path)
    assert "rules" not in RERUNNABLE
    with pytest.raises(UsageError, match="--from must be one of plan"):
        rerun(outcome.run_dir.path, "rules", open_repo(staged.root), Config(), tmp_path)


def test_a_failed_run_ends_its_event_stream_with_an_error(
        staged: GitFixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = tmp_path / "events.jsonl"
    code = main(["--repo", str(staged.root), "--mode", "pr", "--base", "no-such-branch",
                 "--events", str(events)])
    assert code == 2
    last = json.loads(events.read_text().splitlines()[-1])
    assert last["kind"] == "error" and last["data"] == {"exit_code": 2}
    assert "--base no-such-branch is not a commit" in last["message"]


@pytest.mark.parametrize("output", ["json", "text"])
def test_events_on_stdout_end_with_the_report_in_its_format(
        staged: GitFixture, capsys: pytest.CaptureFixture[str], output: str) -> None:
    """`--events -` makes stdout an event stream: the report asked for is its last event,
    not dropped."""
    main(["--repo", str(staged.root), "--events", "-", "--format", output])
    lines = capsys.readouterr().out.splitlines()
    events = [json.loads(line) for line in lines]  # every line is an event
    last = events[-1]
    assert last["kind"] == "report" and last["data"]["format"] == output
    if output == "json":
        assert json.loads(last["data"]["report"])["stats"]["units"] >= 1
    else:
        assert "findings:" in last["data"]["report"]
