"""action.yml: its steps run as GitHub would run them (bash, inputs through the environment),
against the fake GitHub, with a sample GITHUB_EVENT_PATH."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.github.conftest import PullRequest
from tests.github.expressions import evaluate, truthy

ROOT = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())


def expand(value: str, inputs: dict[str, str]) -> str:
    """GitHub's `${{ ... }}` for the expressions action.yml uses."""
    def one(match: re.Match[str]) -> str:
        name = match.group(1).strip()
        if name.startswith("inputs."):
            return inputs[name.removeprefix("inputs.")]
        return {"github.token": "ghs_testtoken", "github.action_path": str(ROOT)}[name]
    return re.sub(r"\$\{\{(.*?)\}\}", one, value)


def run_step(step: dict[str, Any], inputs: dict[str, str],
             cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    env |= {name: expand(str(value), inputs) for name, value in step.get("env", {}).items()}
    return subprocess.run(["bash", "-e", "-c", step["run"]], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)


def inputs(**given: str) -> dict[str, str]:
    defaults = {name: expand(str(spec.get("default", "")), {})
                for name, spec in ACTION["inputs"].items()}
    return defaults | given


def test_the_action_is_composite_and_maps_every_input_to_the_environment() -> None:
    steps = ACTION["runs"]["steps"]
    assert ACTION["runs"]["using"] == "composite"
    assert steps[0]["uses"].startswith("actions/setup-python@")
    scripts = "\n".join(step.get("run", "") for step in steps)
    assert "${{" not in scripts  # no expression is spliced into a script
    mapped = " ".join(str(v) for step in steps for v in step.get("env", {}).values())
    assert all(f"inputs.{name}" in mapped for name in ACTION["inputs"])
    assert '"$REVIEWBOT_ACTION_PATH[model,github]"' in steps[1]["run"]
    assert set(ACTION["outputs"]) == {"errors", "warnings", "infos", "findings", "sarif"}


def readme_workflow() -> dict[str, Any]:
    """The workflow the README tells users to copy."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("## The GitHub Action", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    return yaml.safe_load(block)  # type: ignore[no-any-return]


def test_the_readme_workflow_is_one_review_per_pull_request_at_a_time() -> None:
    workflow = readme_workflow()
    # `on:` (YAML 1.1 reads it as true): reviews, and commands in both kinds of comment.
    assert workflow[True] == {"pull_request": None,
                              "issue_comment": {"types": ["created"]},
                              "pull_request_review_comment": {"types": ["created"]}}
    number = "github.event.pull_request.number || github.event.issue.number"
    assert workflow["concurrency"] == {"group": f"reviewbot-${{{{ {number} }}}}",
                                       "cancel-in-progress": False}
    job = workflow["jobs"]["reviewbot"]
    assert "contains(github.event.comment.body, '/reviewbot')" in job["if"]
    assert "github.event.issue.pull_request" in job["if"]
    assert "github.event.comment.in_reply_to_id" in job["if"]  # questions in a thread
    assert workflow["permissions"]["pull-requests"] == "write"
    steps = job["steps"]
    assert steps[0]["with"]["fetch-depth"] == 0
    assert "ref" not in steps[0]["with"]  # a command's run never checks out the head's code
    ours = next(step for step in steps if step.get("id") == "reviewbot")
    assert set(ours["with"]) <= set(ACTION["inputs"])
    assert steps[1]["with"]["path"] == ".reviewbot/cache"


def test_the_review_step_reviews_and_posts(pull: PullRequest) -> None:
    """The action's review step, with the inputs of the README's workflow."""
    step = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "review")
    given = next(s for s in readme_workflow()["jobs"]["reviewbot"]["steps"]
                 if s.get("id") == "reviewbot")["with"]
    result = run_step(step, inputs(**{k: str(v) for k, v in given.items()},
                                   **{"max-comments": "5"}), pull.repo.root)
    assert result.returncode == 1, result.stderr  # the shell injection: fail-level error
    assert "review posted: 1 new comment" in result.stderr
    [posted] = pull.github.posted_reviews()
    assert posted["comments"][0]["path"] == "app/run.py"
    outputs = dict(line.split("=", 1)
                   for line in (pull.home / "output.txt").read_text().splitlines())
    assert outputs["errors"] == "1" and Path(outputs["sarif"]).is_file()


def test_the_summary_reporter_posts_nothing(pull: PullRequest) -> None:
    step = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "review")
    result = run_step(step, inputs(reporter="summary", **{"fail-level": "info"}),
                      pull.repo.root)
    assert result.returncode == 1
    assert pull.github.writes == []
    assert "python.shell-injection" in (pull.home / "summary.md").read_text()


@pytest.mark.parametrize("name", ["config", "fail-level", "max-comments", "inline-level"])
def test_an_input_cannot_become_shell_code(pull: PullRequest, tmp_path: Path,
                                           name: str) -> None:
    step = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "review")
    marker = tmp_path / "pwned"
    result = run_step(step, inputs(**{name: f"x; touch {marker}; $(touch {marker})"}),
                      pull.repo.root)
    assert result.returncode == 2, result.stderr  # a usage error, nothing else
    assert not marker.exists()


def upload_runs(event_name: str, head_repo: str) -> bool:
    """Whether the README's SARIF upload step runs, by its `if:`, GitHub's way."""
    step = next(s for s in readme_workflow()["jobs"]["reviewbot"]["steps"]
                if "upload-sarif" in s.get("uses", ""))
    pull = {"number": 3, "head": {"repo": {"full_name": head_repo}}}
    event = ({"pull_request": pull} if event_name.startswith("pull_request")
             else {"issue": {"number": 3, "pull_request": {"url": "u"}}})
    context = {"github": {"event_name": event_name, "repository": "acme/shop",
                          "event": {**event, "comment": {"body": "/reviewbot review"}}},
               "steps": {"reviewbot": {"outputs": {"sarif": "/w/reviewbot.sarif"}}}}
    return truthy(evaluate(step["if"], context))


@pytest.mark.parametrize(("event_name", "head_repo", "uploads"), [
    ("pull_request", "acme/shop", True),
    # A fork's token may not write security events: the upload would fail the job (403).
    ("pull_request", "stranger/shop", False),
    # A command's run checks out the default branch: the upload would file the pull
    # request's findings against the default branch's ref and commit.
    ("issue_comment", "acme/shop", False),
    ("pull_request_review_comment", "acme/shop", False),
])
def test_the_sarif_upload_runs_on_a_pull_requests_own_run_only(
        event_name: str, head_repo: str, uploads: bool) -> None:
    """The README's workflow uploads SARIF only where the upload files it against the pull
    request and may: on `pull_request`, not from a fork."""
    assert upload_runs(event_name, head_repo) is uploads
