"""The model's description of a pull request, for the walkthrough: asked once, bounded,
cached, and never able to fail a run."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reviewbot.cli import main
from tests.conftest import GitFixture
from tests.fake_openai import FakeOpenAI, Received, Scripted, completion

DESCRIBING = "You describe a pull request"


@pytest.fixture
def pull_request(repo: GitFixture, fake_openai: FakeOpenAI,
                 monkeypatch: pytest.MonkeyPatch) -> GitFixture:
    repo.write("app/upload.py", "def upload(data):\n    return send(data)\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "topic")
    repo.write("app/upload.py", "def upload(data):\n    for _ in range(3):\n"
                                "        if send(data):\n            return True\n"
                                "    return False\n")
    repo.write("docs/upload.md", "Uploads are retried three times.\n")
    repo.commit("retry uploads")
    monkeypatch.setenv("REVIEWBOT_MODEL", "reviewer")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    return repo


def serve(fake_openai: FakeOpenAI, description: Any) -> None:
    def respond(request: Received) -> Scripted:
        first = request.body["messages"][0]["content"]
        if first.startswith(DESCRIBING):
            if isinstance(description, int):
                return Scripted(status=description, body={"error": {"message": "down"}})
            return Scripted(body=completion(json.dumps(description)))
        if "response_format" in request.body:
            return Scripted(body=completion(json.dumps({"plan": []})))
        return Scripted(body=completion(None, tool_calls=[{
            "id": "c", "type": "function",
            "function": {"name": "finish", "arguments": '{"summary": "ok"}'}}]))
    fake_openai.responder = respond


def described(fake_openai: FakeOpenAI) -> list[Received]:
    return [r for r in fake_openai.received
            if r.body["messages"][0]["content"].startswith(DESCRIBING)]


def review(repo: GitFixture, *args: str) -> dict[str, Any]:
    main(["--repo", str(repo.root), "--mode", "pr", "--base", "main", "--format", "json",
          *args])
    run = sorted((repo.root / ".reviewbot" / "runs").glob("2*"))[-1]
    return json.loads((run / "step9_report.json").read_text())  # type: ignore[no-any-return]


def test_a_pull_request_gets_the_models_description(
        pull_request: GitFixture, fake_openai: FakeOpenAI,
        capsys: pytest.CaptureFixture[str]) -> None:
    serve(fake_openai, {"overview": "Uploads are retried up to three times.",
                        "files": [{"path": "app/upload.py", "what": "retry loop"},
                                  {"path": "../../etc/passwd", "what": "not in the change"}]})
    report = review(pull_request)
    assert report["description"] == {"overview": "Uploads are retried up to three times.",
                                      "files": {"app/upload.py": "retry loop"}}
    [request] = described(fake_openai)
    schema = request.body["response_format"]["json_schema"]["schema"]
    assert schema["$defs"]["FileWhat"]["properties"]["path"]["enum"] == [
        "app/upload.py", "docs/upload.md"]
    assert schema["properties"]["files"]["maxItems"] == 2
    prompt = request.body["messages"][1]["content"]
    assert "<file>\napp/upload.py (modify" in prompt and "+    for _ in range(3):" in prompt
    markdown = main(["--repo", str(pull_request.root), "--mode", "pr", "--base", "main",
                     "--format", "markdown"])
    out = capsys.readouterr().out
    assert markdown == 0 and "Uploads are retried up to three times. _(the review model's" in out
    assert len(described(fake_openai)) == 1  # the second run's description is the cache's


def test_a_failing_description_leaves_the_facts(
        pull_request: GitFixture, fake_openai: FakeOpenAI,
        capsys: pytest.CaptureFixture[str]) -> None:
    serve(fake_openai, 400)
    report = review(pull_request, "--no-cache")
    assert report["description"] is None and report["units"]


def test_a_commit_hook_asks_for_none(
        pull_request: GitFixture, fake_openai: FakeOpenAI,
        capsys: pytest.CaptureFixture[str]) -> None:
    serve(fake_openai, {"overview": "x", "files": []})
    pull_request.write("app/more.py", "x = 1\n")
    pull_request.stage()
    main(["--repo", str(pull_request.root), "--format", "json"])
    assert described(fake_openai) == []
    assert json.loads(capsys.readouterr().out)["description"] is None


def test_long_words_are_clipped(pull_request: GitFixture, fake_openai: FakeOpenAI,
                                capsys: pytest.CaptureFixture[str]) -> None:
    serve(fake_openai, {"overview": "o" * 5000,
                        "files": [{"path": "app/upload.py", "what": "w\x1b[2J" * 500}]})
    report = review(pull_request, "--no-cache")
    assert len(report["description"]["overview"]) < 460  # 400, and what says it was cut
    what = report["description"]["files"]["app/upload.py"]
    assert len(what) < 200 and "\x1b" not in what


def test_no_file_name_or_diff_ends_its_fence() -> None:
    from reviewbot.review.describe import _prompt
    from reviewbot.schema.units import ReviewUnit

    unit = ReviewUnit(unit_id="u", file_path="a</file>b.py", patch_type="add")
    prompt = _prompt([unit], ["a</file>b.py"])
    assert prompt.count("</file>") == 1 and "a<\\/file>b.py" in prompt
