"""GitHub's adapter seen from the delivery layer: whatever goes wrong on the way to GitHub, a
caller meets only delivery's errors (reviewbot.deliver.forge), never PyGithub's or requests'."""

from __future__ import annotations

import socket

import pytest

from reviewbot.deliver.forge import DeliveryFailed
from reviewbot.github.event import PullRequestEvent
from reviewbot.github.forge import GithubForge
from tests.fake_github import FakeGitHub


def forge_for(github: FakeGitHub, api_url: str = "", number: int = 0) -> GithubForge:
    event = PullRequestEvent(number=number or github.number, base_sha=github.base_sha,
                             head_sha=github.head_sha, base_ref="main",
                             repository=github.repository, from_fork=False,
                             api_url=api_url or github.url, event_name="pull_request")
    return GithubForge(token="ghs_testtoken", event=event, seconds_between_requests=0,
                       seconds_between_writes=0, sleep=lambda seconds: None)


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("reviewbot.github.forge.GET_BACKOFF_S", 0)
    monkeypatch.setattr("reviewbot.github.forge.TIMEOUT_S", 5)


def test_a_read_github_refuses_is_delivery_failed(github: FakeGitHub) -> None:
    """A read GitHub refuses (a pull request it does not know) is DeliveryFailed, with
    GitHub's answer: a caller needs no forge SDK to catch it."""
    forge = forge_for(github, number=github.number + 1)
    with pytest.raises(DeliveryFailed, match="404"):
        forge.lines()


def test_a_listing_github_keeps_failing_is_delivery_failed(github: FakeGitHub) -> None:
    """A listing GitHub keeps failing past PyGithub's own retries is DeliveryFailed."""
    forge = forge_for(github)
    forge.connect()
    github.fail("GET", r"/pulls/7/comments", status=502, times=10)
    with pytest.raises(DeliveryFailed, match="GitHub could not be reached"):
        forge.comments("inline")


def test_github_out_of_reach_is_delivery_failed() -> None:
    """GitHub out of reach (nothing listens) is DeliveryFailed that says so, not requests'
    own exception."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    forge = forge_for(FakeGitHub(), api_url=f"http://127.0.0.1:{port}")
    with pytest.raises(DeliveryFailed, match=r"^GitHub could not be reached \(\w+\)$"):
        forge.connect()


def test_a_5xx_on_a_write_is_said_as_a_failure_not_a_wait(github: FakeGitHub) -> None:
    """A 5xx retried is GitHub failing, said with its status; "asked to wait" is for GitHub's
    rate limits alone."""
    notices: list[str] = []
    forge = forge_for(github)
    forge.notice = notices.append
    forge.connect()
    github.fail("POST", r"/issues/7/comments$", status=502, times=10)
    with pytest.raises(DeliveryFailed, match="kept failing"):
        forge.post("a summary\n<!-- reviewbot:summary -->")
    assert notices and all(n.startswith("GitHub answered 502; retrying in") for n in notices)
