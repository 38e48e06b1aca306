"""GitlabForge, GitLab's adapter of the forge seam, with real python-gitlab against the fake
GitLab: positions, refusals, retries and their bounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewbot.deliver.bodies import finding_body
from reviewbot.deliver.forge import DeliveryFailed, InlineComment
from reviewbot.gitlab.ci import MergeRequestPipeline
from reviewbot.gitlab.forge import GitlabForge, gitlab_fence
from reviewbot.schema.findings import Finding
from tests.gitlab.conftest import REVIEWBOT, MergeRequest

MARK = "\n<!-- reviewbot:fp={fp} rule=python.x -->"


def forge(mr: MergeRequest, waits: list[float],
          notices: list[str] | None = None) -> GitlabForge:
    latest = mr.gitlab.latest
    assert latest is not None
    pipeline = MergeRequestPipeline(api_url=f"{mr.gitlab.url}/api/v4", project_id=42, iid=7,
                                    base_sha=latest.base, head_sha=latest.head,
                                    checkout_sha=latest.head, event_type="detached",
                                    fork_project=None, pipeline_project=42, project_dir=Path())
    return GitlabForge(token=REVIEWBOT, pipeline=pipeline, sleep=waits.append,
                       notice=notices.append if notices is not None else lambda text: None)


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


def test_429s_are_waited_for_as_long_as_the_bound_on_waiting_allows(
        merge_request: MergeRequest) -> None:
    """docs/GITLAB.md: a 429 waits Retry-After, up to 300 s in all; not a count of
    attempts (four attempts were three seconds with `Retry-After: 1`)."""
    waits: list[float] = []
    gitlab = forge(merge_request, waits)
    merge_request.gitlab.fail("POST", r"/notes$", 429, kind="throttle", retry_after=1,
                              times=12)
    gitlab.post("summary" + MARK.format(fp="a7"))
    assert waits == [1.0] * 12 and len(merge_request.gitlab.notes()) == 1
    merge_request.gitlab.fail("POST", r"/notes$", 429, kind="throttle", retry_after=10,
                              times=1000)
    with pytest.raises(DeliveryFailed, match="at most 300 s in all"):
        gitlab.post("again" + MARK.format(fp="b8"))
    assert waits[12:] == [10.0] * 28  # 12 + 280 s: one more wait would pass 300 s


def test_a_429_that_names_no_wait_backs_off_within_the_bound(
        merge_request: MergeRequest) -> None:
    """No Retry-After nor RateLimit-Reset (seen on GitLab.com): 30, 60, 120, 120 s... until
    the 300 s bound, never a single wait over 120 s."""
    waits: list[float] = []
    gitlab = forge(merge_request, waits)
    merge_request.gitlab.fail("POST", r"/notes$", 429, kind="throttle-no-headers",
                              times=1000)
    with pytest.raises(DeliveryFailed, match="limited the rate"):
        gitlab.post("summary" + MARK.format(fp="c9"))
    assert waits == [30.0, 60.0, 120.0]


def test_a_5xx_is_said_as_what_it_is_on_one_line(merge_request: MergeRequest) -> None:
    """A 502 is GitLab's front answering with an HTML page: the job log says "502 (Bad
    Gateway, an HTML error page)", never that GitLab asked to wait, never the page."""
    waits: list[float] = []
    notices: list[str] = []
    gitlab = forge(merge_request, waits, notices)
    merge_request.gitlab.fail("POST", r"/notes$", 502, times=10)
    with pytest.raises(DeliveryFailed) as failed:
        gitlab.post("summary" + MARK.format(fp="d0"))
    assert waits == [1.0, 2.0, 4.0]
    assert notices[0] == ("GitLab answered 502 (Bad Gateway, an HTML error page); retrying in "
                          "1 s")
    said = "\n".join([*notices, str(failed.value)])
    assert "asked to wait" not in said and "<" not in said and "\n" not in str(failed.value)
    assert str(failed.value) == ("GitLab kept failing (4 attempts; last: GitLab answered 502 "
                                 "(Bad Gateway, an HTML error page))")


def test_a_suggestion_is_in_gitlabs_form_for_its_lines() -> None:
    """A suggestion replaces the finding's lines from the line its discussion is on:
    ```suggestion:-0+N for N+1 lines."""
    finding = Finding(file_path="app/run.py", start_line=4, end_line=6, severity="warning",
                      category="bug", rule_id="model.bug", title="t", message="m",
                      source="model", replacement="a\nb\nc")
    body = finding_body(finding, "f" * 32, limit=1_000_000, fence=gitlab_fence)
    assert "```suggestion:-0+2\na\nb\nc\n```" in body
