"""A real HTTP server on 127.0.0.1 speaking the GitLab REST v4 routes a merge-request reviewer
uses, held to GitLab's documented contract.

Real python-gitlab points at it with its URL; every `web_url` and pagination link in its answers
points back at it. docs/GITLAB.md, "The test double", says which GitLab page each rule is from.

- Every request is checked against the routes' parameter declarations (tests/gitlab/contract.py):
  an unknown route, a missing or mistyped parameter, a parameter GitLab would silently drop are
  kept in `violations`, and the `gitlab` fixture fails the test on any. Refused requests get
  GitLab's answer (404 `{"error": "404 Not Found"}`, 400 `{"error": "body is missing"}`).
- The merge request is a real git repository's branches: each `refresh()` that finds a new head
  (or target) adds a version (base = merge base, start = target, head = source), listed newest
  first; its diffs are `git diff base head`.
- It validates positions as GitLab does: the SHAs of one of the versions, a path of that
  version's diff, `new_line` alone for an added line, `old_line` alone for a removed one, both
  for a context line; anything else is GitLab's 400 `Note {:line_code=>["can't be blank",
  "must be a valid line code"]}`.
- Notes: at most 1,000,000 characters; the author is the token's user; edited or deleted by
  their author only; system notes are listed with the rest and belong to no one who may edit
  them; a discussion is resolved by a Developer (or higher) or the merge request's author.
- Quick actions: every note body written (created or edited) is read the way GitLab's
  `Gitlab::QuickActions::Extractor` reads it (`quick_actions`), and each command it would run
  is kept in `commands`: a `/merge` line in a note of a user who may merge merges. Stricter
  than GitLab: every command name is known to every user (GitLab runs those the user may).
- Auth: `PRIVATE-TOKEN` or `Authorization: Bearer` (a personal, project or OAuth token) names a
  user with a role; no token, an unknown one, or a CI job token (`JOB-TOKEN`: these routes do
  not accept one) is 401; a user who is no member sees 404 "Project Not Found".
- Pages as GitLab sends them: per_page 20 unless asked, at most 100; x-page, x-per-page,
  x-next-page, x-prev-page, x-total, x-total-pages and a Link header.
- Faults when told (`fail`): a status with GitLab's headers and body (a throttle's 429 with
  Retry-After and RateLimit-*, an endpoint limit, a 5xx) or a dropped connection, before or
  after the write is stored. It records every request and write.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import subprocess
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

from tests.gitlab import contract
from tests.local_server import LocalServer, QuietHandler

# Notes API, "body": "Limited to 1,000,000 characters" (Gitlab::Database::MAX_TEXT_SIZE_LIMIT).
MAX_BODY = 1_000_000
PER_PAGE, MAX_PER_PAGE = 20, 100
# Access levels, as the Members API names them.
GUEST, REPORTER, DEVELOPER, MAINTAINER, OWNER = 10, 20, 30, 40, 50
# Some of GitLab's quick action names ("GitLab quick actions"): what a note can make happen.
QUICK_ACTIONS = ("approve", "unapprove", "merge", "assign", "unassign", "assign_reviewer",
                 "reviewer", "request_review", "unassign_reviewer", "label", "unlabel",
                 "relabel", "close", "reopen", "title", "milestone", "remove_milestone",
                 "lock", "unlock", "draft", "ready", "rebase", "submit_review", "spend",
                 "estimate", "due", "cc", "subscribe", "unsubscribe", "todo", "done",
                 "target_branch", "copy_metadata", "award", "react", "shrug", "tableflip",
                 "confidential", "duplicate", "relate", "severity", "status", "q")
# GitLab's extractor (lib/gitlab/quick_actions/extractor.rb): a command is a line that starts
# with `/name`, unless it is inside a ``` block, an HTML block or a >>> quote as its regular
# expression finds them (a block ends at the first line that is only its fence).
_QUICK_ACTION = re.compile(r"""
      (?P<code>^```.+?\n```$)
    | (?P<html>^<[^>]+?>\n.+?\n</[^>]+?>$)
    | (?P<quote>^>>>.+?\n>>>$)
    | (?:^/(?P<cmd>""" + "|".join(sorted(QUICK_ACTIONS, key=len, reverse=True)) + r""")
         (?:[ ](?P<arg>[^\n]*))?(?:\s*\n|$))
