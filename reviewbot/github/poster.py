"""Post a run's findings on a pull request with PyGithub (imported only here).

- One review per run: an inline comment per new finding at the inline level or above
  (warning by default: the workflow's choice) on the RIGHT side of the diff (a range with
  `start_line`), a checked fix as a ```suggestion block (whole, or not at all), and one
  summary comment (counts, coverage, every finding that could not go on a line, with the
  reason, and the findings below the inline level, collapsed), each within GitHub's 65,536
  characters. A finding below the level that an earlier run posted inline (a lower level
  then) keeps its comment: it is neither posted again nor resolved while it stands.
- Idempotent: comments carry hidden markers (their last line), and the bot's own comments are
  recognised by their markers *and* their author: the token's login when GitHub tells it
  (`GET /user`), else the login the workflow names (`bot_login`: the Actions token writes as
  `github-actions[bot]`; an App installation token as its App's bot), and every write's
  author must be that login. No other account, bot or not, is ever taken for reviewbot. A
  re-run posts only new findings, edits its summary in place, and marks an earlier comment
  "Resolved" only when its finding is gone from the pull request as it now stands (REST cannot
  resolve a thread: the comment says so). An answer to a comment is written once even when
  two runs of the same event answer at once: the later one deletes its own.
- Nothing is lost or doubled when GitHub says no. GitHub's 422s are told apart by their
  documented messages: lines outside the diff (every comment is checked against the pull
  request's patches first; the ones GitHub still refuses are found by halves in pending
  reviews, within a bound on writes, and moved to the summary), a leftover pending review of
  this bot (discarded, then the review is posted), content "submitted too quickly" (a
  secondary rate limit). Waits follow GitHub's rules: Retry-After; the primary limit's reset;
  a minute at least for a secondary limit without headers; a short exponential backoff for
  5xx and lost connections. Before a write whose outcome is unknown (a 5xx, a dropped
  connection) is repeated, the pull request is read again to see whether it happened.
"""

from __future__ import annotations

import contextlib
import itertools
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from reviewbot.deliver.bodies import (
    MAX_BODY,
    Placed,
    SummaryFacts,
    dismissed_body,
    finding_body,
    finding_marker,
    marked,
    reply_body,
    reply_marker,
    resolved_body,
    review_body,
    review_marker,
    summary_body,
    summary_marker,
)
from reviewbot.deliver.dismissals import MAX_COMMENTS_READ, Dismissal
from reviewbot.github.event import PullComment, PullRequestEvent, pull_event
from reviewbot.github.positions import commentable
from reviewbot.report import ReportInput
from reviewbot.report.fingerprint import fingerprint
from reviewbot.schema import SEVERITY_RANK, Finding, Severity

if TYPE_CHECKING:
    from github.PullRequest import PullRequest
    from github.Repository import Repository

T = TypeVar("T")
# Who the Actions token writes as; a workflow with another token that cannot read `/user` (a
# GitHub App's) names its bot instead (the action's `bot-login` input).
DEFAULT_BOT_LOGIN = "github-actions[bot]"
WRITE_ATTEMPTS = 4
# 5xx and lost connections: 1, 2, 4 s. GETs are retried by PyGithub with its own backoff.
BACKOFF_S = 1.0
GET_BACKOFF_S = 0.5
# A secondary rate limit with no Retry-After: "wait for at least one minute" (GitHub).
SECONDARY_WAIT_S = 60.0
# A wait longer than this (a primary limit that resets in an hour) fails the post instead.
MAX_WAIT_S = 120.0
# All the waiting one run may do before it gives up posting.
MAX_TOTAL_WAIT_S = 300.0
# Writes the search for the comments GitHub refuses may make (pending reviews created and
# deleted again); the comments not tried by then go to the summary.
MAX_PROBE_WRITES = 24
TIMEOUT_S = 30
# GitHub's 422 messages for a review, by what they mean.
_LINE_ERRORS = ("must be part of the diff", "could not be resolved", "same hunk",
                "diff hunk can't be blank", "is outside the diff")
