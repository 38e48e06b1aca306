"""The pull request a GitHub Actions run is about, from its event payload and environment.

`--mode github` reviews the pull request's head commit (not the merge commit actions/checkout
makes for `pull_request`) against its base, as GitHub's "Files changed" shows it. A comment
event (`issue_comment` on a pull request, `pull_request_review_comment`) is someone talking to
reviewbot: its comment is read here, as untrusted text, and answered by
`reviewbot/github/conversation.py` (what to answer: `reviewbot/deliver/conversation.py`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from reviewbot.errors import UsageError

PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")
COMMENT_EVENTS = ("issue_comment", "pull_request_review_comment")
DEFAULT_API_URL = "https://api.github.com"
# GitHub's own limit for a comment's body; a payload claiming more is cut to it.
MAX_COMMENT_CHARS = 65_536


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


@dataclass(frozen=True)
class PullComment:
    """A comment someone wrote on a pull request: untrusted text, and who wrote it."""

    id: int
    # "issue": the conversation tab; "review": on a line of the diff (a thread).
    kind: Literal["issue", "review"]
    body: str
    login: str
    user_type: str  # "User", "Bot", "Organization"
    # GitHub's author_association: OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE, ...
    association: str
    # The thread's first comment, for a reply in a review thread.
    in_reply_to: int | None = None


@dataclass(frozen=True)
class CommentEvent:
    """A comment event of a workflow run. `pull` is the pull request when the payload has it
    (a review comment's does; an issue comment's does not: the API is asked)."""

    event_name: str
    # "created", "edited" or "deleted": only a new comment is answered.
    action: str
    number: int
    repository: str
    api_url: str
    # False for an issue comment on an issue that is not a pull request.
    on_pull_request: bool
    comment: PullComment
    pull: PullRequestEvent | None = None


def read_event(env: Mapping[str, str]) -> PullRequestEvent | CommentEvent:
    """The pull request or the comment, or a UsageError saying what is wrong with the
    environment."""
    name = env.get("GITHUB_EVENT_NAME", "")
    path = env.get("GITHUB_EVENT_PATH", "")
    if not path:
        raise UsageError("--mode github runs in GitHub Actions: GITHUB_EVENT_PATH is not set. "
                         "Outside Actions, use --mode pr --base BRANCH.")
    if name and name not in PULL_REQUEST_EVENTS + COMMENT_EVENTS:
        raise UsageError(f"--mode github reviews pull requests and answers comments on them, "
                         f"and this run is a {name!r} event. Trigger the workflow "
                         "`on: pull_request` (and `issue_comment`, "
                         "`pull_request_review_comment` for commands).")
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the event payload {path}: {exc}") from exc
    if not isinstance(payload, dict):
        raise UsageError(f"the event payload {path} is not a JSON object.")
    if name in COMMENT_EVENTS:
        return _comment_event(payload, env, name)
    pull = payload.get("pull_request")
    if not isinstance(pull, dict):
        raise UsageError(f"the event payload {path} has no pull_request: --mode github "
                         "reviews pull requests (`on: pull_request`).")
    return pull_event(pull, env, name)


def _comment_event(payload: dict[str, Any], env: Mapping[str, str],
                   name: str) -> CommentEvent:
    try:
        raw = payload["comment"]
        user = raw.get("user") or {}
        reply_to = raw.get("in_reply_to_id")
        comment = PullComment(
            id=int(raw["id"]), kind="review" if name == "pull_request_review_comment" else
            "issue", body=str(raw.get("body") or "")[:MAX_COMMENT_CHARS],
            login=str(user.get("login", "")), user_type=str(user.get("type", "User")),
            association=str(raw.get("author_association", "NONE")),
            in_reply_to=int(reply_to) if reply_to is not None else None)
        pull_raw = payload.get("pull_request")
        issue = payload.get("issue") or {}
        number = int(pull_raw["number"] if isinstance(pull_raw, dict) else issue["number"])
        repository = env.get("GITHUB_REPOSITORY") or payload["repository"]["full_name"]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UsageError(f"the {name} event payload lacks {exc}: is it a comment event?") \
            from exc
    return CommentEvent(
        event_name=name, action=str(payload.get("action", "created")), number=number,
        repository=str(repository), api_url=_api_url(env),
        on_pull_request=isinstance(pull_raw, dict) or "pull_request" in issue,
        comment=comment,
        pull=pull_event(pull_raw, env, name) if isinstance(pull_raw, dict) else None)


def _api_url(env: Mapping[str, str]) -> str:
    return (env.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/")


def pull_event(pull: dict[str, Any], env: Mapping[str, str], name: str) -> PullRequestEvent:
    """The pull request of an event payload, or of the API's answer (the same shape)."""
    try:
        base, head = pull["base"], pull["head"]
        repository = env.get("GITHUB_REPOSITORY") or base["repo"]["full_name"]
        head_repo = (head.get("repo") or {}).get("full_name")
        return PullRequestEvent(
            number=int(pull["number"]), base_sha=str(base["sha"]), head_sha=str(head["sha"]),
            base_ref=str(base.get("ref", "")), repository=str(repository),
            from_fork=head_repo is not None and head_repo != base["repo"]["full_name"],
            api_url=_api_url(env), event_name=name or "pull_request")
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"the event payload's pull_request lacks {exc}: is it a pull "
                         "request event?") from exc
