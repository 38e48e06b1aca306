"""A real HTTP server on 127.0.0.1 speaking the GitHub REST routes the adapter uses, held to
GitHub's published contract.

Real PyGithub points at it with `base_url`; every `url` in its answers points back at it.

- Every request it receives and every response it gives is validated against GitHub's
  official REST description (tests/github/contract.py); what does not conform is kept in
  `violations`, and the `github` fixture fails the test on any.
- Its objects carry every field GitHub's schemas require (built from the schemas).
- It enforces what GitHub documents and does: 65,536 characters a body; review comments only
  on lines of the pull request's diff (and a range within one hunk); one pending review per
  user and pull request, which also refuses a submitted review while one is pending; a
  pending review is seen by its author only and only it can be deleted; a comment is edited
  or deleted by its author only; pages with Link headers. Its error bodies are GitHub's (message,
  errors, documentation_url, status).
- It answers faults when told: a read-only token; a token with no `/user` (a GitHub App
  installation token); `faults`, matched by method and path, each a status with GitHub's
  headers (a primary or secondary rate limit, a 5xx, a 422 "submitted too quickly") or a
  dropped connection, before or after the write is stored.
- It records every request and write; `before_write` runs scripted actions as a write arrives
  (another run of the workflow writing at the same moment).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from reviewbot.github.positions import left_side_lines, right_side_lines
from tests.github import contract
from tests.local_server import LocalServer, QuietHandler

MAX_BODY = 65_536
# Where error bodies point for documentation: the double itself (links name no other host).
DOCS = f"{contract.SERVER}/docs/rest"
Answer = tuple[int, Any, dict[str, str]]


@dataclass
class Write:
    method: str
    path: str
    body: dict[str, Any]


@dataclass
class Fault:
    """What the next matching request gets instead of (or after) its normal answer."""

    method: str
    # A regular expression searched in the request's path.
    path: str = ""
    status: int = 502
    # The write is stored before the fault is answered (GitHub stored it, then failed).
    stored: bool = False
    # The connection is closed with no answer (a network failure).
    drop: bool = False
    kind: str = "server"  # server | primary | secondary | secondary-no-headers | too-quickly
    # How many matching requests it answers.
    times: int = 1


@dataclass
class FakeGitHub:
    repository: str = "acme/shop"
    number: int = 7
    head_sha: str = "0" * 40
    base_sha: str = "1" * 40
    # Who the token is: its login, "User" or "Bot", and whether `/user` answers (an App
    # installation token cannot read it, nor can the Actions token).
    login: str = "reviewbot-tester"
    login_type: str = "User"
    user_forbidden: bool = False
    # path -> patch (None: GitHub shows no diff, e.g. binary)
    files: dict[str, str | None] = field(default_factory=dict)
    review_comments: list[dict[str, Any]] = field(default_factory=list)
    issue_comments: list[dict[str, Any]] = field(default_factory=list)
    reviews: list[dict[str, Any]] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    requests: list[tuple[str, str]] = field(default_factory=list)
    posted: list[dict[str, Any]] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    read_only: bool = False
    per_page_max: int = 100
    # Paths whose lines the review API refuses although the files API shows them (it happens:
    # a diff GitHub computed differently, a file over its limits).
    refuse_paths: set[str] = field(default_factory=set)
    # login -> the repository permission GitHub names (admin, write, read, none); a login not
    # here is "none". `permission_forbidden`: the token may not ask (403).
    permissions: dict[str, str] = field(default_factory=dict)
    permission_forbidden: bool = False
    # The pull request's head is in another repository (a fork).
    fork: bool = False
    # Review comments on the repository's other pull requests.
    other_comments: list[dict[str, Any]] = field(default_factory=list)
    # Called with (method, path) as each write arrives, before it is answered.
    before_write: list[Callable[[str, str], None]] = field(default_factory=list)

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

    def count(self, method: str, pattern: str = "") -> int:
        return sum(1 for m, p in self.requests if m == method and re.search(pattern, p))

    # --- scripting ---------------------------------------------------------------------
    def fail(self, method: str, path: str = "", status: int = 502, **kwargs: Any) -> None:
        self.faults.append(Fault(method, path, status, **kwargs))

    def add_pending_review(self) -> None:
        """A pending review of the token's user, left by an interrupted run."""
        with self._lock:
            self.reviews.append(self._review({}, pending=True))

    def add_comment_by(self, login: str, body: str, *, review: bool = False,
                       path: str = "", line: int = 1, kind: str = "User",
                       in_reply_to: int | None = None) -> dict[str, Any]:
        """A comment someone else wrote (it may imitate reviewbot's markers); a review
        comment may reply in another's thread."""
        if review:
            given: dict[str, Any] = {"path": path, "line": line, "body": body, "side": "RIGHT"}
            if in_reply_to is not None:
                given["in_reply_to_id"] = in_reply_to
            comment = self._review_comment(given, self._account(login, kind), 0)
            self.review_comments.append(comment)
        else:
            comment = self._issue_comment(body, self._account(login, kind))
            self.issue_comments.append(comment)
        return comment

    def add_own_comment(self, body: str, *, in_reply_to: int | None = None) -> dict[str, Any]:
        """A comment by the token's user written by someone else's request (another run of
        the same workflow): a reply in the thread of `in_reply_to`, else an issue comment."""
        if in_reply_to is None:
            comment = self._issue_comment(body, self._me())
            self.issue_comments.append(comment)
            return comment
        target = self._review_comment_by_id(in_reply_to)
        assert target is not None
        comment = self._review_comment({"path": target["path"], "line": target.get("line"),
                                        "side": "RIGHT", "body": body,
                                        "in_reply_to_id": in_reply_to}, self._me(), 0)
        self.review_comments.append(comment)
        return comment

    def add_other_comment(self, number: int, body: str, path: str) -> None:
        """A comment by the token's user on another pull request of the repository."""
        comment = self._review_comment({"path": path, "line": 1, "body": body,
                                        "side": "RIGHT"}, self._me(), 0)
        comment["pull_request_url"] = f"{self.url}/repos/{self.repository}/pulls/{number}"
        self.other_comments.append(comment)

    # --- routing -----------------------------------------------------------------------
    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        parts = urlsplit(handler.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length) if length else b""
        body = json.loads(raw or b"{}")
        with self._lock:
            self.requests.append((method, parts.path))
            fault = self._fault(method, parts.path)
            if fault is not None and fault.drop and not fault.stored:
                handler.close_connection = True
                return
            refused = contract.check_request(method, parts.path, query, raw)
            try:
                status, payload, headers = (
                    _error(422, "Invalid request.") if refused else
                    self._answer(method, parts.path, query, body, fault))
            except Exception:  # the double's own bug: fail the test, answer like GitHub
                self.violations.append(traceback.format_exc())
                status, payload, headers = _error(500, "the fake GitHub failed")
            if fault is not None and fault.drop:
                handler.close_connection = True
                return
            data = b"" if status == 204 else json.dumps(payload).encode()
            self.violations += refused or contract.check_response(
                method, parts.path, query, raw, status, data)
        handler.send_response(status)
        handler.send_header("content-type", "application/json; charset=utf-8")
        handler.send_header("content-length", str(len(data)))
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)

    def _fault(self, method: str, path: str) -> Fault | None:
        for fault in self.faults:
            if fault.method == method and re.search(fault.path, path):
                fault.times -= 1
                if fault.times <= 0:
                    self.faults.remove(fault)
                return fault
        return None

    def _answer(self, method: str, path: str, query: dict[str, str], body: dict[str, Any],
                fault: Fault | None) -> Answer:
        if method != "GET":
            self.writes.append(Write(method, path, body))
            for action in self.before_write:
                action(method, path)
            if self.read_only:
                return _error(403, "Resource not accessible by integration")
        if fault is not None and not fault.stored and not fault.drop:
            return _fault_answer(fault, path)
        answer = self._route(method, path, query, body)
        if fault is not None and fault.stored and not fault.drop:
            return _fault_answer(fault, path)
        return answer

    def _route(self, method: str, path: str, query: dict[str, str],
               body: dict[str, Any]) -> Answer:
        repo = f"/repos/{self.repository}"
        pull = f"{repo}/pulls/{self.number}"
        issue = f"{repo}/issues/{self.number}"
        routes: list[tuple[str, str, Any]] = [
            ("GET", "/user", self._user),
            ("GET", repo, lambda q, b: (200, self._repo(), {})),
            ("GET", pull, lambda q, b: (200, self._pull(), {})),
            ("GET", f"{pull}/files", lambda q, b: self._page(self._files(), q, f"{pull}/files")),
            ("GET", f"{pull}/comments", lambda q, b: self._page(self.review_comments, q,
                                                                f"{pull}/comments")),
            ("GET", f"{pull}/reviews", lambda q, b: self._page(self._visible_reviews(), q,
                                                               f"{pull}/reviews")),
            ("GET", f"{issue}/comments", lambda q, b: self._page(self.issue_comments, q,
                                                                 f"{issue}/comments")),
            # Every pull request's review comments: this one's, and `other_comments`.
            ("GET", f"{repo}/pulls/comments", lambda q, b: self._page(
                self.other_comments + self.review_comments, q, f"{repo}/pulls/comments")),
            ("POST", f"{pull}/reviews", self._create_review),
            ("POST", f"{issue}/comments", self._create_issue_comment),
        ]
        for route_method, route_path, action in routes:
            if method == route_method and path == route_path:
                return action(query, body)  # type: ignore[no-any-return]
        if method == "DELETE" and (m := re.fullmatch(rf"{pull}/reviews/(\d+)", path)):
            return self._delete_review(int(m.group(1)))
        if m := re.fullmatch(rf"{repo}/(issues|pulls)/comments/(\d+)", path):
            return self._comment_route(method, m.group(1), int(m.group(2)), body)
        if method == "POST" and (m := re.fullmatch(rf"{pull}/comments/(\d+)/replies", path)):
            return self._reply(int(m.group(1)), body)
        if method == "GET" and (m := re.fullmatch(rf"{repo}/collaborators/([^/]+)/permission",
                                                  path)):
            return self._permission(m.group(1))
        return _error(404, "Not Found")

    def _comment_route(self, method: str, kind: str, cid: int, body: dict[str, Any]) -> Answer:
        """One comment by its id: an issue comment, or a review comment ("pulls")."""
        comments = self.issue_comments if kind == "issues" else self.review_comments
        if method == "PATCH":
            return self._edit(comments, cid, body, "IssueComment" if kind == "issues"
                              else "PullRequestReviewComment")
        if method == "DELETE":
            return self._delete(comments, cid)
        if method == "GET" and kind == "pulls":
            found = self._review_comment_by_id(cid)
            return (200, found, {}) if found else _error(404, "Not Found")
        return _error(404, "Not Found")

    # --- objects, with every field GitHub's schemas require -------------------------------
    def _account(self, login: str, kind: str = "User") -> dict[str, Any]:
        web = f"{self.url}/web/{login}"
        return contract.sample("simple-user", login=login, id=abs(hash(login)) % 100_000,
                               type=kind, url=f"{self.url}/users/{login}", html_url=web)

    def _me(self) -> dict[str, Any]:
        return self._account(self.login, self.login_type)

    def _repo(self) -> dict[str, Any]:
        owner, name = self.repository.split("/")
        return contract.sample("full-repository", id=1, name=name, full_name=self.repository,
                               owner=self._account(owner), default_branch="main",
                               url=f"{self.url}/repos/{self.repository}",
                               html_url=f"{self.url}/web/{self.repository}")

    def _pull(self) -> dict[str, Any]:
        base = f"{self.url}/repos/{self.repository}"
        repo = contract.sample("repository", id=1, name=self.repository.split("/")[1],
                               full_name=self.repository, url=base,
                               owner=self._account(self.repository.split("/")[0]))
        return contract.sample(
            "pull-request", id=7000, number=self.number, state="open", title="A change",
            url=f"{base}/pulls/{self.number}", issue_url=f"{base}/issues/{self.number}",
            html_url=f"{self.url}/web/{self.repository}/pull/{self.number}",
            user=self._account("author"),
            head={"sha": self.head_sha, "ref": "topic", "label": "acme:topic",
                  "repo": {**repo, "full_name": "stranger/shop"} if self.fork else repo,
                  "user": self._account("author")},
            base={"sha": self.base_sha, "ref": "main", "label": "acme:main", "repo": repo,
                  "user": self._account("acme")})

    def _files(self) -> list[dict[str, Any]]:
        entries = []
        for path, patch in self.files.items():
            added = sum(1 for row in (patch or "").split("\n") if row.startswith("+"))
            removed = sum(1 for row in (patch or "").split("\n") if row.startswith("-"))
            entry = contract.sample("diff-entry", filename=path, status="modified",
                                    sha="f" * 40, additions=added, deletions=removed,
                                    changes=added + removed)
            if patch is not None:
                entry["patch"] = patch
            entries.append(entry)
        return entries

    def _links(self, self_url: str, html: str) -> dict[str, Any]:
        pull = f"{self.url}/repos/{self.repository}/pulls/{self.number}"
        return {"self": {"href": self_url}, "html": {"href": html},
                "pull_request": {"href": pull}}

    def _review_comment(self, given: dict[str, Any], user: dict[str, Any],
                        review_id: int) -> dict[str, Any]:
        cid = next(self._ids)
        url = f"{self.url}/repos/{self.repository}/pulls/comments/{cid}"
        html = f"{self.url}/web/{self.repository}/pull/{self.number}#r{cid}"
        line = given.get("line")
        optional = {key: given[key] for key in ("line", "start_line", "side", "start_side",
                                                 "in_reply_to_id") if key in given}
        return contract.sample(
            "pull-request-review-comment", id=cid, node_id=f"PRRC_{cid}", url=url,
            html_url=html, pull_request_review_id=review_id, path=given.get("path", ""),
            body=given["body"], user=user, commit_id=self.head_sha,
            original_commit_id=self.head_sha, diff_hunk=self._hunk(given.get("path", ""),
                                                                    line),
            pull_request_url=f"{self.url}/repos/{self.repository}/pulls/{self.number}",
            author_association="NONE" if user["type"] == "Bot" else "MEMBER",
            created_at=_now(), updated_at=_now(), _links=self._links(url, html),
            original_line=line, **optional)

    def _hunk(self, path: str, line: int | None) -> str:
        patch = self.files.get(path) or ""
        return patch.split("\n", 1)[0] if patch else "@@ -1 +1 @@"

    def _issue_comment(self, body: str, user: dict[str, Any]) -> dict[str, Any]:
        cid = next(self._ids)
        return contract.sample(
            "issue-comment", id=cid, node_id=f"IC_{cid}", body=body, user=user,
            url=f"{self.url}/repos/{self.repository}/issues/comments/{cid}",
            html_url=f"{self.url}/web/{self.repository}/pull/{self.number}"
                     f"#issuecomment-{cid}",
            issue_url=f"{self.url}/repos/{self.repository}/issues/{self.number}",
            author_association="NONE" if user["type"] == "Bot" else "MEMBER",
            created_at=_now(), updated_at=_now())

    # --- handlers ----------------------------------------------------------------------
    def _user(self, query: dict[str, str], body: dict[str, Any]) -> Answer:
        if self.user_forbidden:
            return _error(403, "Resource not accessible by integration")
        me = self._me()
        return 200, contract.sample("public-user", **me, user_view_type="public"), {}

    def _page(self, items: list[dict[str, Any]], query: dict[str, str], path: str) -> Answer:
        size = min(int(query.get("per_page", 30)), self.per_page_max)
        page = int(query.get("page", 1))
        chunk = items[(page - 1) * size:page * size]
        headers = {}
        if page * size < len(items):
            headers["link"] = (f'<{self.url}{path}?per_page={size}&page={page + 1}>; '
                               'rel="next"')
        return 200, chunk, headers

    def _visible_reviews(self) -> list[dict[str, Any]]:
        """A pending review is seen by its author only."""
        return [r for r in self.reviews
                if r["state"] != "PENDING" or r["user"]["login"] == self.login]

    def _line_problem(self, comment: dict[str, Any]) -> str | None:
        patch = self.files.get(comment.get("path", ""))
        if comment.get("path") in self.refuse_paths:
            patch = None
        side = comment.get("side", "RIGHT")
        if side not in ("RIGHT", "LEFT") or "line" not in comment:
            return ("Pull request review thread line must be part of the diff and Pull "
                    "request review thread diff hunk can't be blank")
        # LEFT: the base's side, where GitHub shows a removed line (and a context line).
        lines = ((right_side_lines(patch) if side == "RIGHT" else left_side_lines(patch))
                 if patch else set())
        if comment["line"] not in lines:
            return ("Pull request review thread line must be part of the diff and Pull "
                    "request review thread diff hunk can't be blank")
        start = comment.get("start_line")
        if start is not None and not all(n in lines for n in range(start, comment["line"])):
            return ("Pull request review thread start line must be part of the same hunk as "
                    "the line.")
        return None

    def _create_review(self, query: dict[str, str], body: dict[str, Any]) -> Answer:
        comments = body.get("comments") or []
        if any(r["state"] == "PENDING" and r["user"]["login"] == self.login
               for r in self.reviews):
            return _simple_422("User can only have one pending review per pull request",
                               "pulls/reviews#create-a-review-for-a-pull-request")
        if len(body.get("body") or "") > MAX_BODY or any(
                len(c.get("body") or "") > MAX_BODY for c in comments):
            return _simple_422(f"Body is too long (maximum is {MAX_BODY} characters)",
                               "pulls/reviews#create-a-review-for-a-pull-request")
        for comment in comments:
            if problem := self._line_problem(comment):
                return _simple_422(problem, "pulls/reviews#create-a-review-for-a-pull-request")
        pending = body.get("event") is None
        review = self._review(body, pending)
        self.reviews.append(review)
        if not pending:
            self.posted.append(body)
            self.review_comments += [self._review_comment(c, self._me(), review["id"])
                                     for c in comments]
        return 200, review, {}

    def _review(self, body: dict[str, Any], pending: bool) -> dict[str, Any]:
        rid = next(self._ids)
        html = f"{self.url}/web/{self.repository}/pull/{self.number}#review-{rid}"
        pull = f"{self.url}/repos/{self.repository}/pulls/{self.number}"
        review = contract.sample(
            "pull-request-review", id=rid, node_id=f"PRR_{rid}", user=self._me(),
            body=body.get("body", ""), state="PENDING" if pending else "COMMENTED",
            commit_id=body.get("commit_id") or self.head_sha, html_url=html,
            pull_request_url=pull, author_association="NONE",
            _links={"html": {"href": html}, "pull_request": {"href": pull}})
        if not pending:
            review["submitted_at"] = _now()
        return review

    def _delete_review(self, review_id: int) -> Answer:
        for review in self._visible_reviews():
            if review["id"] == review_id:
                if review["state"] != "PENDING":
                    return _simple_422("Can not delete a non-pending pull request review",
                                       "pulls/reviews#delete-a-pending-review-for-a-pull-"
                                       "request")
                self.reviews.remove(review)
                return 200, review, {}
        return _error(404, "Not Found")

    def _create_issue_comment(self, query: dict[str, str], body: dict[str, Any]) -> Answer:
        if len(body.get("body") or "") > MAX_BODY:
            return _body_too_long("IssueComment")
        comment = self._issue_comment(body["body"], self._me())
        self.issue_comments.append(comment)
        return 201, comment, {}

    def _review_comment_by_id(self, cid: int) -> dict[str, Any] | None:
        return next((c for c in self.review_comments if c["id"] == cid), None)

    def _reply(self, cid: int, body: dict[str, Any]) -> Answer:
        """A reply in a review thread: it joins the thread of the comment it answers."""
        target = self._review_comment_by_id(cid)
        if target is None:
            return _error(404, "Not Found", "pulls/comments#create-a-reply-for-a-review-comment")
        if len(body.get("body") or "") > MAX_BODY:
            return _body_too_long("PullRequestReviewComment")
        root = target.get("in_reply_to_id") or cid
        reply = self._review_comment({"path": target["path"], "line": target.get("line"),
                                      "side": "RIGHT", "body": body["body"],
                                      "in_reply_to_id": root}, self._me(),
                                     target["pull_request_review_id"] or 0)
        self.review_comments.append(reply)
        return 201, reply, {}

    def _permission(self, login: str) -> Answer:
        if self.permission_forbidden:
            return _error(403, "Resource not accessible by integration",
                          "collaborators/collaborators#get-repository-permissions-for-a-user")
        level = self.permissions.get(login, "none")
        user = {**self._account(login), "permissions": {
            "admin": level == "admin", "maintain": level == "admin",
            "push": level in ("admin", "write"), "triage": level != "none",
            "pull": level != "none"}, "role_name": level}
        return 200, contract.sample("repository-collaborator-permission", permission=level,
                                    role_name=level, user=user), {}

    def _edit(self, comments: list[dict[str, Any]], cid: int, body: dict[str, Any],
              resource: str) -> Answer:
        for comment in comments:
            if comment["id"] == cid:
                if comment["user"]["login"] != self.login:
                    return _error(403, "You must have admin rights to the repository or be "
                                       "the author of this comment.")
                if len(body.get("body") or "") > MAX_BODY:
                    return _body_too_long(resource)
                comment["body"] = body["body"]
                comment["updated_at"] = _now()
                return 200, comment, {}
        return _error(404, "Not Found")


    def _delete(self, comments: list[dict[str, Any]], cid: int) -> Answer:
        for comment in comments:
            if comment["id"] == cid:
                if comment["user"]["login"] != self.login:
                    return _error(403, "You must have admin rights to the repository or be "
                                       "the author of this comment.")
                comments.remove(comment)
                return 204, None, {}
        return _error(404, "Not Found")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _error(status: int, message: str, page: str = "") -> Answer:
    return status, {"message": message, "documentation_url": f"{DOCS}/{page}",
                    "status": str(status)}, {}


