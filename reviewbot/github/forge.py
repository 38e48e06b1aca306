"""GitHub as a `reviewbot.deliver.forge.Forge`, with PyGithub (imported only here).

- Inline comments are one review, on the RIGHT side of the diff (a range with
  `start_line`), checked against the pull request's own patches (`github/positions.py`).
- Who reviewbot is: the token's login when GitHub tells it (`GET /user`), else the login the
  workflow names (`bot_login`: the Actions token writes as `github-actions[bot]`; an App
  installation token as its App's bot), and every write's author must be that login.
- GitHub's 422s are told apart by their documented messages: lines outside the diff (the
  comments GitHub refuses are found by halves in pending reviews, within a bound on writes,
  and come back as `LineRefused`), a leftover pending review of this bot (discarded, then
  the review is posted), content "submitted too quickly" (a secondary rate limit). Waits
  follow GitHub's rules: Retry-After; the primary limit's reset; a minute at least for a
  secondary limit without headers; a short exponential backoff for 5xx and lost
  connections. Before a write whose outcome is unknown (a 5xx, a dropped connection) is
  repeated, the pull request is read again to see whether it happened (a review by the nonce
  in its body, a comment by its marker).
- REST cannot resolve a review thread: `resolve` edits the comment's body, which says so.
- Every call of the forge raises only delivery's errors (`reviewbot.deliver.forge`): a read
  GitHub refused or kept failing, or GitHub out of reach, is `DeliveryFailed`.
"""

from __future__ import annotations

import contextlib
import itertools
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial, wraps
from typing import TYPE_CHECKING, Any, Literal, ParamSpec, TypeVar