_PENDING_ERROR = "one pending review"
_TOO_QUICKLY = "submitted too quickly"


class ReadOnlyToken(Exception):
    """The token may read the pull request but not comment on it."""


class PostingFailed(Exception):
    """GitHub kept refusing or failing a write; the findings are in the SARIF file."""


class NotReviewbot(PostingFailed):
    """A write came back under another login than the one reviewbot takes for itself."""


class NotFound(PostingFailed):
    """GitHub answered 404: what the write is about is gone (a deleted comment)."""


class Refused(Exception):
    """GitHub answered 422 to a review: `message` says why (its documented errors)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def lines(self) -> bool:
        return any(error in self.message for error in _LINE_ERRORS)

    @property
    def pending(self) -> bool:
        return _PENDING_ERROR in self.message


@dataclass(frozen=True)
class Comment:
    finding: Finding
    fingerprint: str
    body: str

    def to_api(self) -> dict[str, Any]:
        f = self.finding
        comment: dict[str, Any] = {"path": f.file_path, "line": f.end_line, "side": "RIGHT",
                                   "body": self.body}
        if f.start_line != f.end_line:
            comment |= {"start_line": f.start_line, "start_side": "RIGHT"}
        return comment


@dataclass(frozen=True)
class Inline:
    """What goes on the diff's lines, as the workflow says: new comments for findings at
    `level` or above, at most `max_comments` a review; the rest are in the summary comment."""

    max_comments: int = 30
    level: Severity = "warning"

    def takes(self, finding: Finding) -> bool:
        return SEVERITY_RANK[finding.severity] >= SEVERITY_RANK[self.level]


@dataclass
class PostResult:
    posted: int = 0
    already_posted: int = 0
    resolved: int = 0
    dismissed: int = 0
    elsewhere: list[Placed] = field(default_factory=list)
    # Below the inline level: in the summary only (with a reason when not on a line either).
    below_level: list[Placed] = field(default_factory=list)
    summary_url: str | None = None


@dataclass
class Poster:
    token: str
    event: PullRequestEvent
    inline: Inline = Inline()
    # PyGithub's own pacing, against GitHub's secondary rate limits (0 in tests).
    seconds_between_requests: float = 0.25
    seconds_between_writes: float = 1.0
    sleep: Callable[[float], None] = time.sleep
    redact: Callable[[str], str] = lambda text: text
    notice: Callable[[str], None] = lambda message: None
    # Who reviewbot is when the token cannot read `/user`: the workflow says (trusted).
    bot_login: str = DEFAULT_BOT_LOGIN
    _pull: PullRequest | None = None
    _repo: Repository | None = None
    # The token's login: from /user, else `bot_login` (set by connect).
    _login: str | None = None
    _waited: float = 0.0
    _probes: int = 0

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

    def post(self, data: ReportInput, notes: Sequence[str] = ()) -> PostResult:
        """Post the review and the summary for the pull request as it now stands."""
        positions = commentable((f.filename, f.patch) for f in self.pull.get_files())
        result = PostResult()
        placed: list[tuple[Finding, str]] = []
        elsewhere: list[Placed] = []
        for finding in sorted(data.report.findings, key=importance):
            if reason := _not_on_a_line(finding, positions):
                (elsewhere if self.inline.takes(finding) else result.below_level).append(
                    Placed(finding, reason))
            else:
                placed.append((finding, fingerprint(data, finding)))
        # Read right before writing: another run may have posted since this one began.
        ours, dismissed = self._our_review_comments()
        fresh = self._fresh(placed, ours, dismissed, result, elsewhere)
        posted, refused = self._post_review(fresh)
        result.posted = len(posted)
        elsewhere += refused
        result.elsewhere = sorted(elsewhere, key=lambda p: importance(p.finding))
        result.below_level.sort(key=lambda p: importance(p.finding))
        # Every finding of the pull request as it stands keeps its comment, wherever it is
        # reported this time.
        current = {mark for _, mark in placed}
        result.resolved = self._resolve(ours, current | {
            _mark(p, data) for p in [*elsewhere, *result.below_level]})
        facts = SummaryFacts(head_sha=self.event.head_sha, posted=result.posted,
                             already_posted=result.already_posted, resolved=result.resolved,
                             elsewhere=result.elsewhere, notes=notes,
                             dismissed=result.dismissed, below_level=result.below_level,
                             inline_level=self.inline.level)
        result.summary_url = self._write_summary(self._sealed(summary_body(data, facts)))
        return result

    def _fresh(self, placed: list[tuple[Finding, str]], ours: dict[str, Any],
               dismissed: set[str], result: PostResult,
               elsewhere: list[Placed]) -> list[Comment]:
        """The comments to post: the findings at the inline level that have none yet, up to
        max_comments (the rest go to `elsewhere`; those below the level, to the result's
        `below_level`). A finding that already has a comment keeps it, whatever its level."""
        fresh: list[Comment] = []
        limit = self.inline.max_comments
        for finding, mark in placed:
            if mark in dismissed:
                result.dismissed += 1
            elif mark in ours:
                result.already_posted += 1
            elif not self.inline.takes(finding):
                result.below_level.append(Placed(finding, ""))
            elif len(fresh) >= limit:
                elsewhere.append(Placed(finding, f"over the {limit} comments of a review"))
            else:
                fresh.append(Comment(finding, mark, self._sealed(finding_body(finding, mark))))
        return fresh

    def _sealed(self, body: str) -> str:
        """A body through the redaction pass, its marker (the last line, reviewbot's own
        text) as written: a value the rules found in the change (a password that reads
        `reviewbot`, a file name holding a key's header) must not erase reviewbot's memory."""
        head, newline, last = body.rpartition("\n")
        if newline and marked(last):
            return f"{self.redact(head)}\n{last}"
        return self.redact(body)

    # --- the review ---------------------------------------------------------------------

    def _post_review(self, comments: list[Comment],
                     discarded: bool = False) -> tuple[list[Comment], list[Placed]]:
        """Post one review with the comments; (posted, the ones GitHub refused, placed)."""
        if not comments:
            return [], []
        try:
            self._create_review(comments, event="COMMENT")
            return comments, []
        except Refused as exc:
            if exc.pending and not discarded:
                self._discard_pending()
                return self._post_review(comments, discarded=True)
            if not exc.lines:
                raise PostingFailed(f"GitHub refused the review: {exc.message}") from exc
        refused = self._refused(comments)
        good = [c for c in comments if all(c is not r.comment for r in refused)]
        if good:
            self._create_review(good, event="COMMENT")
        return good, [Placed(r.comment.finding, r.reason) for r in refused]

    def _refused(self, comments: list[Comment]) -> list[_Refusal]:
        """The comments GitHub refuses, found by halves in pending reviews deleted again, at
        most MAX_PROBE_WRITES writes; comments not tried by then count as refused."""
        if self._probes + 1 > MAX_PROBE_WRITES:
            return [_Refusal(c, "GitHub refused the review, and the search for the comment "
                                f"it refused stopped after {MAX_PROBE_WRITES} writes")
                    for c in comments]
        self._probes += 1
        try:
            pending = self._create_review(comments, event=None)
        except Refused as exc:
            if not exc.lines:
                raise PostingFailed(f"GitHub refused the review: {exc.message}") from exc
            if len(comments) == 1:
                return [_Refusal(comments[0], "GitHub refused it on this line")]
            middle = len(comments) // 2
            return self._refused(comments[:middle]) + self._refused(comments[middle:])
        self._probes += 1
        self._delete_pending(pending)
        return []

    def _create_review(self, comments: list[Comment], event: str | None) -> Any:
        """One review (pending when `event` is None); Refused on a 422."""
        import github.Commit

        assert self._repo is not None  # noqa: S101 (pull connects first)
        # The event names the commit: no request to learn its SHA.
        commit = github.Commit.Commit(self._repo.requester,
                                      attributes={"sha": self.event.head_sha}, completed=True)
        nonce = secrets.token_hex(6)
        body = review_body(len(comments), nonce)
        kwargs: dict[str, Any] = {"commit": commit, "body": body,
                                  "comments": [c.to_api() for c in comments]}
        if event is not None:
            kwargs["event"] = event
        review = self._write(lambda: self.pull.create_review(**kwargs),
                             happened=partial(self._review_with, nonce))
        self._confirm_author(review.user.login)
        return review

    def _review_with(self, nonce: str) -> Any:
        """The review a write with this nonce created, if GitHub stored it after all."""
        for review in self.pull.get_reviews():
            if review_marker(review.body) == nonce and self._is_ours(review.user):
                return review
        return None

    def _discard_pending(self) -> None:
        """This bot's pending reviews (an interrupted run leaves one; GitHub allows one per
        user and pull request, and refuses any review while it is there)."""
        for review in self.pull.get_reviews():
            if review.state == "PENDING" and self._is_ours(review.user):
                self._delete_pending(review)

    def _delete_pending(self, review: Any) -> None:
        with contextlib.suppress(NotFound):  # already gone (a retried delete)
            self._write(review.delete)

    # --- earlier comments and the summary ----------------------------------------------

    @property
    def login(self) -> str:
        """Who reviewbot is on GitHub (the token's login, or the workflow's bot_login)."""
        if self._login is None:
            self.connect()
        assert self._login is not None  # noqa: S101 (connect sets it or raises)
        return self._login

    def _is_ours(self, user: Any) -> bool:
        """By login only: an account's type says nothing (any App is a Bot)."""
        return bool(user is not None and user.login == self.login)

    def wrote(self, comment: PullComment) -> bool:
        """Whether reviewbot wrote this comment: its author is reviewbot's login and it ends
        with one of reviewbot's markers (with a person's token, the same person's own
        comments are theirs)."""
        return comment.login == self.login and marked(comment.body)

    def _confirm_author(self, login: str) -> None:
        """Every write's author must be the login reviewbot takes for itself: otherwise its
        comments would not be known as its own on the next run."""
        if login != self.login:
            raise NotReviewbot(
                f"GitHub wrote reviewbot's comment as {login!r}, but reviewbot takes itself "
                f"for {self.login!r}: the token cannot read /user, so set the action's "
                f"bot-login input (REVIEWBOT_BOT_LOGIN) to {login!r}")

    def _our_review_comments(self) -> tuple[dict[str, Any], set[str]]:
        """fingerprint -> this bot's open (not resolved, not dismissed) review comment, and
        the fingerprints dismissed on this pull request."""
        ours: dict[str, Any] = {}
        dismissed: set[str] = set()
        for comment in self.pull.get_review_comments():
            match = finding_marker(comment.body)
            if not (match and self._is_ours(comment.user)):
                continue
            if match.group("state") == ";dismissed":
                dismissed.add(match.group("fp"))
            elif match.group("state") is None:
                ours.setdefault(match.group("fp"), comment)
        return {fp: c for fp, c in ours.items() if fp not in dismissed}, dismissed

    def _resolve(self, ours: dict[str, Any], current: set[str]) -> int:
        """Mark the comments whose finding is gone from the pull request as it stands."""
        gone = [c for fp, c in ours.items() if fp not in current]
        for comment in gone:
            body = self._sealed(resolved_body(comment.body, self.event.head_sha))
            self._write(partial(comment.edit, body))
        return len(gone)

    def _summary_comment(self) -> Any:
        for comment in self.pull.get_issue_comments():
            if summary_marker(comment.body) and self._is_ours(comment.user):
                return comment
        return None

    def _write_summary(self, body: str) -> str:
        existing = self._summary_comment()
        if existing is not None:
            self._write(lambda: existing.edit(body))
            return str(existing.html_url)
        created = self._write(lambda: self.pull.create_issue_comment(body),
                              happened=self._summary_comment)
        self._confirm_author(created.user.login)
        return str(created.html_url)

    # --- conversation ------------------------------------------------------------------

    def pull_event(self, env: Mapping[str, str], event_name: str) -> PullRequestEvent:
        """The pull request as the API describes it now (a comment event's payload does not
        carry it); the poster reviews and answers about this one from here on."""
        self.event = pull_event(self.pull.raw_data, env, event_name)
        return self.event

    def may_command(self, comment: PullComment) -> bool:
        """Whether the comment's author has write access to the repository (GitHub's
        permission API; if the token may not read it, only the repository's owner)."""
        from github import GithubException

        assert self._repo is not None  # noqa: S101 (pull connects first)
        try:
            permission = self._repo.get_collaborator_permission(comment.login)
        except GithubException as exc:
            if exc.status not in (403, 404):
                raise
            return comment.association == "OWNER"
        return permission in ("admin", "maintain", "write")

    def summary_url(self) -> str | None:
        found = self._summary_comment()
        return str(found.html_url) if found is not None else None

    def thread_root(self, comment: PullComment) -> Any | None:
        """The reviewbot finding comment a review comment replies to, if it is one."""
        from github import GithubException

        if comment.kind != "review" or comment.in_reply_to is None:
            return None
        try:
            root = self.pull.get_review_comment(comment.in_reply_to)
        except GithubException as exc:
            if exc.status == 404:
                return None
            raise
        mine = self._is_ours(root.user) and finding_marker(root.body) is not None
        return root if mine else None

    def dismiss(self, root: Any, login: str, reason: str) -> bool:
        """Mark a finding's comment dismissed (False: it already was)."""
        match = finding_marker(root.body)
        if match is None or match.group("state") == ";dismissed":
            return False
        body = self._sealed(dismissed_body(root.body, login, reason))
        self._write(partial(root.edit, body))
        return True

    def repository_dismissals(self) -> list[Dismissal]:
        """reviewbot's dismissed comments across the repository's pull requests (the most
        recently updated MAX_COMMENTS_READ review comments)."""
        assert self._repo is not None  # noqa: S101 (pull connects first)
        found: list[Dismissal] = []
        listed = self._repo.get_pulls_comments(sort="updated", direction="desc")
        for comment in itertools.islice(listed, MAX_COMMENTS_READ):
            match = finding_marker(comment.body)
            if not (match and match.group("state") == ";dismissed" and match.group("rule")
                    and self._is_ours(comment.user)):
                continue
            number = (comment.pull_request_url or "").rstrip("/").rsplit("/", 1)[-1]
            if number.isdigit():
                found.append(Dismissal(match.group("rule"), comment.path, int(number)))
        return found

    def reply(self, comment: PullComment, text: str) -> str:
        """Answer a comment (in its thread for a review comment), once: a re-run of the same
        event finds the answer already there, and of two runs answering at once, the later
        answer is deleted again. Its URL."""
        # Redacted, then clipped (what GitHub counts), then marked: the marker stays the last
        # line, and no value the pass masks can touch it.
        body = reply_body(self.redact(text)[:MAX_BODY - 100], comment.id)
        found = self._reply_to(comment)
        if found is not None:
            return str(found.html_url)
        if comment.kind == "review":
            def in_thread(thread: int) -> Any:
                return self._write(lambda: self.pull.create_review_comment_reply(thread, body),
                                   happened=partial(self._reply_to, comment))
            try:
                created = in_thread(comment.in_reply_to or comment.id)
            except NotFound:
                if comment.in_reply_to is None:
                    raise
                created = in_thread(comment.id)  # the thread's first comment was deleted
        else:
            created = self._write(lambda: self.pull.create_issue_comment(body),
                                  happened=partial(self._reply_to, comment))
        self._confirm_author(created.user.login)
        return self._only_answer(comment, created)

    def _only_answer(self, comment: PullComment, created: Any) -> str:
        """The URL of the comment's first answer; `created` is deleted when another run's
        answer came first (ids grow with time, so of two runs, only the later deletes)."""
        first = self._reply_to(comment)
        if first is None or first.id == created.id:
            return str(created.html_url)
        with contextlib.suppress(NotFound):  # already gone (a retried delete)
            self._write(created.delete)
        return str(first.html_url)

    def _reply_to(self, comment: PullComment) -> Any | None:
        """reviewbot's first answer to the comment, if there is one."""
        listed = (self.pull.get_review_comments() if comment.kind == "review"
                  else self.pull.get_issue_comments())
        answers = [c for c in listed
                   if reply_marker(c.body) == comment.id and self._is_ours(c.user)]
        return min(answers, key=lambda c: c.id, default=None)

    # --- writes ------------------------------------------------------------------------

    def _write(self, action: Callable[[], T], happened: Callable[[], T | None] | None = None,
               ) -> T:
        """A write, retried by GitHub's rules; Refused on a 422 about the content, a plain 403
        is ReadOnlyToken. `happened` looks whether a write whose outcome is unknown (a 5xx,
        a lost connection) was stored after all, so it is never made twice."""
        from github import GithubException
        from requests.exceptions import RequestException

        problem = "no attempt"
        for attempt in range(WRITE_ATTEMPTS):
            try:
                return action()
            except GithubException as exc:
                wait = self._wait_for(exc, attempt)
                if wait is None:
                    raise self._final(exc) from exc
                unknown, problem = exc.status >= 500, f"{exc.status}: {_message(exc)}"
            except RequestException as exc:
                wait, unknown, problem = BACKOFF_S * 2 ** attempt, True, str(exc)
            if unknown and happened is not None:
                stored = self._stored(happened)
                if stored is not None:
                    return stored
            if attempt < WRITE_ATTEMPTS - 1:
                self._pause(wait)
        raise PostingFailed(f"GitHub kept failing a write ({WRITE_ATTEMPTS} attempts; last: "
                            f"{problem})")

    def _stored(self, happened: Callable[[], T | None]) -> T | None:
        """What `happened` finds; None when it cannot tell (GitHub is still failing)."""
        from github import GithubException
        from requests.exceptions import RequestException

        try:
            return happened()
        except (GithubException, RequestException):
            return None

    @staticmethod
    def _final(exc: Any) -> Exception:
        if exc.status == 422:
            return Refused(_message(exc))
        if exc.status == 403 and not _rate_limited(exc):
            return ReadOnlyToken(_message(exc))
        if exc.status == 404:
            return NotFound(f"GitHub answered 404: {_message(exc)}")
        return PostingFailed(f"GitHub answered {exc.status}: {_message(exc)}")

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
                raise PostingFailed(
                    "GitHub's rate limit for this token is spent until "
                    f"{time.strftime('%H:%M UTC', time.gmtime(time.time() + reset))}") from exc
            return max(reset, 0.0)
        return float(SECONDARY_WAIT_S * 2 ** attempt)  # a secondary limit without headers

    def _pause(self, seconds: float) -> None:
        seconds = min(seconds, MAX_WAIT_S)
        if self._waited + seconds > MAX_TOTAL_WAIT_S:
            raise PostingFailed(f"GitHub kept asking to wait (over {MAX_TOTAL_WAIT_S:.0f} s in "
                                "all)")
        self._waited += seconds
        if seconds:
            self.notice(f"GitHub asked to wait; retrying in {seconds:.0f} s")
        self.sleep(seconds)


@dataclass(frozen=True)
class _Refusal:
    comment: Comment
    reason: str


def _mark(placed: Placed, data: ReportInput) -> str:
    return fingerprint(data, placed.finding)


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


def _not_on_a_line(finding: Finding, positions: dict[str, set[int]]) -> str | None:
    if not finding.in_diff:
        return "outside the changed lines"
    lines = positions.get(finding.file_path)
    if lines is None:
        return "the file is not in the pull request's diff"
    if not lines:
        return "GitHub shows no diff for this file (binary or too large)"
    if not all(n in lines for n in range(finding.start_line, finding.end_line + 1)):
        return "its lines are not all in the pull request's diff"
    return None


def importance(finding: Finding) -> tuple[int, str, int]:
    return (-SEVERITY_RANK[finding.severity], finding.file_path, finding.start_line)


__all__ = ["DEFAULT_BOT_LOGIN", "MAX_BODY", "Comment", "Inline", "NotReviewbot", "PostResult",
           "Poster", "PostingFailed", "ReadOnlyToken"]