def _simple_422(message: str, page: str) -> Answer:
    return 422, {"message": "Unprocessable Entity", "errors": [message],
                 "documentation_url": f"{DOCS}/{page}", "status": "422"}, {}


def _body_too_long(resource: str) -> Answer:
    return 422, {"message": "Validation Failed", "errors": [{
        "resource": resource, "code": "custom", "field": "body",
        "message": f"body is too long (maximum is {MAX_BODY} characters)"}],
        "documentation_url": f"{DOCS}/issues/comments", "status": "422"}, {}


def _fault_answer(fault: Fault, path: str) -> Answer:
    """GitHub's answers for the faults it documents (rate limits: the REST API's "Rate limits"
    page; errors: "Troubleshooting the REST API")."""
    limits = "using-the-rest-api/rate-limits-for-the-rest-api"
    if fault.kind == "primary":
        reset = str(int(time.time()) + 3600)
        return fault.status, {"message": "API rate limit exceeded for installation.",
                              "documentation_url": f"{DOCS}/{limits}"}, {
            "x-ratelimit-remaining": "0", "x-ratelimit-limit": "5000",
            "x-ratelimit-reset": reset}
    if fault.kind in ("secondary", "secondary-no-headers"):
        headers = {"retry-after": "7"} if fault.kind == "secondary" else {}
        return fault.status, {"message": "You have exceeded a secondary rate limit. Please "
                                         "wait a few minutes before you try again.",
                              "documentation_url": f"{DOCS}/{limits}#about-secondary-rate-"
                                                   "limits"}, headers
    if fault.kind == "too-quickly" and path.endswith("/reviews"):
        return _simple_422("was submitted too quickly", limits)
    if fault.kind == "too-quickly":
        return 422, {"message": "Validation Failed", "errors": [{
            "resource": "IssueComment", "code": "unprocessable", "field": "data",
            "message": "was submitted too quickly"}], "documentation_url": f"{DOCS}/{limits}",
            "status": "422"}, {}
    # A 5xx carries rate-limit headers like every answer: they do not ask for a wait.
    return fault.status, {"message": "Server Error", "documentation_url": DOCS}, {
        "x-ratelimit-remaining": "4999", "x-ratelimit-reset": str(int(time.time()) + 64)}

