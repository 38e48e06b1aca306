"""Planted secrets in many shapes never reach the model server, an artifact, stdout or
stderr; a key goes only where the user sent it; a bad reply is a fallback, not a crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewbot.cli import main
from tests.conftest import GitFixture
from tests.fake_openai import FakeOpenAI, Scripted, completion
from tests.model.helpers import KEY, PLANNED

RSA_BODY = "MIIEowIBAAKCAQEAx7Yl3QkZs9mFqkTnB2dRz"
GH_SHELL = "ghp_Q8mZ3xYv1Lw9Rt5Kp2Hs7Jd4Fg6Na0BcEe1T"
GH_YAML = "ghp_Z1xC2vB3nM4aS5dF6gH7jK8lQ9wE0rT1yU2i"
GH_IN_NAME = "ghp_N4m3InAF1l3N4m3xxxxxxxxxxxxxxxxxxxxx"
AWS = "AKIAZ7Q2MXC5LFPN3WKB"
DOTENV = "hunter2hunter2"
URL_PASSWORD = "Sup3rS3cretPw"
OLD_PAT = ("github_pat_11AAAAAAA0legacyLEGACYlegacy_" + "Lx" * 30)[:93]
PLANTED = {"private key": RSA_BODY, "token in shell": GH_SHELL, "token in YAML": GH_YAML,
           "token in a file name": GH_IN_NAME, "AWS key": AWS, "dotenv password": DOTENV,
           "password in a URL": URL_PASSWORD, "secret committed earlier": OLD_PAT}



@pytest.fixture(autouse=True)
def reviews_finish(fake_openai: FakeOpenAI) -> None:
    """These tests are about the planner and the boundary: the reviewer has nothing to say."""
    fake_openai.finish_every_review()

@pytest.fixture
def planted(repo: GitFixture, monkeypatch: pytest.MonkeyPatch) -> GitFixture:
    repo.write("legacy/config.py", f'LEGACY_TOKEN = "{OLD_PAT}"\n')
    repo.write("README.md", "# app\n")
    repo.commit("base")
    repo.write("deploy/id_rsa", "-----BEGIN RSA PRIVATE KEY-----\n"
               f"{RSA_BODY}\nQ2hhbmdlTWVQbGVhc2VUaGlzSXNOb3RBUmVhbEtleQ==\n"
               "-----END RSA PRIVATE KEY-----\n")
    repo.write("ci/deploy.sh", f"#!/bin/sh\nexport GITHUB_TOKEN={GH_SHELL}\n./deploy\n")
    repo.write("config/values.yaml", f"service:\n  token: {GH_YAML}\n")
    repo.write(".env", f"DB_PASSWORD={DOTENV}\n")
    repo.write("app/settings.py", f'AWS_KEY = "{AWS}"\nDATABASE_URL = '
               f'"postgres://admin:{URL_PASSWORD}@db.internal:5432/app"\n')
    repo.write("app/client.py", "from legacy.config import LEGACY_TOKEN\n\n\n"
               "def headers():\n    return {'Authorization': LEGACY_TOKEN}\n")
    repo.write(f"notes/{GH_IN_NAME}.txt", "remember to rotate\n")
    repo.write("app/limits.py", PLANNED)  # a change the model plans
    repo.stage()
    monkeypatch.setenv("REVIEWBOT_MODEL", "planner-model")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return repo


def _everything_written(run: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(run.iterdir()))


def _plan_everything(planted: GitFixture, fake_openai: FakeOpenAI) -> None:
    """A plan asking for the whole of every file, and a search that finds the old secret."""
    main(["--repo", str(planted.root), "--offline", "--quiet"])
    runs = sorted((planted.root / ".reviewbot" / "runs").glob("2*"))
    units = json.loads((runs[-1] / "step1_diff.json").read_text())["units"]
    plan = [{"unit_id": u["unit_id"], "llm_context_level": "full_file",
             "extra_requests": [{"type": "search", "details": "LEGACY_TOKEN"},
                                {"type": "previous_version"}], "reason": "all of it"}
            for u in units]
    fake_openai.reply_json({"plan": plan})


@pytest.mark.parametrize("output", ["text", "json", "markdown", "sarif", "rdjson"])
def test_no_planted_secret_leaves_in_clear(planted: GitFixture, fake_openai: FakeOpenAI,
                                           monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str],
                                           output: str) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    _plan_everything(planted, fake_openai)
    capsys.readouterr()
    events = planted.root.parent / "events.jsonl"

    code = main(["--repo", str(planted.root), "--format", output, "-v",
                 "--events", str(events)])

    out, err = capsys.readouterr()
    assert code == 1
    [run] = [p for p in sorted((planted.root / ".reviewbot" / "runs").glob("2*"))[-1:]]
    written = _everything_written(run)
    bundle = (run / "step6_context_bundle.json").read_text()
    assert "LEGACY_TOKEN" in bundle  # the search ran and found the old secret's line
    sent = fake_openai.requests_text()
    assert "notes/" in sent  # the planner saw the file names
    for shape, secret in PLANTED.items():
        for where, text in (("the model server", sent), ("an artifact", written),
                            ("stdout", out), ("stderr", err),
                            ("the events", events.read_text())):
            assert secret not in text, f"{shape} reached {where}"
    assert KEY not in written + out + err


def test_artifacts_are_owner_only(planted: GitFixture,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    main(["--repo", str(planted.root), "--offline", "--quiet"])
    [run] = list((planted.root / ".reviewbot" / "runs").glob("2*"))
    assert run.stat().st_mode & 0o777 == 0o700
    assert {p.stat().st_mode & 0o777 for p in run.iterdir()} == {0o600}


def test_old_runs_are_pruned(planted: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    planted.write(".reviewbot.toml", "keep_runs = 2\n")
    for _ in range(4):
        main(["--repo", str(planted.root), "--offline", "--quiet"])
    assert len(list((planted.root / ".reviewbot" / "runs").glob("2*"))) == 2


def test_a_key_echoed_into_the_plan_never_reaches_an_artifact(
        planted: GitFixture, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    main(["--repo", str(planted.root), "--offline", "--quiet"])
    units = json.loads(sorted((planted.root / ".reviewbot" / "runs").glob("2*"))[-1]
                       .joinpath("step1_diff.json").read_text())["units"]
    plan = {"plan": [{"unit_id": u["unit_id"], "llm_context_level": "function",
                      "reason": "you sent {AUTH}"} for u in units]}
    fake_openai.script.append(Scripted(body=completion(json.dumps(plan)), echo_auth=True))
    main(["--repo", str(planted.root), "--quiet"])
    run = sorted((planted.root / ".reviewbot" / "runs").glob("2*"))[-1]
    reasons = [i["reason"] for i in json.loads((run / "step4_llm_plan.json").read_text())["plan"]]
    assert reasons and all(r == "you sent Bearer [REDACTED]" for r in reasons)
    assert KEY not in _everything_written(run)


def test_a_repository_endpoint_never_gets_the_key(repo: GitFixture, fake_openai: FakeOpenAI,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    repo.write(".reviewbot.toml", f'[model]\nname = "local"\nbase_url = "{fake_openai.base_url}"\n')
    repo.write("app.py", "x = 1\n")
    repo.stage()
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert main(["--repo", str(repo.root)]) == 0
    # A small change is read whole in one call: the config, which names a URL
    # (security-sensitive), with the rest.
    assert len(fake_openai.received) == 1
    assert KEY not in fake_openai.requests_text()
    assert "your API key is not sent to it" in capsys.readouterr().err


@pytest.mark.parametrize("body", [b"<html>proxy login</html>", b"[]", b"", b'"text"',
                                  b'{"choices": [{"message": null}]}'])
def test_a_bad_reply_is_the_heuristic_not_a_crash(planted: GitFixture, fake_openai: FakeOpenAI,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str],
                                                  body: bytes) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    fake_openai.reply_raw(body, content_type="text/html" if b"html" in body else
                          "application/json")
    assert main(["--repo", str(planted.root), "--quiet"]) == 1  # as offline: the rules decide
    err = capsys.readouterr().err
    assert "the heuristic planner took over" in err and "internal error" not in err


def _units(planted: GitFixture) -> list[dict[str, object]]:
    main(["--repo", str(planted.root), "--offline", "--quiet"])
    run = sorted((planted.root / ".reviewbot" / "runs").glob("2*"))[-1]
    return list(json.loads((run / "step1_diff.json").read_text())["units"])


def _planned_run(planted: GitFixture, fake_openai: FakeOpenAI,
                 requests: list[dict[str, str]]) -> Path:
    first = _units(planted)[0]["unit_id"]
    fake_openai.reply_json({"plan": [{"unit_id": first, "llm_context_level": "function",
                                      "extra_requests": requests}]})
    assert main(["--repo", str(planted.root), "--quiet"]) == 1
    return sorted((planted.root / ".reviewbot" / "runs").glob("2*"))[-1]


@pytest.mark.parametrize("details", ["x" * 33_000, "LEGACY\x00TOKEN"])
def test_monstrous_request_details_are_dropped_not_run(
        planted: GitFixture, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], details: str) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    run = _planned_run(planted, fake_openai, [{"type": "search", "details": details},
                                               {"type": "search_callers", "details": details}])
    text = (run / "step5_fused_plan.json").read_text()
    fused = json.loads(text)
    if "\x00" in details:  # a model's control characters never reach a stage
        assert "\\u0000" not in text and "LEGACY" in text
    else:
        assert sum("not a searchable name" in d for d in fused["dropped_requests"]) == 2
    assert "internal error" not in capsys.readouterr().err


def test_a_reply_too_long_to_be_a_plan_is_the_heuristic(
        planted: GitFixture, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    run = _planned_run(planted, fake_openai, [{"type": "search", "details": "y" * 131_072}])
    plan = json.loads((run / "step4_llm_plan.json").read_text())
    assert "the reply's text is over 100,000 characters" in plan["notices"][0]
    assert (run / "step4_llm_plan.json").stat().st_size < 100_000


def test_thousands_of_requests_are_capped(planted: GitFixture, fake_openai: FakeOpenAI,
                                          monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    run = _planned_run(planted, fake_openai,
                       [{"type": "search", "details": f"word{n}"} for n in range(2000)])
    plan = json.loads((run / "step4_llm_plan.json").read_text())["plan"]
    assert len(plan[0]["extra_requests"]) == 16
    fused = json.loads((run / "step5_fused_plan.json").read_text())
    assert max(len(i["extra_requests"]) for i in fused["plan"]) == 8
    # The model's 16, plus the rules' own requests for this risky unit, minus the 8 kept.
    assert sum("over 8 requests" in d for d in fused["dropped_requests"]) >= 8
