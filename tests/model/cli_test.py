"""The planner stages through the CLI, with the model up (the fake server) and down."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from reviewbot.cli import main
from tests.conftest import GitFixture
from tests.fake_openai import FakeOpenAI
from tests.model.helpers import KEY, PLANNED

RISKY = 'import subprocess\n\n\ndef run(p):\n    subprocess.run(f"ls {p}", shell=True)\n'



@pytest.fixture(autouse=True)
def reviews_finish(fake_openai: FakeOpenAI) -> None:
    """These tests are about the planner and the boundary: the reviewer has nothing to say."""
    fake_openai.finish_every_review()

@pytest.fixture
def staged(repo: GitFixture, monkeypatch: pytest.MonkeyPatch) -> GitFixture:
    repo.write("README.md", "# x\n")
    repo.commit()
    repo.write("app/run.py", RISKY + PLANNED)  # a change the model plans
    repo.stage()
    monkeypatch.setenv("REVIEWBOT_MODEL", "planner-model")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return repo


def run_dir_of(out: str) -> Path:
    return Path(out.rsplit("artifacts in ", 1)[1].strip())


def test_staged_run_with_the_model(staged: GitFixture, fake_openai: FakeOpenAI,
                                   monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    fake_openai.reply_json({"plan": []})  # a plan that forgets the unit: heuristic fills in

    code = main(["--repo", str(staged.root), "--mode", "staged"])
    out, err = capsys.readouterr()

    assert code == 1  # the rule finding decides the exit code, as offline
    run = run_dir_of(out)
    for name in ("step3_planner_index", "step4_llm_plan", "step5_fused_plan",
                 "step9_model_calls"):
        assert (run / f"{name}.json").is_file(), name
    planner_prompt = fake_openai.received[0].messages[1]["content"]
    assert '"file_path":"app/run.py"' in planner_prompt.replace(" ", "")
    llm_plan = json.loads((run / "step4_llm_plan.json").read_text())
    assert [i["reason"] for i in llm_plan["plan"]] == ["missing_from_model_plan"]
    calls = (run / "step9_model_calls.json").read_text()
    assert json.loads(calls)["calls"][0]["outcome"] == "ok"
    assert KEY not in calls and KEY not in err
    assert err == ""


def test_model_plan_reaches_the_fused_plan(staged: GitFixture, fake_openai: FakeOpenAI,
                                           monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    main(["--repo", str(staged.root), "--offline", "--quiet"])  # learn the unit id
    capsys.readouterr()
    runs = sorted((staged.root / ".reviewbot" / "runs").glob("2*"))
    unit_id = json.loads((runs[-1] / "step9_report.json").read_text())["units"][0]["unit_id"]
    fake_openai.reply_json({"plan": [{
        "unit_id": unit_id, "llm_context_level": "file_context", "skip_review": True,
        "reason": "looks routine",
        "extra_requests": [{"type": "search_callers", "details": None}]}]})

    main(["--repo", str(staged.root)])
    out, _ = capsys.readouterr()

    fused = json.loads((run_dir_of(out) / "step5_fused_plan.json").read_text())["plan"][0]
    assert fused["skip_review"] is False  # high-risk unit: the rules override the skip
    assert fused["reason"] == "rule_high_confidence_fallback"
    assert fused["final_context_level"] == "file_context"
    assert fused["extra_requests"][0]["symbol"] == "run"


def test_server_down_falls_back_with_one_notice(staged: GitFixture,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setattr("reviewbot.model.session.BACKOFF_S", 0.01)

    code = main(["--repo", str(staged.root)])
    out, err = capsys.readouterr()

    assert code == 1  # same as offline: the model being down changes nothing
    notices = err.strip().splitlines()
    assert len(notices) == 2
    assert notices[0].startswith("reviewbot: model unavailable (model_error:")
    assert notices[0].endswith("the heuristic planner took over")
    assert notices[1] == ("reviewbot: the model reviewed 0 of the 1 unit the plan kept "
                          "(1 model_error); the rules' findings stand for the others")
    assert KEY not in err
    llm_plan = json.loads((run_dir_of(out) / "step4_llm_plan.json").read_text())
    assert [i["reason"] for i in llm_plan["plan"]] == ["model_error"]


def test_offline_flag_never_calls_the_model(staged: GitFixture, fake_openai: FakeOpenAI,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    main(["--repo", str(staged.root), "--offline"])
    out, _ = capsys.readouterr()
    assert fake_openai.received == []
    assert not (run_dir_of(out) / "step9_model_calls.json").exists()


def test_a_refused_request_without_a_key_says_which_variable(
        staged: GitFixture, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    fake_openai.reply_status(401, message="Incorrect API key provided")
    main(["--repo", str(staged.root)])
    err = capsys.readouterr().err
    assert "no API key was sent (OPENAI_API_KEY is not set)" in err
    assert "authorization" not in fake_openai.received[0].headers or \
        fake_openai.received[0].headers["authorization"] == "Bearer not-needed"


def test_a_model_without_the_openai_package_runs_offline_and_says_how_to_fix(
        staged: GitFixture, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "openai" else real(name, *a))
    code = main(["--repo", str(staged.root)])
    err = capsys.readouterr().err
    assert code == 1  # the rules' finding, as offline
    assert "the `openai` package is not installed" in err
    assert "pip install 'reviewbot[model]'" in err


def test_a_rerun_whose_model_is_unreachable_says_so(staged: GitFixture,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    main(["--repo", str(staged.root), "--offline"])
    run = run_dir_of(capsys.readouterr().out)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setattr("reviewbot.model.session.BACKOFF_S", 0.01)
    assert main(["rerun", str(run), "--from", "review"]) == 1
    assert "the model reviewed 0 of the 1 unit the plan kept (1 model_error)" in (
        capsys.readouterr().err)