""", re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE)
LINE_CODE = {"line_code": ["can't be blank", "must be a valid line code"]}
Answer = tuple[int, Any, dict[str, str]]


@dataclass
class User:
    id: int
    username: str
    # The project role (an access level); 0: not a member.
    access: int = DEVELOPER
    bot: bool = False


@dataclass
class Token:
    user: User
    # personal (also project and group tokens: PRIVATE-TOKEN or Bearer) | oauth (Bearer) | job
    kind: str = "personal"


@dataclass
class FileDiff:
    old_path: str
    new_path: str
    new_file: bool
    deleted_file: bool
    renamed_file: bool
    diff: str
    # (old_line, new_line) of every line of the hunks: (n, None) removed, (None, n) added.
    lines: frozenset[tuple[int | None, int | None]]


@dataclass
class Version:
    id: int
    base: str
    start: str
    head: str
    files: list[FileDiff]
    created_at: str


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, Any]
    body: dict[str, Any]
    # How it authenticated: private-token | bearer | job-token | none
    auth: str


@dataclass
class Fault:
    """What the next matching request gets instead of (or after) its normal answer."""

    method: str
    # A regular expression searched in the request's path.
    path: str = ""
    status: int = 502
    # The write is stored before the fault is answered (GitLab stored it, then failed).
    stored: bool = False
    # The connection is closed with no answer (a network failure).
    drop: bool = False
    # server | throttle (Rack::Attack's user and IP limits) | throttle-no-headers | endpoint
    kind: str = "server"
    retry_after: int = 60
    times: int = 1


@dataclass
class FakeGitLab:
    repo: Path | None = None
    project_id: int = 42
    path_with_namespace: str = "acme/shop"
    iid: int = 7
    source_branch: str = "topic"
    target_branch: str = "main"
    users: dict[str, User] = field(default_factory=lambda: {
        "reviewbot": User(1, "reviewbot", DEVELOPER, bot=True),
        "author": User(2, "author", DEVELOPER),
        "reporter": User(3, "reporter", REPORTER),
        "outsider": User(4, "outsider", 0)})
    # The MR's author (a username of `users`).
    author: str = "author"
    tokens: dict[str, Token] = field(default_factory=dict)
    versions: list[Version] = field(default_factory=list)
    # Discussions in creation order; each {"id", "individual_note", "notes"}.
    discussions: list[dict[str, Any]] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    writes: list[Request] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    # (username, "/command argument") for every quick action a written note would run.
    commands: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._ids = itertools.count(1000)
        self._lock = threading.Lock()
        if not self.tokens:
            users = self.users
            self.tokens = {"glpat-reviewbot": Token(users["reviewbot"]),
                           "glpat-author": Token(users["author"]),
                           "glpat-reporter": Token(users["reporter"]),
                           "glpat-outsider": Token(users["outsider"]),
                           "oauth-reviewbot": Token(users["reviewbot"], "oauth"),
                           "job-reviewbot": Token(users["reviewbot"], "job")}
        fake = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                fake._handle(self, "GET")

            def do_POST(self) -> None:
                fake._handle(self, "POST")

            def do_PUT(self) -> None:
                fake._handle(self, "PUT")

            def do_DELETE(self) -> None:
                fake._handle(self, "DELETE")

            def do_PATCH(self) -> None:
                fake._handle(self, "PATCH")

        self._local = LocalServer(Handler)

    # --- lifecycle ---------------------------------------------------------------------
    @property
    def url(self) -> str:
        return self._local.origin

    def start(self) -> FakeGitLab:
        self._local.start()
        return self

    def stop(self) -> None:
        self._local.stop()

    # --- the merge request -------------------------------------------------------------
    def refresh(self) -> Version:
        """A new version when the branches moved (a push to either), read from the repository."""
        assert self.repo is not None, "FakeGitLab(repo=...) is the merge request's repository"
        head = self._git("rev-parse", self.source_branch)
        start = self._git("rev-parse", self.target_branch)
        latest = self.latest
        if latest is not None and (latest.head, latest.start) == (head, start):
            return latest
        base = self._git("merge-base", start, head)
        version = Version(next(self._ids), base, start, head,
                          _file_diffs(self._git("diff", "--no-color", "--no-ext-diff", "-M",
                                                "--unified=3", base, head, strip=False)),
                          _now())
        with self._lock:
            self.versions.insert(0, version)
        return version

    @property
    def latest(self) -> Version | None:
        return self.versions[0] if self.versions else None

    def merge_ref(self) -> str:
        """GitLab's merge of the merge request into its target for a merged results pipeline
        (or a merge train's first car): a commit whose parents are the target's head and the
        source's, kept at `refs/merge-requests/IID/merge`; `refs/merge-requests/IID/head` is
        the source's head, as GitLab keeps it for every merge request."""
        latest = self.refresh()
        tree = self._git("merge-tree", "--write-tree", latest.start, latest.head)
        merge = self._git("commit-tree", tree, "-p", latest.start, "-p", latest.head, "-m",
                          f"Merge branch '{self.source_branch}' into '{self.target_branch}'")
        self._git("update-ref", f"refs/merge-requests/{self.iid}/merge", merge)
        self._git("update-ref", f"refs/merge-requests/{self.iid}/head", latest.head)
        return merge

    def ci_variables(self, event_type: str = "detached") -> dict[str, str]:
        """The predefined variables of a merge request pipeline in the merge request's project
        ("Predefined CI/CD variables", "merge request pipelines"): `detached` checks out the
        source's head (CI_COMMIT_SHA), and sets no branch SHA; `merged_result` and
        `merge_train` check out GitLab's merge commit and set the source's and the target's
        heads (CI_MERGE_REQUEST_SOURCE_BRANCH_SHA, CI_MERGE_REQUEST_TARGET_BRANCH_SHA)."""
        latest = self.refresh()
        self._git("update-ref", f"refs/merge-requests/{self.iid}/head", latest.head)
        found = {"CI_PIPELINE_SOURCE": "merge_request_event",
                 "CI_API_V4_URL": f"{self.url}/api/v4", "CI_SERVER_URL": self.url,
                 "CI_PROJECT_ID": str(self.project_id),
                 "CI_PROJECT_PATH": self.path_with_namespace,
                 "CI_MERGE_REQUEST_ID": str(7000 + self.iid),
                 "CI_MERGE_REQUEST_IID": str(self.iid),
                 "CI_MERGE_REQUEST_PROJECT_ID": str(self.project_id),
                 "CI_MERGE_REQUEST_SOURCE_PROJECT_ID": str(self.project_id),
                 "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": self.source_branch,
                 "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": self.target_branch,
                 "CI_MERGE_REQUEST_DIFF_BASE_SHA": latest.base,
                 "CI_MERGE_REQUEST_EVENT_TYPE": event_type,
                 "CI_COMMIT_SHA": latest.head,
                 "CI_COMMIT_REF_NAME": f"refs/merge-requests/{self.iid}/head"}
        if event_type in ("merged_result", "merge_train"):
            found |= {"CI_COMMIT_SHA": self.merge_ref(),
                      "CI_COMMIT_REF_NAME": f"refs/merge-requests/{self.iid}/merge",
                      "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA": latest.head,
                      "CI_MERGE_REQUEST_TARGET_BRANCH_SHA": latest.start}
        if event_type == "merge_train":
            found["CI_COMMIT_REF_NAME"] = f"refs/merge-requests/{self.iid}/train"
            self._git("update-ref", found["CI_COMMIT_REF_NAME"], found["CI_COMMIT_SHA"])
        return found

    def _git(self, *args: str, strip: bool = True) -> str:
        out = subprocess.run(["git", "-c", "core.quotePath=false", *args], cwd=self.repo,
                             capture_output=True, check=True, text=True).stdout
        return out.strip() if strip else out

    # --- scripting ---------------------------------------------------------------------
    def fail(self, method: str, path: str = "", status: int = 502, **kwargs: Any) -> None:
        self.faults.append(Fault(method, path, status, **kwargs))

    def add_system_note(self, body: str) -> dict[str, Any]:
        """A note GitLab writes itself ("added 1 commit"): listed with the others."""
        with self._lock:
            note = self._note(body, self.users[self.author], system=True)
            self.discussions.append(self._discussion([note], individual=True))
            return note

    def add_note_by(self, username: str, body: str) -> dict[str, Any]:
        """An individual note someone else wrote."""
        with self._lock:
            note = self._note(body, self.users[username])
            self.discussions.append(self._discussion([note], individual=True))
            return note

    def notes(self) -> list[dict[str, Any]]:
        return [note for d in self.discussions for note in d["notes"]]

    def count(self, method: str, pattern: str = "") -> int:
        return sum(1 for r in self.requests if r.method == method and re.search(pattern, r.path))

    # --- routing -----------------------------------------------------------------------
    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        parts = urlsplit(handler.path)
        query: dict[str, Any] = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length) if length else b""
        with self._lock:
            body, problem = _body(raw, handler.headers.get("content-type") or "")
            token, auth = self._credentials(handler.headers)
            request = Request(method, parts.path, query, body, auth)
            self.requests.append(request)
            fault = self._fault(method, parts.path)
            if fault is not None and fault.drop and not fault.stored:
                handler.close_connection = True
                return
            try:
                if problem:
                    self.violations.append(f"{method} {parts.path}: {problem}")
                    answer: Answer = (*contract.grape_error(400, problem), {})
                else:
                    answer = self._answer(request, token, fault)
            except Exception:  # the double's own bug: fail the test, answer like GitLab
                self.violations.append(traceback.format_exc())
                answer = (*contract.message(500, "500 Internal Server Error"), {})
            if fault is not None and fault.drop:
                handler.close_connection = True
                return
        _send(handler, *answer)

    def _credentials(self, headers: Any) -> tuple[Token | None, str]:
        """The token and how it came: PRIVATE-TOKEN and Bearer carry personal, project and
        OAuth tokens; JOB-TOKEN a CI job's token."""
        if value := headers.get("private-token"):
            return self.tokens.get(value), "private-token"
        if (value := headers.get("authorization") or "").startswith("Bearer "):
            return self.tokens.get(value.removeprefix("Bearer ")), "bearer"
        if value := headers.get("job-token"):
            token = self.tokens.get(value)
            return (token if token is not None and token.kind == "job" else None), "job-token"
        return None, "none"

    def _fault(self, method: str, path: str) -> Fault | None:
        for fault in self.faults:
            if fault.method == method and re.search(fault.path, path):
                fault.times -= 1
                if fault.times <= 0:
                    self.faults.remove(fault)
                return fault
        return None

    def _answer(self, request: Request, token: Token | None, fault: Fault | None) -> Answer:
        found = contract.route(request.method, request.path)
        if found is None:
            self.violations.append(f"{request.method} {request.path}: no such GitLab route")
            return (*contract.grape_error(404, "404 Not Found"), {})
        route, segments = found
        params = {**request.query, **request.body}
        if request.method != "GET":
            self.writes.append(request)
        if fault is not None and not fault.stored and not fault.drop:
            return _fault_answer(fault)
        # Grape runs the endpoint's `before { authenticate! }` ahead of its validations.
        if token is None or token.kind == "job":
            return (*contract.message(401, "401 Unauthorized"), {})
        if problems := contract.check(route, segments, params):
            self.violations.append(f"{request.method} {request.path}: {', '.join(problems)}")
            return (*contract.grape_error(400, ", ".join(problems)), {})
        if extra := contract.unknown(route, params):
            self.violations.append(f"{request.method} {request.path}: GitLab ignores "
                                   f"{', '.join(extra)}")
        answer = self._route(route.template, segments, params, token.user, request)
        if fault is not None and fault.stored and not fault.drop:
            return _fault_answer(fault)
        return answer

    def _route(self, template: str, segments: dict[str, str], params: dict[str, Any],
               user: User, request: Request) -> Answer:
        if template == "/user":
            return 200, self._user(user, private=True), {}
        if unquote(segments["id"]) not in (str(self.project_id), self.path_with_namespace) \
                or user.access == 0:
            return (*contract.message(404, "404 Project Not Found"), {})
        if template == "/projects/:id":
            return 200, self._project(), {}
        if template == "/projects/:id/members/all/:user_id":
            return self._member(int(segments["user_id"]))
        if int(segments["merge_request_iid"]) != self.iid or user.access < REPORTER:
            return (*contract.message(404, "404 Merge Request Not Found"), {})
        action = _MR_ROUTES[(request.method, template.removeprefix(contract.MR))]
        return action(self, segments, params, user, request)

    # --- objects -----------------------------------------------------------------------
    def _user(self, user: User, private: bool = False) -> dict[str, Any]:
        shown = {"id": user.id, "username": user.username, "name": user.username.title(),
                 "state": "active", "locked": False,
                 "avatar_url": f"{self.url}/uploads/{user.id}.png",
                 "web_url": f"{self.url}/{user.username}"}
        if private:
            shown |= {"bot": user.bot, "created_at": "2026-01-01T00:00:00.000Z",
                      "is_admin": False, "email": f"{user.username}@example.invalid"}
        return shown

    def _project(self) -> dict[str, Any]:
        namespace, name = self.path_with_namespace.rsplit("/", 1)
        return {"id": self.project_id, "name": name, "path": name,
                "path_with_namespace": self.path_with_namespace,
                "name_with_namespace": self.path_with_namespace.replace("/", " / "),
                "default_branch": self.target_branch, "visibility": "private",
                "web_url": f"{self.url}/{self.path_with_namespace}",
                "namespace": {"id": 9, "name": namespace, "path": namespace, "kind": "group",
                              "full_path": namespace}}

    def _member(self, user_id: int) -> Answer:
        member = next((u for u in self.users.values() if u.id == user_id and u.access), None)
        if member is None:
            return (*contract.message(404, "404 Member Not Found"), {})
        return 200, {**self._user(member), "access_level": member.access,
                     "created_at": "2026-01-01T00:00:00.000Z", "expires_at": None,
                     "membership_state": "active"}, {}

    def _merge_request(self) -> dict[str, Any]:
        latest = self.latest
        assert latest is not None, "call refresh() once the branches exist"
        web = f"{self.url}/{self.path_with_namespace}/-/merge_requests/{self.iid}"
        return {"id": 7000 + self.iid, "iid": self.iid, "project_id": self.project_id,
                "title": "A change", "description": "", "state": "opened", "draft": False,
                "source_branch": self.source_branch, "target_branch": self.target_branch,
                "source_project_id": self.project_id, "target_project_id": self.project_id,
                "author": self._user(self.users[self.author]), "sha": latest.head,
                "diff_refs": {"base_sha": latest.base, "head_sha": latest.head,
                              "start_sha": latest.start},
                "web_url": web, "created_at": "2026-01-01T00:00:00.000Z",
                "updated_at": _now(), "user_notes_count": sum(
                    1 for n in self.notes() if not n["system"])}

    def _version(self, version: Version, full: bool = False) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "id": version.id, "head_commit_sha": version.head,
            "base_commit_sha": version.base, "start_commit_sha": version.start,
            "created_at": version.created_at, "merge_request_id": 7000 + self.iid,
            "state": "collected", "real_size": str(len(version.files)),
            "patch_id_sha": hashlib.sha1(version.head.encode()).hexdigest()}  # noqa: S324
        if full:
            shown["commits"] = []
            shown["diffs"] = [_diff_entry(f) for f in version.files]
        return shown

    def _note(self, body: str, author: User, *, system: bool = False, kind: str | None = None,
              position: dict[str, Any] | None = None) -> dict[str, Any]:
        resolvable = kind is not None
        if not system:
            self._run_quick_actions(body, author)
        return {"id": next(self._ids), "type": kind, "body": body, "attachment": None,
                "author": self._user(author), "created_at": _now(), "updated_at": _now(),
                "system": system, "noteable_id": 7000 + self.iid,
                "noteable_type": "MergeRequest", "project_id": self.project_id,
                "noteable_iid": self.iid, "commit_id": None, "position": position,
                "resolvable": resolvable, "resolved": False if resolvable else None,
                "resolved_by": None, "resolved_at": None, "confidential": False,
                "internal": False, "imported": False, "imported_from": "none"}

    def _run_quick_actions(self, body: str, author: User) -> None:
        self.commands += [(author.username, command) for command in quick_actions(body)]

    def _discussion(self, notes: list[dict[str, Any]], individual: bool) -> dict[str, Any]:
        digest = hashlib.sha1(str(next(self._ids)).encode()).hexdigest()  # noqa: S324
        return {"id": digest, "individual_note": individual, "notes": notes}

    # --- pages -------------------------------------------------------------------------
    def _page(self, items: list[Any], params: dict[str, Any], request: Request) -> Answer:
        size = min(max(int(params.get("per_page") or PER_PAGE), 1), MAX_PER_PAGE)
        page = max(int(params.get("page") or 1), 1)
        pages = max((len(items) + size - 1) // size, 1)
        headers = {"x-page": str(page), "x-per-page": str(size), "x-total": str(len(items)),
                   "x-total-pages": str(pages),
                   "x-next-page": str(page + 1) if page < pages else "",
                   "x-prev-page": str(page - 1) if page > 1 else ""}
        links = [(rel, n) for rel, n in (("prev", page - 1), ("next", page + 1), ("first", 1),
                                         ("last", pages)) if 1 <= n <= pages
                 and (rel not in ("prev", "next") or n != page)]
        headers["link"] = ", ".join(
            f'<{self.url}{request.path}?'
            f'{urlencode({**request.query, "page": n, "per_page": size})}>; rel="{rel}"'
            for rel, n in links)
        return 200, items[(page - 1) * size:page * size], headers

    # --- merge request routes ----------------------------------------------------------
    def _get_mr(self, s: dict[str, str], p: dict[str, Any], u: User, r: Request) -> Answer:
        return 200, self._merge_request(), {}

    def _changes(self, s: dict[str, str], p: dict[str, Any], u: User, r: Request) -> Answer:
        latest = self.latest
        assert latest is not None
        return 200, {**self._merge_request(), "changes": [_diff_entry(f) for f in latest.files],
                     "overflow": False}, {}

    def _diffs(self, s: dict[str, str], p: dict[str, Any], u: User, r: Request) -> Answer:
        latest = self.latest
        assert latest is not None
        return self._page([_diff_entry(f) for f in latest.files], p, r)

    def _versions(self, s: dict[str, str], p: dict[str, Any], u: User, r: Request) -> Answer:
        return self._page([self._version(v) for v in self.versions], p, r)

    def _get_version(self, s: dict[str, str], p: dict[str, Any], u: User, r: Request) -> Answer:
        for version in self.versions:
            if version.id == int(s["version_id"]):
                return 200, self._version(version, full=True), {}
        return (*contract.message(404, "404 Not found"), {})

    def _list_notes(self, s: dict[str, str], p: dict[str, Any], u: User, r: Request) -> Answer:
        key = p.get("order_by") or "created_at"
        notes = sorted(self.notes(), key=lambda n: (n[key], n["id"]),
                       reverse=(p.get("sort") or "desc") == "desc")
        return self._page(notes, p, r)

    def _create_note(self, s: dict[str, str], p: dict[str, Any], u: User, r: Request) -> Answer:
        if problem := _body_problem(p["body"]):
            return (*contract.note_invalid(problem), {})
        note = self._note(p["body"], u)
        self.discussions.append(self._discussion([note], individual=True))
        return 201, note, {}

    def _find_note(self, note_id: str, discussion_id: str | None = None
                   ) -> tuple[dict[str, Any], dict[str, Any]] | None:
        for discussion in self.discussions:
            if discussion_id is not None and discussion["id"] != discussion_id:
                continue
            for note in discussion["notes"]:
                if note["id"] == int(note_id):
                    return discussion, note
        return None

    def _get_note(self, s: dict[str, str], p: dict[str, Any], u: User, r: Request) -> Answer:
        found = self._find_note(s["note_id"], s.get("discussion_id"))
        if found is None:
            return (*contract.message(404, "404 Note Not Found"), {})
        return 200, found[1], {}

    def _edit_note(self, s: dict[str, str], p: dict[str, Any], u: User, r: Request) -> Answer:
        found = self._find_note(s["note_id"], s.get("discussion_id"))
        if found is None:
            return (*contract.message(404, "404 Note Not Found"), {})
        note = found[1]
        if p.get("resolved") is not None:
            return self._resolve_note(found[0], note, contract.boolean(p["resolved"]), u)
        if note["system"] or note["author"]["id"] != u.id:
            return (*contract.message(403, "403 Forbidden"), {})
        if "body" in p:
            if problem := _body_problem(p["body"]):
                return (*contract.note_invalid(problem), {})
            self._run_quick_actions(p["body"], u)
            note["body"] = p["body"]
            note["updated_at"] = _now()
        return 200, note, {}

    def _delete_note(self, s: dict[str, str], p: dict[str, Any], u: User, r: Request) -> Answer:
        found = self._find_note(s["note_id"], s.get("discussion_id"))
        if found is None:
            return (*contract.message(404, "404 Note Not Found"), {})
        discussion, note = found
        if note["system"] or note["author"]["id"] != u.id:
            return (*contract.message(403, "403 Forbidden"), {})
        discussion["notes"].remove(note)
        if not discussion["notes"]:
            self.discussions.remove(discussion)
        return 204, None, {}

    def _list_discussions(self, s: dict[str, str], p: dict[str, Any], u: User,
                          r: Request) -> Answer:
        return self._page(self.discussions, p, r)

    def _find_discussion(self, discussion_id: str) -> dict[str, Any] | None:
        return next((d for d in self.discussions if d["id"] == discussion_id), None)

    def _get_discussion(self, s: dict[str, str], p: dict[str, Any], u: User,
                        r: Request) -> Answer:
        discussion = self._find_discussion(s["discussion_id"])
        if discussion is None:
            return (*contract.message(404, "404 Discussion Not Found"), {})
        return 200, discussion, {}

    def _discussion_notes(self, s: dict[str, str], p: dict[str, Any], u: User,
                          r: Request) -> Answer:
        discussion = self._find_discussion(s["discussion_id"])
        if discussion is None:
            return (*contract.message(404, "404 Notes Not Found"), {})
        return 200, discussion["notes"], {}

    def _create_discussion(self, s: dict[str, str], p: dict[str, Any], u: User,
                           r: Request) -> Answer:
        position = p.get("position")
        problem = _body_problem(p["body"])
        if position is not None:
            if position["position_type"] != "text":
                self.violations.append("the double does not model image positions")
                return (*contract.note_invalid(LINE_CODE), {})
            problem = (problem or {}) | (self._position_problem(position) or {})
        if problem:
            return (*contract.note_invalid(problem), {})
        shown = None if position is None else _shown_position(position)
        note = self._note(p["body"], u, kind="DiffNote" if position else "DiscussionNote",
                          position=shown)
        discussion = self._discussion([note], individual=False)
        self.discussions.append(discussion)
        return 201, discussion, {}

    def _position_problem(self, position: dict[str, Any]) -> dict[str, list[str]] | None:
        """GitLab finds the diff of the position's SHAs and the line of that diff with exactly
        this (old_line, new_line); no such line leaves the note without a line code."""
        refs = (position["base_sha"], position["start_sha"], position["head_sha"])
        version = next((v for v in self.versions if (v.base, v.start, v.head) == refs), None)
        if version is None:
            return LINE_CODE
        files = [f for f in version.files if position.get("new_path") in (f.new_path, None)
                 and position.get("old_path") in (f.old_path, None)
                 and (position.get("new_path") or position.get("old_path"))]
        wanted = (_int(position.get("old_line")), _int(position.get("new_line")))
        if not any(wanted in f.lines for f in files):
            return LINE_CODE
        return None

    def _reply(self, s: dict[str, str], p: dict[str, Any], u: User, r: Request) -> Answer:
        discussion = self._find_discussion(s["discussion_id"])
        if discussion is None:
            return (*contract.message(404, "404 Discussion Not Found"), {})
        if discussion["notes"][0]["system"]:
            return (*contract.message(400, "400 Bad request - Discussion can not be replied "
                                           "to."), {})
        if problem := _body_problem(p["body"]):
            return (*contract.note_invalid(problem), {})
        if discussion["individual_note"]:  # a reply turns a note into a discussion
            discussion["individual_note"] = False
            for note in discussion["notes"]:
                note |= {"type": "DiscussionNote", "resolvable": True, "resolved": False}
        note = self._note(p["body"], u, kind="DiscussionNote")
        discussion["notes"].append(note)
        return 201, note, {}

    def _resolve(self, s: dict[str, str], p: dict[str, Any], u: User, r: Request) -> Answer:
        discussion = self._find_discussion(s["discussion_id"])
        if discussion is None:
            return (*contract.message(404, "404 Discussion Not Found"), {})
        resolvable = [n for n in discussion["notes"] if n["resolvable"]]
        if not resolvable or not self._may_resolve(u):
            return (*contract.message(403, "403 Forbidden"), {})
        for note in resolvable:
            self._set_resolved(note, contract.boolean(p["resolved"]), u)
        return 200, discussion, {}

    def _resolve_note(self, discussion: dict[str, Any], note: dict[str, Any], resolved: bool,
                      user: User) -> Answer:
        if not self._may_resolve(user):
            return (*contract.message(403, "403 Forbidden"), {})
        if not note["resolvable"]:
            return (*contract.message(400, "400 Bad request - Note is not resolvable"), {})
        self._set_resolved(note, resolved, user)
        return 200, note, {}

    def _may_resolve(self, user: User) -> bool:
        """Developers and up resolve any thread; the merge request's author too."""
        return user.access >= DEVELOPER or user.username == self.author

    def _set_resolved(self, note: dict[str, Any], resolved: bool, user: User) -> None:
        note |= {"resolved": resolved, "resolved_by": self._user(user) if resolved else None,
                 "resolved_at": _now() if resolved else None}


_MR_ROUTES: dict[tuple[str, str], Callable[..., Answer]] = {
    ("GET", ""): FakeGitLab._get_mr,
    ("GET", "/changes"): FakeGitLab._changes,
    ("GET", "/diffs"): FakeGitLab._diffs,
    ("GET", "/versions"): FakeGitLab._versions,
    ("GET", "/versions/:version_id"): FakeGitLab._get_version,
    ("GET", "/notes"): FakeGitLab._list_notes,
    ("POST", "/notes"): FakeGitLab._create_note,
    ("GET", "/notes/:note_id"): FakeGitLab._get_note,
    ("PUT", "/notes/:note_id"): FakeGitLab._edit_note,
    ("DELETE", "/notes/:note_id"): FakeGitLab._delete_note,
    ("GET", "/discussions"): FakeGitLab._list_discussions,
    ("POST", "/discussions"): FakeGitLab._create_discussion,
    ("GET", "/discussions/:discussion_id"): FakeGitLab._get_discussion,
    ("PUT", "/discussions/:discussion_id"): FakeGitLab._resolve,
    ("GET", "/discussions/:discussion_id/notes"): FakeGitLab._discussion_notes,
    ("POST", "/discussions/:discussion_id/notes"): FakeGitLab._reply,
    ("GET", "/discussions/:discussion_id/notes/:note_id"): FakeGitLab._get_note,
    ("PUT", "/discussions/:discussion_id/notes/:note_id"): FakeGitLab._edit_note,
    ("DELETE", "/discussions/:discussion_id/notes/:note_id"): FakeGitLab._delete_note,
}


def quick_actions(body: str) -> list[str]:
    """The quick actions GitLab would run for a note's body ("/merge", "/label ~x")."""
    return [f"/{found['cmd']} {found['arg'] or ''}".strip()
            for found in _QUICK_ACTION.finditer(body) if found["cmd"]]


def _body(raw: bytes, content_type: str) -> tuple[dict[str, Any], str]:
    """The request's parameters (python-gitlab sends JSON; curl's `--form` sends form fields,
    `position[new_line]=3`)."""
    if not raw:
        return {}, ""
    if content_type.startswith("application/json"):
        try:
            data = json.loads(raw)
        except ValueError:
            return {}, "the body is not JSON"
        return (data, "") if isinstance(data, dict) else ({}, "the body is not a JSON object")
    fields: dict[str, Any] = {}
    for key, values in parse_qs(raw.decode()).items():
        names = re.findall(r"[^\[\]]+", key)
        target = fields
        for name in names[:-1]:
            target = target.setdefault(name, {})
        target[names[-1]] = values[-1]
    return fields, ""


def _body_problem(body: str) -> dict[str, list[str]] | None:
    if not str(body).strip():
        return {"note": ["can't be blank"]}
    if len(str(body)) > MAX_BODY:
        return {"note": [f"is too long (maximum is {MAX_BODY} characters)"]}
    return None


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _shown_position(position: dict[str, Any]) -> dict[str, Any]:
    return {"base_sha": position["base_sha"], "start_sha": position["start_sha"],
            "head_sha": position["head_sha"], "position_type": "text",
            "old_path": position.get("old_path") or position.get("new_path"),
            "new_path": position.get("new_path") or position.get("old_path"),
            "old_line": _int(position.get("old_line")),
            "new_line": _int(position.get("new_line")), "line_range": None}


def _diff_entry(diff: FileDiff) -> dict[str, Any]:
    return {"old_path": diff.old_path, "new_path": diff.new_path, "a_mode": "100644",
            "b_mode": "100644", "new_file": diff.new_file, "renamed_file": diff.renamed_file,
            "deleted_file": diff.deleted_file, "generated_file": False, "diff": diff.diff}


def _file_diffs(text: str) -> list[FileDiff]:
    """`git diff` split into GitLab's diff entries: the hunks from the first `@@` on, and paths
    as GitLab gives them (an added file's old_path is its new path, not /dev/null)."""
    stanzas = re.split(r"^diff --git ", text, flags=re.MULTILINE)[1:]
    return [_file_diff(stanza) for stanza in stanzas]


def _file_diff(stanza: str) -> FileDiff:
    header, _, hunks = stanza.partition("\n@@")
    hunks = "@@" + hunks if hunks else ""
    paths = dict(re.findall(r"^(rename from|rename to|---|\+\+\+) (.*)$", header, re.MULTILINE))
    first = re.match(r"a/(.*) b/(.*)", header.split("\n", 1)[0])
    old = paths.get("rename from") or _strip(paths.get("---"), "a/") or (first and first[1])
    new = paths.get("rename to") or _strip(paths.get("+++"), "b/") or (first and first[2])
    new_file, deleted = "\nnew file mode" in header, "\ndeleted file mode" in header
    old = new if new_file else old
    new = old if deleted else new
    return FileDiff(str(old), str(new), new_file, deleted, "\nrename from " in header, hunks,
                    _lines(hunks))


def _strip(path: str | None, prefix: str) -> str | None:
    return None if path is None or path == "/dev/null" else path.removeprefix(prefix)


def _lines(hunks: str) -> frozenset[tuple[int | None, int | None]]:
    found: set[tuple[int | None, int | None]] = set()
    old = new = 0
    for row in hunks.split("\n"):
        if m := re.match(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@", row):
            old, new = int(m[1]), int(m[2])
        elif row.startswith("+"):
            found.add((None, new))
            new += 1
        elif row.startswith("-"):
            found.add((old, None))
            old += 1
        elif row.startswith(" "):
            found.add((old, new))
            old, new = old + 1, new + 1
    return frozenset(found)


def _send(handler: BaseHTTPRequestHandler, status: int, payload: Any,
          headers: dict[str, str]) -> None:
    if isinstance(payload, bytes):
        data = payload
    else:
        data = b"" if status == 204 else json.dumps(payload).encode()
    handler.send_response(status)
    if "content-type" not in headers:
        handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(data)))
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(data)


