"""The pull request a GitHub Actions run is about, from its event payload and environment.

`--mode github` reviews the pull request's head commit (not the merge commit actions/checkout
makes for `pull_request`) against its base, as GitHub's "Files changed" shows it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviewbot.errors import UsageError

PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")
DEFAULT_API_URL = "https://api.github.com"


@dataclass(frozen=True)
class PullRequestEvent:
    number: int
    base_sha: str
    head_sha: str
    base_ref: str
    repository: str
    # The pull request comes from another repository: its token is read-only and the
    # workflow's secrets are absent.
    from_fork: bool
    api_url: str
    event_name: str


def read_event(env: Mapping[str, str]) -> PullRequestEvent:
    """The pull request, or a UsageError saying what is wrong with the environment."""
    name = env.get("GITHUB_EVENT_NAME", "")
    path = env.get("GITHUB_EVENT_PATH", "")
    if not path:
        raise UsageError("--mode github runs in GitHub Actions: GITHUB_EVENT_PATH is not set. "
                         "Outside Actions, use --mode pr --base BRANCH.")
    if name and name not in PULL_REQUEST_EVENTS:
        raise UsageError(f"--mode github reviews pull requests, and this run is a {name!r} "
                         "event. Trigger the workflow `on: pull_request`.")
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the event payload {path}: {exc}") from exc
    pull = payload.get("pull_request") if isinstance(payload, dict) else None
    if not isinstance(pull, dict):
        raise UsageError(f"the event payload {path} has no pull_request: --mode github "
                         "reviews pull requests (`on: pull_request`).")
    return _parse(pull, env, name)


def _parse(pull: dict[str, Any], env: Mapping[str, str], name: str) -> PullRequestEvent:
    try:
        base, head = pull["base"], pull["head"]
        repository = env.get("GITHUB_REPOSITORY") or base["repo"]["full_name"]
        head_repo = (head.get("repo") or {}).get("full_name")
        return PullRequestEvent(
            number=int(pull["number"]), base_sha=str(base["sha"]), head_sha=str(head["sha"]),
            base_ref=str(base.get("ref", "")), repository=str(repository),
            from_fork=head_repo is not None and head_repo != base["repo"]["full_name"],
            api_url=(env.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
            event_name=name or "pull_request")
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"the event payload's pull_request lacks {exc}: is it a pull "
                         "request event?") from exc