from reviewbot.deliver.bodies import MAX_BODY, github_fence, last_line, review_body, review_marker
from reviewbot.deliver.forge import (
    MAX_REPOSITORY_COMMENTS,
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
from reviewbot.github.event import PullRequestEvent, pull_event
from reviewbot.github.positions import commentable

if TYPE_CHECKING:
    from github.PullRequest import PullRequest
    from github.Repository import Repository

T = TypeVar("T")
P = ParamSpec("P")
# Who the Actions token writes as; a workflow with another token that cannot read `/user` (a
# GitHub App's) names its bot instead (the action's `bot-login` input).
DEFAULT_BOT_LOGIN = "github-actions[bot]"
WRITE_ATTEMPTS = 4
# 5xx and lost connections: 1, 2, 4 s. GETs are retried by PyGithub with its own backoff.
BACKOFF_S = 1.0
GET_BACKOFF_S = 0.5
# A secondary rate limit with no Retry-After: "wait for at least one minute" (GitHub).
SECONDARY_WAIT_S = 60.0
# Writes the search for the comments GitHub refuses may make (pending reviews created and
# deleted again); the comments not tried by then go to the summary.
MAX_PROBE_WRITES = 24
TIMEOUT_S = 30
# GitHub's 422 messages for a review, by what they mean.
_LINE_ERRORS = ("must be part of the diff", "could not be resolved", "same hunk",
                "diff hunk can't be blank", "is outside the diff")
_PENDING_ERROR = "one pending review"
_TOO_QUICKLY = "submitted too quickly"


class Refused(DeliveryFailed):
    """GitHub answered 422 to a write: `message` says why (its documented errors)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def lines(self) -> bool:
        return any(error in self.message for error in _LINE_ERRORS)

    @property
    def pending(self) -> bool:
        return _PENDING_ERROR in self.message


def neutral(call: Callable[P, T]) -> Callable[P, T]:
    """A call of the forge whose failures are delivery's errors: PyGithub's and requests'
    exceptions (a read GitHub refused or kept failing, GitHub out of reach) become
    DeliveryFailed, so a caller needs no forge SDK to catch them. (Writes already raise
    delivery's errors, by what GitHub answered: `_write`.)"""
    @wraps(call)
    def wrapped(*args: P.args, **kwargs: P.kwargs) -> T:
        from github import GithubException
        from requests.exceptions import RequestException

        try:
            return call(*args, **kwargs)
        except GithubException as exc:
            raise DeliveryFailed(str(exc)) from exc
        except RequestException as exc:
            raise DeliveryFailed(
                f"GitHub could not be reached ({type(exc).__name__})") from exc
    return wrapped


def review_comment(comment: InlineComment) -> dict[str, Any]:
    """A comment of a review, in GitHub's terms: RIGHT-side lines."""
    posted: dict[str, Any] = {"path": comment.path, "line": comment.end, "side": "RIGHT",
                              "body": comment.body}
    if comment.start != comment.end:
        posted |= {"start_line": comment.start, "start_side": "RIGHT"}
    return posted


@dataclass
class GithubForge:
    token: str
    event: PullRequestEvent
    # PyGithub's own pacing, against GitHub's secondary rate limits (0 in tests).
    seconds_between_requests: float = 0.25
    seconds_between_writes: float = 1.0
    sleep: Callable[[float], None] = time.sleep
    notice: Callable[[str], None] = lambda message: None
    # Who reviewbot is when the token cannot read `/user`: the workflow says (trusted).
    bot_login: str = DEFAULT_BOT_LOGIN
    # Logins GitHub named the repository's owner (a comment's author_association): they may
    # command reviewbot when the token may not read permissions.
    owners: set[str] = field(default_factory=set)
    name: str = "GitHub"
    change: str = "pull request"
    max_body: int = MAX_BODY
    reports: str = ("the job summary, the SARIF file (the action's `sarif` output, for code "
                    "scanning) and the run's artifacts")
    files_listed: str = "the job summary"
    _pull: PullRequest | None = None
    _repo: Repository | None = None
    # The token's login: from /user, else `bot_login` (set by connect).
    _login: str | None = None
    _waited: float = 0.0
    _probes: int = 0
    # PyGithub's objects of the comments handed out, by (kind, id): what edits go through.
    _known: dict[tuple[str, int], Any] = field(default_factory=dict)

    @neutral
    def connect(self) -> None:
        from github import Auth, Github, GithubException
        from github.GithubRetry import GithubRetry

        retry = GithubRetry(total=3, backoff_factor=GET_BACKOFF_S,
                            allowed_methods=frozenset({"GET"}),
                            secondary_rate_wait=SECONDARY_WAIT_S, max_rate_limit_wait=MAX_WAIT_S)
        client = Github(auth=Auth.Token(self.token), base_url=self.event.api_url,
                        retry=retry, timeout=TIMEOUT_S,
                        seconds_between_requests=self.seconds_between_requests,
                        seconds_between_writes=self.seconds_between_writes)
        self._repo = client.get_repo(self.event.repository)
        self._pull = self._repo.get_pull(self.event.number)
        try:
            self._login = client.get_user().login
        except GithubException as exc:
            if exc.status not in (401, 403):
                raise
            self._login = self.bot_login  # an installation token (Actions, an App)

    @property
    def pull(self) -> PullRequest:
        if self._pull is None:
            self.connect()
        assert self._pull is not None  # noqa: S101 (connect sets it or raises)
        return self._pull

    @property
    def login(self) -> str:
        """Who reviewbot is on GitHub (the token's login, or the workflow's bot_login)."""
        if self._login is None:
            self.connect()
        assert self._login is not None  # noqa: S101 (connect sets it or raises)
        return self._login

    def suggestion_fence(self, lines: int) -> str:
        return github_fence(lines)

    @neutral
    def pull_event(self, env: Mapping[str, str], event_name: str) -> PullRequestEvent:
        """The pull request as the API describes it now (a comment event's payload does not
        carry it); reviewbot reviews and answers about this one from here on."""
        self.event = pull_event(self.pull.raw_data, env, event_name)
        return self.event

    @neutral
    def may_write(self, login: str) -> bool:
        """Whether the person has write access to the repository (GitHub's permission API;
        if the token may not read it, only the repository's owner)."""
        from github import GithubException

        assert self._repo is not None  # noqa: S101 (pull connects first)
        try:
            permission = self._repo.get_collaborator_permission(login)
        except GithubException as exc:
            if exc.status not in (403, 404):
                raise
            return login in self.owners
        return permission in ("admin", "maintain", "write")

    @neutral
    def lines(self) -> dict[str, set[int]]:
        return commentable((f.filename, f.patch) for f in self.pull.get_files())

    # --- comments ----------------------------------------------------------------------

    @neutral
    def comments(self, kind: CommentKind) -> list[ForgeComment]:
        if kind == "inline":
            return [self._kept(kind, c) for c in self.pull.get_review_comments()]
        if kind == "conversation":
            return [self._kept(kind, c) for c in self.pull.get_issue_comments()]
        assert self._repo is not None  # noqa: S101 (pull connects first)
        listed = self._repo.get_pulls_comments(sort="updated", direction="desc")
        return [_inline(c) for c in itertools.islice(listed, MAX_REPOSITORY_COMMENTS)]

    @neutral
    def post(self, body: str) -> ForgeComment:
        created = self._write(lambda: self.pull.create_issue_comment(body),
                              happened=partial(self._ours_ending, "conversation", body))
        self._confirm_author(created.user.login)
        return self._kept("conversation", created)

    @neutral
    def reply(self, comment: ForgeComment, body: str) -> ForgeComment:
        """In the comment's thread (a review comment), else in the conversation."""
        if comment.kind == "conversation":
            return self.post(body)

        def in_thread(thread: int) -> Any:
            return self._write(lambda: self.pull.create_review_comment_reply(thread, body),
                               happened=partial(self._ours_ending, "inline", body))
        try:
            created = in_thread(comment.thread or comment.id)
        except Gone:
            if comment.thread is None:
                raise
            created = in_thread(comment.id)  # the thread's first comment was deleted
        self._confirm_author(created.user.login)
        return self._kept("inline", created)

    @neutral
    def edit(self, comment: ForgeComment, body: str) -> None:
        self._write(partial(self._api_comment(comment).edit, body))

    @neutral
    def delete(self, comment: ForgeComment) -> None:
        self._write(self._api_comment(comment).delete)

    @neutral
    def resolve(self, comment: ForgeComment, body: str) -> None:
        """REST cannot resolve a review thread: the body says it is resolved."""
        self.edit(comment, body)

    def _api_comment(self, comment: ForgeComment) -> Any:
        """PyGithub's object for a comment this forge listed or made (no request)."""
        return self._known[comment.kind, comment.id]

    def _kept(self, kind: Literal["inline", "conversation"], comment: Any) -> ForgeComment:
        """The neutral record of a PyGithub comment, its object kept for later writes."""
        self._known[kind, comment.id] = comment
        return _inline(comment) if kind == "inline" else _conversation(comment)

    def _ours_ending(self, kind: CommentKind, body: str) -> Any | None:
        """reviewbot's comment that ends with this body's marker, if GitHub stored the
        write after all."""
        listed = (self.pull.get_review_comments() if kind == "inline"
                  else self.pull.get_issue_comments())
        marker = last_line(body)
        return next((c for c in listed if _is(c.user, self.login)
                     and last_line(c.body) == marker), None)

    def _confirm_author(self, login: str) -> None:
        """Every write's author must be the login reviewbot takes for itself: otherwise its
        comments would not be known as its own on the next run."""
        if login != self.login:
            raise NotReviewbot(
                f"GitHub wrote reviewbot's comment as {login!r}, but reviewbot takes itself "
                f"for {self.login!r}: the token cannot read /user, so set the action's "
                f"bot-login input (REVIEWBOT_BOT_LOGIN) to {login!r}")

    # --- the review ---------------------------------------------------------------------

    @neutral
    def post_inline(self, comments: Sequence[InlineComment]) -> list[LineRefused]:
        return self._post_review(list(comments))

    def _post_review(self, comments: list[InlineComment],
                     discarded: bool = False) -> list[LineRefused]:
        """Post one review with the comments; the ones GitHub refused on their lines."""
        if not comments:
            return []
        try:
            self._create_review(comments, event="COMMENT")
            return []
        except Refused as exc:
            if exc.pending and not discarded:
                self._discard_pending()
                return self._post_review(comments, discarded=True)
            if not exc.lines:
                raise DeliveryFailed(f"GitHub refused the review: {exc.message}") from exc
        refused = self._refused(comments)
        good = [c for c in comments if all(c is not r.comment for r in refused)]
        if good:
            self._create_review(good, event="COMMENT")
        return refused

    def _refused(self, comments: list[InlineComment]) -> list[LineRefused]:
        """The comments GitHub refuses, found by halves in pending reviews deleted again, at
        most MAX_PROBE_WRITES writes; comments not tried by then count as refused."""
        if self._probes + 1 > MAX_PROBE_WRITES:
            return [LineRefused(c, "GitHub refused the review, and the search for the comment "
                                   f"it refused stopped after {MAX_PROBE_WRITES} writes")
                    for c in comments]
        self._probes += 1
        try:
            pending = self._create_review(comments, event=None)
        except Refused as exc:
            if not exc.lines:
                raise DeliveryFailed(f"GitHub refused the review: {exc.message}") from exc
            if len(comments) == 1:
                return [LineRefused(comments[0], "GitHub refused it on this line")]
            middle = len(comments) // 2
            return self._refused(comments[:middle]) + self._refused(comments[middle:])
        self._probes += 1
        self._delete_pending(pending)
        return []

    def _create_review(self, comments: list[InlineComment], event: str | None) -> Any:
        """One review (pending when `event` is None); Refused on a 422."""
        import github.Commit

        assert self._repo is not None  # noqa: S101 (pull connects first)
        # The event names the commit: no request to learn its SHA.
        commit = github.Commit.Commit(self._repo.requester,
                                      attributes={"sha": self.event.head_sha}, completed=True)
        nonce = secrets.token_hex(6)
        body = review_body(len(comments), nonce)
        kwargs: dict[str, Any] = {"commit": commit, "body": body,
                                  "comments": [review_comment(c) for c in comments]}
        if event is not None:
            kwargs["event"] = event
        review = self._write(lambda: self.pull.create_review(**kwargs),
                             happened=partial(self._review_with, nonce))
        self._confirm_author(review.user.login)
        return review

    def _review_with(self, nonce: str) -> Any:
        """The review a write with this nonce created, if GitHub stored it after all."""
        for review in self.pull.get_reviews():
            if review_marker(review.body) == nonce and _is(review.user, self.login):
                return review
        return None

    def _discard_pending(self) -> None:
        """This bot's pending reviews (an interrupted run leaves one; GitHub allows one per
        user and pull request, and refuses any review while it is there)."""
        for review in self.pull.get_reviews():
            if review.state == "PENDING" and _is(review.user, self.login):
                self._delete_pending(review)

    def _delete_pending(self, review: Any) -> None:
        with contextlib.suppress(Gone):  # already gone (a retried delete)
            self._write(review.delete)

    # --- writes ------------------------------------------------------------------------

    def _write(self, action: Callable[[], T], happened: Callable[[], T | None] | None = None,
               ) -> T:
        """A write, retried by GitHub's rules; Refused on a 422 about the content, a plain 403
        is ReadOnly. `happened` looks whether a write whose outcome is unknown (a 5xx, a lost
        connection) was stored after all, so it is never made twice."""
        from github import GithubException
        from requests.exceptions import RequestException

        problem = "no attempt"
        for attempt in range(WRITE_ATTEMPTS):
            try:
                return action()
            except GithubException as exc:
                wait = self._wait_for(exc, attempt)
                if wait is None:
                    raise _final(exc) from exc
                unknown, problem = exc.status >= 500, f"{exc.status}: {_message(exc)}"
                # A 5xx is a failure retried, not GitHub asking to wait (a rate limit is).
                why = f"GitHub answered {exc.status}" if unknown else ""
            except RequestException as exc:
                wait, unknown, problem = BACKOFF_S * 2 ** attempt, True, str(exc)
                why = f"GitHub could not be reached ({type(exc).__name__})"
            if unknown and happened is not None:
                stored = self._stored(happened)
                if stored is not None:
                    return stored
            if attempt < WRITE_ATTEMPTS - 1:
                self._pause(wait, why)
        raise DeliveryFailed(f"GitHub kept failing a write ({WRITE_ATTEMPTS} attempts; last: "
                             f"{problem})")

    def _stored(self, happened: Callable[[], T | None]) -> T | None:
        """What `happened` finds; None when it cannot tell (GitHub is still failing)."""
        from github import GithubException
        from requests.exceptions import RequestException

        try:
            return happened()
        except (GithubException, RequestException):
            return None

    def _wait_for(self, exc: Any, attempt: int) -> float | None:
        """Seconds to wait before the next attempt, by GitHub's documented rules; None when
        the write is not tried again."""
        if exc.status >= 500:
            return float(BACKOFF_S * 2 ** attempt)  # rate-limit headers on a 5xx ask nothing
        if not _rate_limited(exc) or attempt == WRITE_ATTEMPTS - 1:
            return None
        headers = _headers(exc)
        if "retry-after" in headers:
            return _seconds(headers["retry-after"], SECONDARY_WAIT_S)
        if headers.get("x-ratelimit-remaining") == "0":
            reset = _seconds(headers.get("x-ratelimit-reset", ""), 0.0) - time.time()
            if reset > MAX_WAIT_S:
                raise DeliveryFailed(
                    "GitHub's rate limit for this token is spent until "
                    f"{time.strftime('%H:%M UTC', time.gmtime(time.time() + reset))}") from exc
            return max(reset, 0.0)
        return float(SECONDARY_WAIT_S * 2 ** attempt)  # a secondary limit without headers

    def _pause(self, seconds: float, why: str = "") -> None:
        # A longer Retry-After is cut to the bound (a primary limit that resets later than
        # that fails the post before it gets here).
        self._waited = pause("GitHub", min(seconds, MAX_WAIT_S), self._waited, self.sleep,
                             self.notice, why)


def _is(user: Any, login: str) -> bool:
    """By login only: an account's type says nothing (any App is a Bot)."""
    return bool(user is not None and user.login == login)


def _author(comment: Any) -> str:
    return str(comment.user.login) if comment.user is not None else ""


def _inline(comment: Any) -> ForgeComment:
    # No thread: GitHub's listing leaves `in_reply_to_id` out of a thread's first comment,
    # and PyGithub would fetch every such comment again to learn that; a listed comment's
    # thread is never needed (the comment someone writes comes with its event).
    number = (comment.pull_request_url or "").rstrip("/").rsplit("/", 1)[-1]
    return ForgeComment(id=comment.id, kind="inline", author=_author(comment),
                        body=comment.body or "", url=str(comment.html_url),
                        path=comment.path, change=int(number) if number.isdigit() else None)


def _conversation(comment: Any) -> ForgeComment:
    return ForgeComment(id=comment.id, kind="conversation", author=_author(comment),
                        body=comment.body or "", url=str(comment.html_url))


def _final(exc: Any) -> Exception:
    if exc.status == 422:
        return Refused(_message(exc))
    if exc.status == 403 and not _rate_limited(exc):
        return ReadOnly(_message(exc))
    if exc.status == 404:
        return Gone(f"GitHub answered 404: {_message(exc)}")
    return DeliveryFailed(f"GitHub answered {exc.status}: {_message(exc)}")


def _headers(exc: Any) -> dict[str, str]:
    return {k.lower(): v for k, v in (exc.headers or {}).items()}


def _rate_limited(exc: Any) -> bool:
    """A primary or secondary rate limit (403 or 429; a 422 for content "submitted too
    quickly"), as GitHub documents them."""
    message = _message(exc).lower()
    if exc.status == 422:
        return _TOO_QUICKLY in message
    if exc.status == 429:
        return True
    return exc.status == 403 and ("rate limit" in message or "retry-after" in _headers(exc)
                                  or _headers(exc).get("x-ratelimit-remaining") == "0")


def _seconds(value: str, default: float) -> float:
    try:
        return max(float(value), 0.0)
    except ValueError:
        return default


def _message(exc: Any) -> str:
    data = exc.data if isinstance(exc.data, dict) else {}
    found = data.get("errors")
    errors: list[Any] = found if isinstance(found, list) else []
    details = [e if isinstance(e, str) else str(e.get("message", "")) for e in errors
               if isinstance(e, str | dict)]
    text = "; ".join(part for part in (str(data.get("message") or ""), *details) if part)
    return text or str(exc)
