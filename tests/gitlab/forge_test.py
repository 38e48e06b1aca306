"""GitlabForge, GitLab's adapter of the forge seam, with real python-gitlab against the fake
GitLab: positions, refusals, retries and their bounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewbot.deliver.bodies import finding_body
from reviewbot.deliver.forge import DeliveryFailed, InlineComment
from reviewbot.gitlab.ci import MergeRequestPipeline
from reviewbot.gitlab.forge import GitlabForge, gitlab_fence
from reviewbot.schema import Finding
from tests.gitlab.conftest import REVIEWBOT, MergeRequest

MARK = "\n<!-- reviewbot:fp={fp} rule=python.x -->"


def forge(mr: MergeRequest, waits: list[float]) -> GitlabForge:
    latest = mr.gitlab.latest
    assert latest is not None
    pipeline = MergeRequestPipeline(api_url=f"{mr.gitlab.url}/api/v4", project_id=42, iid=7,
                                    base_sha=latest.base, head_sha=latest.head,
                                    from_fork=False, project_dir=Path())
    return GitlabForge(token=REVIEWBOT, pipeline=pipeline, sleep=waits.append)


def test_a_context_line_carries_both_lines_and_an_added_line_new_line_alone(
        merge_request: MergeRequest) -> None:
    """GitLab places a note only with old_line and new_line for an unchanged line of a hunk,
    new_line alone for an added one: both discussions are created, none refused."""
    gitlab = forge(merge_request, [])
    lines = gitlab.lines()
    assert {5, 6} <= lines["app/util.py"]
    refused = gitlab.post_inline([
        InlineComment("app/util.py", 5, 5, "context" + MARK.format(fp="a1")),
        InlineComment("app/util.py", 6, 6, "added" + MARK.format(fp="b2"))])
    assert refused == []
    shown = [(n["position"]["old_line"], n["position"]["new_line"])
             for n in merge_request.gitlab.notes()]
    assert shown == [(5, 5), (None, 6)]


def test_a_line_gitlab_refuses_comes_back_with_the_reason(merge_request: MergeRequest) -> None:
    """GitLab's 400 "line_code can't be blank" is a refusal on the line (for the summary),
    not a failed delivery, and the other comments are still posted."""
    gitlab = forge(merge_request, [])
    gitlab.lines()
    gitlab._files["app/util.py"].lines[1] = None  # a line GitLab's diff does not hold
    bad = InlineComment("app/util.py", 1, 1, "off" + MARK.format(fp="c3"))
    refused = gitlab.post_inline([bad, InlineComment("app/util.py", 6, 6,
                                                     "on" + MARK.format(fp="d4"))])
    assert [(r.comment, "line_code can't be blank" in r.reason) for r in refused] == \
        [(bad, True)]
    assert len(merge_request.gitlab.notes()) == 1


def test_a_429_waits_its_retry_after_and_posts_once(merge_request: MergeRequest) -> None:
    """GitLab's throttle names its wait (Retry-After): waited, then the note posted once."""
    waits: list[float] = []
    gitlab = forge(merge_request, waits)
    merge_request.gitlab.fail("POST", r"/notes$", 429, kind="throttle", retry_after=7)
    gitlab.post("summary" + MARK.format(fp="e5"))
    assert waits == [7.0] and len(merge_request.gitlab.notes()) == 1
    assert merge_request.waits == []  # python-gitlab retried nothing itself


def test_a_wait_over_the_bound_fails_without_sleeping(merge_request: MergeRequest) -> None:
    """A throttle asking for ten minutes fails the post at once: the run does not hang."""
    waits: list[float] = []
    gitlab = forge(merge_request, waits)
    merge_request.gitlab.fail("POST", r"/notes$", 429, kind="throttle", retry_after=600)
    with pytest.raises(DeliveryFailed, match="wait 600 s"):
        gitlab.post("summary" + MARK.format(fp="f6"))
    assert waits == [] and merge_request.gitlab.notes() == []


def test_a_suggestion_is_in_gitlabs_form_for_its_lines() -> None:
    """A suggestion replaces the finding's lines from the line its discussion is on:
    ```suggestion:-0+N for N+1 lines."""
    finding = Finding(file_path="app/run.py", start_line=4, end_line=6, severity="warning",
                      category="bug", rule_id="model.bug", title="t", message="m",
                      source="model", replacement="a\nb\nc")
    body = finding_body(finding, "f" * 32, limit=1_000_000, fence=gitlab_fence)
    assert "```suggestion:-0+2\na\nb\nc\n```" in body
