"""The double is held to GitHub's published description, and the description is the one npm's
@octokit/openapi publishes."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from tests.fake_github import FakeGitHub
from tests.github import contract


def test_the_contract_is_the_published_description() -> None:
    if not contract.GENERATED.is_dir():
        pytest.skip("@octokit/openapi is not installed: `npm install --prefix .ci/node "
                    "@octokit/openapi` (.ci/run does)")
    published = contract.extract(json.loads(contract.PACKAGE.read_text(encoding="utf-8")))
    assert contract.render(published) == contract.SUBSET.read_text(encoding="utf-8"), (
        "tests/github/github-rest.json differs from the installed description: run "
        "`python -m tests.github.contract`")


def _send(github: FakeGitHub, method: str, path: str, body: object = None) -> int:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{github.url}{path}", data=data,  # noqa: S310
                                     method=method, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request) as response:  # noqa: S310 (the local double)
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_a_request_github_would_refuse_is_a_violation(github: FakeGitHub) -> None:
    status = _send(github, "POST", "/repos/acme/shop/pulls/7/reviews",
                   {"event": "SHIP_IT", "comments": [{"line": 3}]})
    assert status == 422 and any("request POST" in v for v in github.violations)
    github.violations.clear()


def test_every_answer_of_the_double_conforms(github: FakeGitHub) -> None:
    github.files = {"a.py": "@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\n"}
    assert _send(github, "GET", "/user") == 200
    assert _send(github, "GET", "/repos/acme/shop") == 200
    assert _send(github, "GET", "/repos/acme/shop/pulls/7") == 200
    assert _send(github, "GET", "/repos/acme/shop/pulls/7/files") == 200
    review = {"event": "COMMENT", "body": "b", "commit_id": github.head_sha,
              "comments": [{"path": "a.py", "line": 2, "start_line": 1, "side": "RIGHT",
                            "start_side": "RIGHT", "body": "c"}]}
    assert _send(github, "POST", "/repos/acme/shop/pulls/7/reviews", review) == 200
    assert _send(github, "GET", "/repos/acme/shop/pulls/7/comments") == 200
    assert _send(github, "POST", "/repos/acme/shop/issues/7/comments", {"body": "s"}) == 201
    assert _send(github, "POST", "/repos/acme/shop/issues/7/comments",
                 {"body": "x" * 70_000}) == 422
    off = {**review, "comments": [{"path": "a.py", "line": 9, "side": "RIGHT", "body": "c"}]}
    assert _send(github, "POST", "/repos/acme/shop/pulls/7/reviews", off) == 422
    own = github.add_own_comment("mine")
    assert _send(github, "DELETE", f"/repos/acme/shop/issues/comments/{own['id']}") == 204
    assert _send(github, "DELETE", f"/repos/acme/shop/issues/comments/{own['id']}") == 404
    github.add_pending_review()
    assert _send(github, "POST", "/repos/acme/shop/pulls/7/reviews", review) == 422
    github.fail("GET", "/user", 502)
    assert _send(github, "GET", "/user") == 502
    assert github.violations == []