def _fault_answer(fault: Fault) -> Answer:
    """GitLab's answers for the faults it documents ("Rate limits": user and IP limits answer
    Rack::Attack's plain "Retry later" with RateLimit-* and Retry-After; an endpoint's own
    limit answers JSON) and a 5xx from the front (a 502 is Workhorse's HTML page)."""
    now = int(time.time())
    limits = {"ratelimit-limit": "2000", "ratelimit-observed": "2001",
              "ratelimit-remaining": "0", "ratelimit-reset": str(now + fault.retry_after),
              "ratelimit-resettime": formatdate(now + fault.retry_after, usegmt=True),
              "ratelimit-name": "throttle_authenticated_api"}
    if fault.kind == "throttle":
        return fault.status, b"Retry later\n", {
            **limits, "retry-after": str(fault.retry_after), "content-type": "text/plain"}
    if fault.kind == "throttle-no-headers":
        return fault.status, b"Retry later\n", {"content-type": "text/plain"}
    if fault.kind == "endpoint":
        return fault.status, {"message": {"error": "This endpoint has been requested too "
                                                   "many times. Try again later."}}, {}
    if fault.status == 502:
        return 502, b"<!DOCTYPE html><html><body><h1>502</h1><p>GitLab is not responding.</p>" \
                    b"</body></html>\n", {"content-type": "text/html"}
    return fault.status, {"message": f"{fault.status} Internal Server Error"}, {}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())

