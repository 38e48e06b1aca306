"""GitLab as a `reviewbot.deliver.forge.Forge`, with python-gitlab (imported only here).

- Inline comments are discussions positioned on the merge request's version of the reviewed
  commit (the newest version when none is of it): its `base`, `start` and `head` SHAs, the
  comment's first line as `new_line`, and `old_line` too for an unchanged (context) line;
  `old_line` alone for a line the change removed (a finding about a deleted guard); read
  from that version's diff. GitLab refuses any other position with 400 "line_code can't
  be blank": that comment comes back as `LineRefused` and goes to the summary.
- Who reviewbot is: the token's user (`GET /user`); every write's author must be that user.
- Retries are done here, not by python-gitlab (its `retry_transient_errors` would repeat a
  write GitLab stored before failing): a 429 waits its `Retry-After` (else `RateLimit-Reset`,
  else a backoff), a 5xx or a lost connection a short exponential backoff, every wait and
  their sum bounded. Before a write whose outcome is unknown is repeated, the merge request is
  read again for reviewbot's note with the body's marker.
- A person resolving reviewbot's discussion is a dismissal (`Delivery` reads `resolved`);
  `resolve` edits the note and resolves its discussion, which takes the Developer role (a
  Reporter's token leaves the edited note open, said once).
- 401 (no valid token: a CI job token is one, see docs/GITLAB.md) and 403 are `ReadOnly`, so
  is a project or merge request the token's user cannot see (404); everything else GitLab
  refused or kept failing is `DeliveryFailed`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from reviewbot.deliver.bodies import last_line
from reviewbot.deliver.forge import (
    CommentKind,
    DeliveryFailed,
    ForgeComment,
    Gone,
    InlineComment,
    LineRefused,
    NotReviewbot,
    ReadOnly,
)
from reviewbot.deliver.waits import MAX_WAIT_S, pause
from reviewbot.gitlab.ci import MergeRequestPipeline, server_url
from reviewbot.lazy_re import lazy_re

# Notes API: a note's body is "Limited to 1,000,000 characters".
MAX_BODY = 1_000_000
ATTEMPTS = 4
# 5xx and lost connections: 1, 2, 4 s.
BACKOFF_S = 1.0
# A 429 that names no wait (GitLab.com has sent some): 30, 60, 120 s.
THROTTLE_WAIT_S = 30.0
TIMEOUT_S = 30
PER_PAGE = 100
_HUNK = lazy_re(r"^@@ -(?P<old>\d+)(?:,\d+)? \+(?P<new>\d+)(?:,\d+)? @@")
_NOT_FOUND_PROJECT = ("Project Not Found", "Merge Request Not Found")


def gitlab_fence(lines: int) -> str:
    """GitLab's suggestion fence: from the comment's line, 0 lines above and `lines - 1`
    below."""
    return f"suggestion:-0+{lines - 1}"


def new_side(diff: str) -> dict[int, int | None]:
    """new line -> its old line (None: an added line), for the new-side lines of a diff's
    hunks (added and context lines: what takes a discussion)."""
    found: dict[int, int | None] = {}
    old = new = 0
    for row in diff.split("\n"):
        if match := _HUNK.match(row):
            old, new = int(match["old"]), int(match["new"])
        elif row.startswith("+"):
            found[new] = None
            new += 1
        elif row.startswith("-"):
            old += 1
        elif row.startswith(" "):
            found[new] = old
            old, new = old + 1, new + 1
    return found


def removed_side(diff: str) -> set[int]:
    """The old-side numbers of a diff's removed lines (a discussion on one takes `old_line`
    alone)."""
    found: set[int] = set()
    old = 0
    for row in diff.split("\n"):
        if match := _HUNK.match(row):
            old = int(match["old"])
        elif row.startswith("-"):
            found.add(old)
            old += 1
        elif row.startswith(" "):
            old += 1
    return found


@dataclass(frozen=True)
class _File:
    old_path: str
    lines: dict[int, int | None]
    removed: set[int] = field(default_factory=set)


@dataclass
class GitlabForge:
    token: str
    pipeline: MergeRequestPipeline
    sleep: Callable[[float], None] = field(default=lambda seconds: time.sleep(seconds))
    notice: Callable[[str], None] = lambda message: None
    name: str = "GitLab"
    change: str = "merge request"
    max_body: int = MAX_BODY
    reports: str = ("the job's log, the Code Quality report (the merge request's widget) and "
                    "the run's artifacts")
    files_listed: str = ""
    _client: Any = None
    _login: str | None = None
    _web_url: str = ""
    # The version's SHAs and files (path -> its old path and new-side lines), from `lines`.
    _refs: dict[str, str] = field(default_factory=dict)
    _files: dict[str, _File] = field(default_factory=dict)
    # note id -> its discussion's id, for every note listed or made.
    _discussion_of: dict[int, str] = field(default_factory=dict)
    _last: Any = None
    _waited: float = 0.0
    _said_cannot_resolve: bool = False

    def connect(self) -> None:
        import gitlab
        import requests

        session = requests.Session()
        # The last answer's headers: a 429's Retry-After (python-gitlab's errors drop them).
        session.hooks["response"].append(self._keep)
        self._client = gitlab.Gitlab(server_url(self.pipeline.api_url),
                                     private_token=self.token or None, session=session,
                                     timeout=TIMEOUT_S, retry_transient_errors=False)
        self._login = str(self._call("GET", "/user")["username"])
        self._web_url = str(self._call("GET", self._mr())["web_url"])

    def _keep(self, response: Any, *args: Any, **kwargs: Any) -> None:
        self._last = response

    @property
    def login(self) -> str:
        """The token's user on GitLab."""
        if self._login is None:
            self.connect()
        assert self._login is not None  # noqa: S101 (connect sets it or raises)
        return self._login

    def suggestion_fence(self, lines: int) -> str:
        return gitlab_fence(lines)

    def may_write(self, login: str) -> bool:
        """Commands in notes would need a webhook (docs/GITLAB.md): nobody commands here."""
        return False

    def _mr(self, tail: str = "") -> str:
        return f"/projects/{self.pipeline.project_id}/merge_requests/{self.pipeline.iid}{tail}"

    # --- the diff -----------------------------------------------------------------------

    def lines(self) -> dict[str, set[int]]:
        """path -> its new-side lines in the version of the reviewed commit (else the newest
        version); a file GitLab shows no diff for (binary, too large): an empty set."""
        self.login  # noqa: B018 (connects)
        versions = self._call("GET", self._mr("/versions"), query={"per_page": PER_PAGE})
        if not versions:
            raise DeliveryFailed("GitLab lists no version of the merge request yet")
        chosen = next((v for v in versions
                       if v.get("head_commit_sha") == self.pipeline.head_sha), versions[0])
        version = self._call("GET", self._mr(f"/versions/{chosen['id']}"))
        self._refs = {"base_sha": str(chosen["base_commit_sha"]),
                      "start_sha": str(chosen["start_commit_sha"]),
                      "head_sha": str(chosen["head_commit_sha"])}
        self._files = {}
        for entry in version.get("diffs") or []:
            if entry.get("deleted_file"):
                continue
            diff = str(entry.get("diff") or "")
            large = bool(entry.get("too_large"))
            self._files[str(entry["new_path"])] = _File(
                str(entry.get("old_path") or entry["new_path"]),
                {} if large else new_side(diff), set() if large else removed_side(diff))
        return {path: set(file.lines) for path, file in self._files.items()}

    def removed_lines(self) -> dict[str, set[int]]:
        """path -> the old-side lines its diff removes, in the same version as `lines`."""
        if not self._refs:
            self.lines()
        return {path: set(file.removed) for path, file in self._files.items()}

    # --- comments -----------------------------------------------------------------------

    def comments(self, kind: CommentKind) -> list[ForgeComment]:
        """The merge request's notes as records, oldest first. "repository": none (GitLab's
        dismissal is a resolved thread on its own merge request; nothing is counted across
        merge requests)."""
        if kind == "repository":
            return []
        found: list[ForgeComment] = []
        for discussion in self._discussions():
            notes = [n for n in discussion.get("notes") or [] if not n.get("system")]
            if not notes:
                continue
            position = notes[0].get("position")
            if (kind == "inline") != (position is not None):
                continue
            for index, note in enumerate(notes):
                found.append(self._record(kind, note, discussion["id"], position,
                                          None if index == 0 else int(notes[0]["id"])))
        return found

    def _discussions(self) -> list[dict[str, Any]]:
        listed = self._call("GET", self._mr("/discussions"), query={"per_page": PER_PAGE},
                            pages=True)
        return [d for d in listed if isinstance(d, dict)]

    def _record(self, kind: str, note: dict[str, Any], discussion: str,
                position: dict[str, Any] | None, thread: int | None) -> ForgeComment:
        self._discussion_of[int(note["id"])] = str(discussion)
        return ForgeComment(
            id=int(note["id"]), kind="inline" if kind == "inline" else "conversation",
            author=str((note.get("author") or {}).get("username") or ""),
            body=str(note.get("body") or ""), url=f"{self._web_url}#note_{note['id']}",
            path=str(position.get("new_path")) if position else None, thread=thread,
            resolved=bool(note.get("resolved")),
            resolved_by=str((note.get("resolved_by") or {}).get("username") or ""),
            change=self.pipeline.iid)

    def _ours_ending(self, inline: bool, body: str) -> dict[str, Any] | None:
        """reviewbot's note that ends with this body's marker, if GitLab stored the write
        after all (GitLab's answer for it: the note, `discussion_id` added)."""
        marker = last_line(body)
        for discussion in self._discussions():
            notes = discussion.get("notes") or []
            if not notes or (notes[0].get("position") is not None) != inline:
                continue
            for note in notes:
                if ((note.get("author") or {}).get("username") == self.login
                        and not note.get("system")
                        and last_line(str(note.get("body") or "")) == marker):
                    return {**note, "discussion_id": discussion["id"]}
        return None

    def _confirm_author(self, note: dict[str, Any]) -> None:
        author = str((note.get("author") or {}).get("username") or "")
        if author != self.login:
            raise NotReviewbot(f"GitLab wrote reviewbot's note as {author!r}, not as the "
                               f"token's user {self.login!r}")

    def post_inline(self, comments: Sequence[InlineComment]) -> list[LineRefused]:
        """One discussion per comment, on its first line; the ones GitLab refused there."""
        refused: list[LineRefused] = []
        for comment in comments:
            position = self._position(comment)
            if position is None:
                refused.append(LineRefused(comment, "its line is not in GitLab's diff of the "
                                                    "merge request"))
                continue
            try:
                self._post_discussion(comment, position)
            except _LineCode as exc:
                refused.append(LineRefused(comment, f"GitLab refused it on this line "
                                                    f"({exc})"))
        return refused

    def _position(self, comment: InlineComment) -> dict[str, Any] | None:
        if not self._refs:
            self.lines()
        file = self._files.get(comment.path)
        if file is not None and comment.base_line is not None:
            # A removed line: `old_line` alone.
            return ({**self._refs, "position_type": "text", "old_path": file.old_path,
                     "new_path": comment.path, "old_line": comment.base_line}
                    if comment.base_line in file.removed else None)
        if file is None or comment.start not in file.lines:
            return None
        position: dict[str, Any] = {**self._refs, "position_type": "text",
                                    "old_path": file.old_path, "new_path": comment.path,
                                    "new_line": comment.start}
        if (old := file.lines[comment.start]) is not None:
            position["old_line"] = old
        return position

    def _post_discussion(self, comment: InlineComment, position: dict[str, Any]) -> None:
        def happened() -> dict[str, Any] | None:
            found = self._ours_ending(True, comment.body)
            return {"id": found["discussion_id"], "notes": [found]} if found else None

        created = self._call("POST", self._mr("/discussions"),
                             data={"body": comment.body, "position": position},
                             happened=happened)
        self._confirm_author((created.get("notes") or [{}])[0])

    def post(self, body: str) -> ForgeComment:
        created = self._call("POST", self._mr("/notes"), data={"body": body},
                             happened=lambda: self._ours_ending(False, body))
        self._confirm_author(created)
        return self._record("conversation", created, str(created.get("discussion_id", "")),
                            None, None)

    def reply(self, comment: ForgeComment, body: str) -> ForgeComment:
        """In the comment's discussion (an inline comment), else a new note."""
        if comment.kind == "conversation":
            return self.post(body)
        discussion = self._discussion_of.get(comment.id)
        if discussion is None:
            self.comments("inline")
            discussion = self._discussion_of.get(comment.id)
        if discussion is None:
            raise Gone(f"GitLab lists no discussion with note {comment.id}")
        created = self._call("POST", self._mr(f"/discussions/{discussion}/notes"),
                             data={"body": body},
                             happened=lambda: self._ours_ending(True, body))
        self._confirm_author(created)
        return self._record("inline", created, discussion, None, comment.thread or comment.id)

    def edit(self, comment: ForgeComment, body: str) -> None:
        self._call("PUT", self._mr(f"/notes/{comment.id}"), data={"body": body})

    def delete(self, comment: ForgeComment) -> None:
        self._call("DELETE", self._mr(f"/notes/{comment.id}"))

    def resolve(self, comment: ForgeComment, body: str) -> None:
        """The note says it is resolved, and its discussion is resolved (Developer role)."""
        self.edit(comment, body)
        discussion = self._discussion_of.get(comment.id)
        if discussion is None:
            return
        try:
            self._call("PUT", self._mr(f"/discussions/{discussion}"), data={"resolved": True})
        except ReadOnly:
            if not self._said_cannot_resolve:
                self.notice("the token's user may comment but not resolve threads (that "
                            "takes the Developer role): resolved findings are said in their "
                            "notes, their threads left open")
            self._said_cannot_resolve = True

    # --- requests -----------------------------------------------------------------------

    def _call(self, method: str, path: str, *, data: dict[str, Any] | None = None,
              query: dict[str, Any] | None = None, pages: bool = False,
              happened: Callable[[], Any | None] | None = None) -> Any:
        """One request through python-gitlab, retried by GitLab's rules: a 429 as long as
        GitLab's waits fit the run's bound on waiting (deliver/waits.py), a 5xx or a lost
        connection ATTEMPTS times. A write whose outcome is unknown (a 5xx, a lost
        connection) is looked up with `happened` before it is repeated, so it is never made
        twice."""
        import requests
        from gitlab.exceptions import GitlabError

        if self._client is None:
            self.connect()
        failures = throttled = 0
        while True:
            unknown = True  # whether GitLab may have stored a write it answered this way
            try:
                return self._send(method, path, data, query, pages)
            except GitlabError as exc:
                status = exc.response_code or 0
                if status == 429:
                    wait, why = self._throttle_wait(throttled), _said(status, exc)
                    throttled, unknown = throttled + 1, False
                elif status >= 500:
                    failures += 1
                    wait, why = float(BACKOFF_S * 2 ** (failures - 1)), _said(status, exc)
                else:
                    raise _final(status, _message(exc), method) from exc
            except (requests.ConnectionError, requests.Timeout,
                    requests.exceptions.ChunkedEncodingError) as exc:
                failures += 1
                wait = float(BACKOFF_S * 2 ** (failures - 1))
                why = f"GitLab could not be reached ({type(exc).__name__})"
            if unknown and happened is not None and method != "GET":
                stored = self._stored(happened)
                if stored is not None:
                    return stored
            if failures == ATTEMPTS:
                raise DeliveryFailed(f"GitLab kept failing ({ATTEMPTS} attempts; last: {why})")
            self._pause(wait, why)

    def _send(self, method: str, path: str, data: dict[str, Any] | None,
              query: dict[str, Any] | None, pages: bool) -> Any:
        client = self._client
        # No retry by python-gitlab: this adapter decides what may be repeated.
        options: dict[str, Any] = {"obey_rate_limit": False, "retry_transient_errors": False}
        if method == "GET" and pages:
            return list(client.http_list(path, query_data=query or {}, get_all=True,
                                         **options))
        if method == "GET":
            return client.http_get(path, query_data=query or {}, **options)
        if method == "POST":
            return client.http_post(path, post_data=data or {}, **options)
        if method == "PUT":
            return client.http_put(path, post_data=data or {}, **options)
        client.http_delete(path, **options)
        return None

    def _stored(self, happened: Callable[[], Any | None]) -> Any | None:
        """What `happened` finds; None when it cannot tell (GitLab is still failing)."""
        import requests
        from gitlab.exceptions import GitlabError

        try:
            return happened()
        except (GitlabError, DeliveryFailed, requests.RequestException):
            return None

    def _throttle_wait(self, throttled: int) -> float:
        """Seconds a 429 asks for (GitLab's "Rate limits": Retry-After, else RateLimit-Reset,
        else a backoff); at least a second, so that a run of 429s always ends on the bound."""
        headers = {k.lower(): v for k, v in getattr(self._last, "headers", {}).items()}
        if (after := _seconds(headers.get("retry-after"))) is not None:
            return max(after, 1.0)
        if (reset := _seconds(headers.get("ratelimit-reset"))) is not None:
            return max(reset - time.time(), 1.0)
        return float(min(THROTTLE_WAIT_S * 2 ** throttled, MAX_WAIT_S))

    def _pause(self, seconds: float, why: str) -> None:
        if seconds > MAX_WAIT_S:
            raise DeliveryFailed(f"{why}: GitLab asked to wait {seconds:.0f} s (reviewbot waits "
                                 f"at most {MAX_WAIT_S:.0f} s)")
        self._waited = pause("GitLab", seconds, self._waited, self.sleep, self.notice, why)


