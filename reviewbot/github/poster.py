"""Post a run's findings on a pull request with PyGithub (imported only here).

- One review per run: an inline comment per finding on the RIGHT side of the diff (a range
  with `start_line`), a fix as a ```suggestion block, and one summary comment (counts,
  coverage, and every finding that could not go on a line, with the reason).
- Nothing is lost to a 422: every comment is checked against the pull request's own patches
  first; if GitHub still refuses the review, the comments it refuses are found (by halves, in
  pending reviews that are deleted again) and moved to the summary.
- Idempotent: comments carry hidden fingerprints. A re-run posts only new findings, edits its
  summary in place, and marks its earlier comments whose finding is gone as resolved (the
  REST API cannot resolve a review thread, so the comment says so at its top).
- GETs are retried by PyGithub (GithubRetry, GET only); writes are not, so they are retried
  here on 5xx and rate limits (Retry-After honoured, capped). A 403 that is not a rate limit
  means the token cannot write (a fork's pull request): `ReadOnlyToken`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from reviewbot.github.comments import (
    FINGERPRINT,
    SUMMARY,
    Placed,
    SummaryFacts,
    finding_body,
    resolved_body,
    summary_body,
)
from reviewbot.github.event import PullRequestEvent
from reviewbot.github.positions import commentable
from reviewbot.report import ReportInput
from reviewbot.report.fingerprint import fingerprint
from reviewbot.schema import SEVERITY_RANK, Finding

if TYPE_CHECKING:
    from github.PullRequest import PullRequest
    from github.Repository import Repository

T = TypeVar("T")
WRITE_ATTEMPTS = 3
WRITE_BACKOFF_S = 1.0
MAX_WAIT_S = 60.0
DEFAULT_BOT = "github-actions[bot]"


class ReadOnlyToken(Exception):
    """The token may read the pull request but not comment on it."""


class PostingFailed(Exception):
    """GitHub kept refusing or failing a write; the findings are in the SARIF file."""


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


@dataclass
class PostResult:
    posted: int = 0
    already_posted: int = 0
    resolved: int = 0
    elsewhere: list[Placed] = field(default_factory=list)
    summary_url: str | None = None
    review_url: str | None = None


@dataclass
class Poster:
    token: str
    event: PullRequestEvent
    max_comments: int = 30
    # PyGithub's own pacing, against GitHub's secondary rate limits (0 in tests).
    seconds_between_requests: float = 0.25
    seconds_between_writes: float = 1.0
    sleep: Callable[[float], None] = time.sleep
    redact: Callable[[str], str] = lambda text: text
    _pull: PullRequest | None = None
    _repo: Repository | None = None
    _login: str | None = None

    def connect(self) -> None:
        from github import Auth, Github, GithubException
        from github.GithubRetry import GithubRetry

        retry = GithubRetry(total=3, backoff_factor=0.5, allowed_methods=frozenset({"GET"}),
                            secondary_rate_wait=10, max_rate_limit_wait=MAX_WAIT_S)
        client = Github(auth=Auth.Token(self.token), base_url=self.event.api_url,
                        retry=retry, timeout=30,
                        seconds_between_requests=self.seconds_between_requests,
                        seconds_between_writes=self.seconds_between_writes)
        self._repo = client.get_repo(self.event.repository)
        self._pull = self._repo.get_pull(self.event.number)
        try:
            self._login = client.get_user().login
        except GithubException:  # an Actions token cannot read /user: it posts as the bot
            self._login = DEFAULT_BOT

    @property
    def pull(self) -> PullRequest:
        if self._pull is None:
            self.connect()
        assert self._pull is not None  # noqa: S101 (connect sets it or raises)
        return self._pull

    def last_reviewed_head(self) -> str | None:
        """The head commit this bot's summary says it reviewed last, if any."""
        comment = self._summary_comment()
        match = SUMMARY.search(comment.body) if comment is not None else None
        return match.group("head") or None if match else None

    def post(self, data: ReportInput, scope: set[str] | None = None, scope_note: str = "",
             notes: Sequence[str] = ()) -> PostResult:
        """Post the review and the summary. `scope`: the files this run reviewed (an
        incremental run), outside which earlier comments are left alone."""
        positions = commentable((f.filename, f.patch) for f in self.pull.get_files())
        ours = self._our_review_comments()
        result = PostResult()
        fresh: list[Comment] = []
        current: set[str] = set()
        for finding in sorted(data.report.findings, key=_importance):
            mark = fingerprint(data, finding)
            current.add(mark)
            if mark in ours:
                result.already_posted += 1
            elif reason := _not_on_a_line(finding, positions):
                result.elsewhere.append(Placed(finding, reason))
            elif len(fresh) >= self.max_comments:
                result.elsewhere.append(Placed(finding, f"over the {self.max_comments} "
                                                        "comments of a review"))
            else:
                fresh.append(Comment(finding, mark, self.redact(finding_body(finding, mark))))
        posted, refused = self._post_review(fresh)
        result.posted = len(posted)
        result.elsewhere += [Placed(c.finding, "GitHub refused it on this line") for c in refused]
        result.resolved = self._resolve(ours, current, scope)
        facts = SummaryFacts(head_sha=self.event.head_sha, posted=result.posted,
                             already_posted=result.already_posted, resolved=result.resolved,
                             elsewhere=result.elsewhere, scope=scope_note, notes=notes)
        result.summary_url = self._write_summary(self.redact(summary_body(data, facts)))
        return result

    # --- the review ---------------------------------------------------------------------

    def _post_review(self, comments: list[Comment]) -> tuple[list[Comment], list[Comment]]:
        """Post one review with the comments; (posted, refused by GitHub)."""
        from github import GithubException

        if not comments:
            return [], []
        try:
            self._create_review(comments, event="COMMENT")
            return comments, []
        except GithubException as exc:
            if exc.status != 422:
                raise
        refused = self._refused(comments)
        good = [c for c in comments if c not in refused]
        if good:
            self._create_review(good, event="COMMENT")
        return good, refused

    def _refused(self, comments: list[Comment]) -> list[Comment]:
        """The comments GitHub refuses, found by halves in pending reviews deleted again."""
        from github import GithubException

        try:
            pending = self._create_review(comments, event=None)
        except GithubException as exc:
            if exc.status != 422:
                raise
            if len(comments) == 1:
                return comments
            middle = len(comments) // 2
            return self._refused(comments[:middle]) + self._refused(comments[middle:])
        self._write(pending.delete)
        return []

    def _create_review(self, comments: list[Comment], event: str | None) -> Any:
        assert self._repo is not None  # noqa: S101 (pull connects first)
        commit = self._repo.get_commit(self.event.head_sha)
        body = (f"reviewbot: {len(comments)} findings on the lines below; the summary "
                "comment has the rest.")
        kwargs: dict[str, Any] = {"commit": commit, "body": body,
                                  "comments": [c.to_api() for c in comments]}
        if event is not None:
            kwargs["event"] = event
        return self._write(lambda: self.pull.create_review(**kwargs))

    # --- earlier comments and the summary ----------------------------------------------

    def _our_review_comments(self) -> dict[str, Any]:
        """fingerprint -> this bot's open (not yet resolved) review comment."""
        ours: dict[str, Any] = {}
        for comment in self.pull.get_review_comments():
            match = FINGERPRINT.search(comment.body or "")
            if match and comment.user.login == self._login:
                ours.setdefault(match.group("fp") + (match.group("resolved") or ""), comment)
        return {fp: c for fp, c in ours.items() if not fp.endswith(";resolved")}

    def _resolve(self, ours: dict[str, Any], current: set[str], scope: set[str] | None) -> int:
        gone = [c for fp, c in ours.items() if fp not in current
                and (scope is None or c.path in scope)]
        for comment in gone:
            body = resolved_body(comment.body, self.event.head_sha)
            self._write(partial(comment.edit, body))
        return len(gone)

    def _summary_comment(self) -> Any:
        self.pull  # noqa: B018 (connects)
        for comment in self.pull.get_issue_comments():
            if SUMMARY.search(comment.body or "") and comment.user.login == self._login:
                return comment
        return None

    def _write_summary(self, body: str) -> str:
        existing = self._summary_comment()
        if existing is not None:
            self._write(lambda: existing.edit(body))
            return str(existing.html_url)
        created = self._write(lambda: self.pull.create_issue_comment(body))
        return str(created.html_url)

    # --- writes ------------------------------------------------------------------------

    def _write(self, action: Callable[[], T]) -> T:
        """A write, retried on 5xx and rate limits; a plain 403 is ReadOnlyToken."""
        from github import GithubException

        for attempt in range(WRITE_ATTEMPTS):
            try:
                return action()
            except GithubException as exc:
                wait = _retry_wait(exc, attempt)
                if exc.status == 403 and wait is None:
                    raise ReadOnlyToken(_message(exc)) from exc
                if wait is None or attempt == WRITE_ATTEMPTS - 1:
                    if exc.status in (422,):
                        raise
                    raise PostingFailed(f"GitHub answered {exc.status}: {_message(exc)}") \
                        from exc
                self.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover


def _retry_wait(exc: Any, attempt: int) -> float | None:
    """Seconds to wait before retrying a failed write, or None when it is not retried."""
    headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
    if "retry-after" in headers:
        try:
            return min(max(float(headers["retry-after"]), 0.0), MAX_WAIT_S)
        except ValueError:
            return float(WRITE_BACKOFF_S * 2 ** attempt)
    if exc.status in (429, 502, 503, 504) or (
            exc.status == 403 and (headers.get("x-ratelimit-remaining") == "0"
                                   or "rate limit" in _message(exc).lower())):
        reset = headers.get("x-ratelimit-reset")
        if reset and reset.isdigit():
            return min(max(int(reset) - time.time(), 0.0), MAX_WAIT_S)
        return float(WRITE_BACKOFF_S * 2 ** attempt)
    return None


def _message(exc: Any) -> str:
    data = exc.data if isinstance(exc.data, dict) else {}
    return str(data.get("message") or exc)


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


def _importance(finding: Finding) -> tuple[int, str, int]:
    return (-SEVERITY_RANK[finding.severity], finding.file_path, finding.start_line)

