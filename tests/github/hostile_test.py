"""github mode with a model that obeys a prompt injection: the review is still posted with the
rules' findings, the SARIF file and the outputs are written, and the sandbox holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewbot.cli import main
from tests.fake_openai import FakeOpenAI
from tests.github.conftest import PullRequest
from tests.hostile import (
    PLANTED,
    assert_no_controls,
    assert_nothing_planted_reached,
    obey_the_injection,
    record_with_controls,
    tool_answers,
)
from tests.model.helpers import KEY


def test_an_injected_model_cannot_stop_the_pull_request_review(
        pull: PullRequest, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    pull.push({".gitignore": ".env\n",
               "deploy/prod.env": f"REDIS_PASSWORD={PLANTED['a tracked dotenv file']}\n",
               "config/app.yaml": f"db:\n  password: {PLANTED['a YAML password']}\n"})
    pull.repo.git("remote", "add", "origin", "https://deploy:"
                  f"{PLANTED['a credential in .git/config']}@git.example.invalid/x.git")
    pull.repo.write(".env", f"SECRET_KEY={PLANTED['an ignored .env']}\n")
    pull.repo.write("notes.txt", f"password={PLANTED['an untracked file']}\n")
    for name, value in (("REVIEWBOT_MODEL", "injected"), ("OPENAI_API_KEY", KEY),
                        ("OPENAI_BASE_URL", fake_openai.base_url)):
        monkeypatch.setenv(name, value)
    obey_the_injection(fake_openai)

    code = main(["--repo", str(pull.repo.root), "--mode", "github", "--quiet"])

    err = capsys.readouterr().err
    assert code == 1 and "internal error" not in err
    [posted] = pull.github.posted_reviews()
    assert any("python.shell-injection" in c["body"] for c in posted["comments"])
    outputs = dict(line.split("=", 1)
                   for line in (pull.home / "output.txt").read_text().splitlines())
    assert int(outputs["errors"]) >= 1
    sarif = json.loads(Path(outputs["sarif"]).read_text())
    assert "python.shell-injection" in {r["ruleId"] for r in sarif["runs"][0]["results"]}
    answers = tool_answers(fake_openai)
    assert answers['list_files{"dir": ":!x"}'] == "no tracked files under :!x"
    assert answers['list_files{"dir": ":(bad)"}'] == "no tracked files under :(bad)"
    assert "error" in json.loads(answers['read_file_hunk{"path": ".env", "start": 1, "end": 5}'])
    assert_nothing_planted_reached(fake_openai)


def test_a_models_control_characters_reach_no_comment_or_job_summary(
        pull: PullRequest, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    for name, value in (("REVIEWBOT_MODEL", "injected"), ("OPENAI_BASE_URL",
                                                           fake_openai.base_url)):
        monkeypatch.setenv(name, value)
    record_with_controls(fake_openai, "app/run.py", "def run(path):")
    main(["--repo", str(pull.repo.root), "--mode", "github", "--quiet"])
    [posted] = pull.github.posted_reviews()
    bodies = [c["body"] for c in posted["comments"]] + [pull.github.summary()["body"]]
    assert any("Clean" in body for body in bodies)
    for body in bodies:
        assert_no_controls(body + " Clean")
    assert_no_controls((pull.home / "summary.md").read_text())