class _LineCode(DeliveryFailed):
    """GitLab could not give a positioned note a line code (400)."""


def _final(status: int, message: str, method: str) -> Exception:
    if status == 400 and "line_code" in message:
        return _LineCode("GitLab: line_code can't be blank")
    if status == 401:
        return ReadOnly(f"GitLab answered 401 ({message}): the token is missing, expired or "
                        "not one the API takes (GITLAB_TOKEN: a project access token with the "
                        "api scope)")
    if status == 403:
        return ReadOnly(f"GitLab answered 403 ({message}): the token's user may not do this")
    if status == 404 and any(what in message for what in _NOT_FOUND_PROJECT):
        return ReadOnly(f"GitLab answered 404 ({message}): the token's user is not a member "
                        "of the project")
    if status == 404:
        return Gone(f"GitLab answered 404: {message}")
    return DeliveryFailed(f"GitLab answered {status} to a {method}: {message}")


def _said(status: int, exc: Any) -> str:
    """What GitLab answered a request it may take again, on one line."""
    if status == 429:
        return f"GitLab limited the rate of requests (429: {_message(exc)})"
    return f"GitLab answered {status} ({_message(exc)})"


def _message(exc: Any) -> str:
    """GitLab's message, on one line and short; for an HTML page (a proxy's or a load
    balancer's error page, not GitLab's API) the status's reason instead of the page."""
    text = exc.error_message
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if isinstance(text, str) and text.lstrip().startswith("<"):
        try:
            reason = HTTPStatus(exc.response_code or 0).phrase
        except ValueError:
            reason = "an error"
        return f"{reason}, an HTML error page"
    if isinstance(text, dict):
        text = text.get("error") or text
    return re.sub(r"\s+", " ", str(text)).strip()[:300]


def _seconds(value: str | None) -> float | None:
    try:
        return max(float(value), 0.0) if value is not None else None
    except ValueError:
        return None

