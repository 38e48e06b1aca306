"""A real HTTP server on 127.0.0.1 speaking the GitHub REST routes the poster uses.

Real PyGithub points at it with `base_url`; every `url` in its answers points back at it.
It keeps one repository with one pull request, enforces GitHub's 422 for review comments on
lines outside the pull request's diff and its one-pending-review rule, paginates with Link
headers, and answers faults when told: a read-only token (403), a rate limit (403 with
rate-limit headers), 502s. It records every write.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from reviewbot.github.positions import right_side_lines
from tests.local_server import LocalServer, QuietHandler


@dataclass
class Write:
    method: str
    path: str
    body: dict[str, Any]


@dataclass
class FakeGitHub:
    repository: str = "acme/shop"
    number: int = 7
    head_sha: str = "0" * 40
    base_sha: str = "1" * 40
    login: str = "reviewbot-tester"
    # path -> patch (None: GitHub shows no diff, e.g. binary)
    files: dict[str, str | None] = field(default_factory=dict)
    review_comments: list[dict[str, Any]] = field(default_factory=list)
    issue_comments: list[dict[str, Any]] = field(default_factory=list)
    reviews: list[dict[str, Any]] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    posted: list[dict[str, Any]] = field(default_factory=list)
    # Faults: a token that cannot write; statuses the next writes get; /user refused.
    read_only: bool = False
    fail_writes: deque[int] = field(default_factory=deque)
    user_forbidden: bool = False
    per_page_max: int = 100

    def __post_init__(self) -> None:
        self._ids = itertools.count(1000)
        self._lock = threading.Lock()
        fake = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                fake._handle(self, "GET")

            def do_POST(self) -> None:
                fake._handle(self, "POST")

            def do_PATCH(self) -> None:
                fake._handle(self, "PATCH")

            def do_DELETE(self) -> None:
                fake._handle(self, "DELETE")

        self._local = LocalServer(Handler)

    # --- lifecycle ---------------------------------------------------------------------
    @property
    def url(self) -> str:
        return self._local.origin

    def start(self) -> FakeGitHub:
        self._local.start()
        return self

    def stop(self) -> None:
        self._local.stop()

    # --- what tests look at ------------------------------------------------------------
    def posted_reviews(self) -> list[dict[str, Any]]:
        """The request bodies of the reviews GitHub accepted (not pending ones)."""
        return list(self.posted)

    def summary(self) -> dict[str, Any]:
        [comment] = [c for c in self.issue_comments if "reviewbot:summary" in c["body"]]
        return comment

    # --- routing -----------------------------------------------------------------------
    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        parts = urlsplit(handler.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        length = int(handler.headers.get("content-length") or 0)
        body = json.loads(handler.rfile.read(length) or b"{}") if length else {}
        with self._lock:
            status, payload, headers = self._route(method, parts.path, query, body)
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)

    def _route(self, method: str, path: str, query: dict[str, str],
               body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        repo = f"/repos/{self.repository}"
        pull = f"{repo}/pulls/{self.number}"
        if method != "GET":
            self.writes.append(Write(method, path, body))
            fault = self._write_fault()
            if fault is not None:
                return fault
        routes: list[tuple[str, str, Any]] = [
            ("GET", "/user", self._user),
            ("GET", repo, lambda q, b: (200, self._repo(), {})),
            ("GET", pull, lambda q, b: (200, self._pull(), {})),
            ("GET", f"{pull}/files", lambda q, b: self._page(self._files(), q, f"{pull}/files")),
            ("GET", f"{pull}/comments", lambda q, b: self._page(self.review_comments, q,
                                                                f"{pull}/comments")),
            ("GET", f"{repo}/issues/{self.number}/comments",
             lambda q, b: self._page(self.issue_comments, q,
                                     f"{repo}/issues/{self.number}/comments")),
            ("POST", f"{pull}/reviews", self._create_review),
            ("POST", f"{repo}/issues/{self.number}/comments", self._create_issue_comment),
        ]
        for route_method, route_path, action in routes:
            if method == route_method and path == route_path:
                return action(query, body)  # type: ignore[no-any-return]
        return self._dynamic(method, path, body, repo, pull)

    def _dynamic(self, method: str, path: str, body: dict[str, Any], repo: str,
                 pull: str) -> tuple[int, Any, dict[str, str]]:
        if method == "GET" and (m := re.fullmatch(rf"{repo}/commits/(\w+)", path)):
            return 200, {"sha": m.group(1), "url": f"{self.url}{path}"}, {}
        if method == "DELETE" and (m := re.fullmatch(rf"{pull}/reviews/(\d+)", path)):
            return self._delete_review(int(m.group(1)))
        if method == "PATCH" and (m := re.fullmatch(rf"{repo}/issues/comments/(\d+)", path)):
            return self._edit(self.issue_comments, int(m.group(1)), body)
        if method == "PATCH" and (m := re.fullmatch(rf"{repo}/pulls/comments/(\d+)", path)):
            return self._edit(self.review_comments, int(m.group(1)), body)
        return 404, {"message": "Not Found"}, {}

    # --- handlers ----------------------------------------------------------------------
    def _write_fault(self) -> tuple[int, Any, dict[str, str]] | None:
        if self.read_only:
            return 403, {"message": "Resource not accessible by integration"}, {}
        if self.fail_writes:
            status = self.fail_writes.popleft()
            if status == 403:
                return 403, {"message": "You have exceeded a secondary rate limit."}, {
                    "retry-after": "0", "x-ratelimit-remaining": "0"}
            return status, {"message": "Server Error"}, {}
        return None

    def _user(self, query: dict[str, str], body: dict[str, Any]) -> tuple[int, Any,
                                                                       dict[str, str]]:
        if self.user_forbidden:
            return 403, {"message": "Resource not accessible by integration"}, {}
        return 200, self._account(self.login), {}

    def _account(self, login: str) -> dict[str, Any]:
        return {"login": login, "id": hash(login) % 10_000, "type": "Bot",
                "url": f"{self.url}/users/{login}"}

    def _repo(self) -> dict[str, Any]:
        owner, name = self.repository.split("/")
        return {"id": 1, "name": name, "full_name": self.repository,
                "owner": self._account(owner), "url": f"{self.url}/repos/{self.repository}"}

    def _pull(self) -> dict[str, Any]:
        base = f"{self.url}/repos/{self.repository}"
        return {"id": 7000, "number": self.number, "state": "open",
                "url": f"{base}/pulls/{self.number}",
                "issue_url": f"{base}/issues/{self.number}",
                "html_url": f"https://github.example/{self.repository}/pull/{self.number}",
                "head": {"sha": self.head_sha, "ref": "topic", "repo": self._repo()},
                "base": {"sha": self.base_sha, "ref": "main", "repo": self._repo()}}

    def _files(self) -> list[dict[str, Any]]:
        return [{"filename": path, "status": "modified", "patch": patch, "sha": "f" * 40}
                if patch is not None else {"filename": path, "status": "modified",
                                           "sha": "f" * 40}
                for path, patch in self.files.items()]

    def _page(self, items: list[dict[str, Any]], query: dict[str, str],
              path: str) -> tuple[int, Any, dict[str, str]]:
        size = min(int(query.get("per_page", 30)), self.per_page_max)
        page = int(query.get("page", 1))
        chunk = items[(page - 1) * size:page * size]
        headers = {}
        if page * size < len(items):
            headers["link"] = (f'<{self.url}{path}?per_page={size}&page={page + 1}>; '
                               'rel="next"')
        return 200, chunk, headers

    def _on_the_diff(self, comment: dict[str, Any]) -> bool:
        patch = self.files.get(comment.get("path", ""))
        lines = right_side_lines(patch) if patch else set()
        wanted = range(comment.get("start_line") or comment["line"], comment["line"] + 1)
        return comment.get("side", "RIGHT") == "RIGHT" and all(n in lines for n in wanted)

    def _create_review(self, query: dict[str, str],
                       body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        comments = body.get("comments") or []
        if not all(self._on_the_diff(c) for c in comments):
            return 422, {"message": "Unprocessable Entity", "errors": [
                "Line could not be resolved",
                "pull_request_review_thread.line must be part of the diff"]}, {}
        pending = body.get("event") is None
        if pending and any(r["state"] == "PENDING" for r in self.reviews):
            return 422, {"message": "User can only have one pending review per pull "
                                    "request"}, {}
        review = {"id": next(self._ids), "state": "PENDING" if pending else "COMMENTED",
                  "body": body.get("body", ""), "user": self._account(self.login),
                  "commit_id": body.get("commit_id"),
                  "pull_request_url": f"{self.url}/repos/{self.repository}/pulls/{self.number}",
                  "html_url": f"https://github.example/review/{len(self.reviews)}"}
        self.reviews.append(review)
        if not pending:
            self.posted.append(body)
            for comment in comments:
                cid = next(self._ids)
                self.review_comments.append({
                    **comment, "id": cid, "user": self._account(self.login),
                    "commit_id": body.get("commit_id"),
                    "url": f"{self.url}/repos/{self.repository}/pulls/comments/{cid}",
                    "html_url": f"https://github.example/comment/{cid}"})
        return 200, review, {}

    def _delete_review(self, review_id: int) -> tuple[int, Any, dict[str, str]]:
        for review in self.reviews:
            if review["id"] == review_id and review["state"] == "PENDING":
                self.reviews.remove(review)
                return 200, review, {}
        return 422, {"message": "Can not delete a non-pending pull request review"}, {}

    def _create_issue_comment(self, query: dict[str, str],
                              body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        cid = next(self._ids)
        comment = {"id": cid, "body": body["body"], "user": self._account(self.login),
                   "url": f"{self.url}/repos/{self.repository}/issues/comments/{cid}",
                   "html_url": f"https://github.example/issue-comment/{cid}"}
        self.issue_comments.append(comment)
        return 201, comment, {}

    def _edit(self, comments: list[dict[str, Any]], cid: int,
              body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        for comment in comments:
            if comment["id"] == cid:
                if comment["user"]["login"] != self.login:
                    return 403, {"message": "Must have admin rights to Repository."}, {}
                comment["body"] = body["body"]
                return 200, comment, {}
        return 404, {"message": "Not Found"}, {}

    def add_comment_by(self, login: str, body: str, *, review: bool = False,
                       path: str = "", line: int = 1) -> None:
        """A comment someone else wrote (it may imitate reviewbot's markers)."""
        cid = next(self._ids)
        kind = "pulls" if review else "issues"
        comment = {"id": cid, "body": body, "user": self._account(login), "path": path,
                   "line": line, "url": f"{self.url}/repos/{self.repository}/{kind}/"
                                        f"comments/{cid}",
                   "html_url": f"https://github.example/c/{cid}"}
        (self.review_comments if review else self.issue_comments).append(comment)
