"""The interface a forge implements for delivery (GitHub, GitLab, ...): `Forge`, the records
that cross it, and its errors. It is kept to what every forge needs; a forge's own ways
(review positions, pending reviews, retries and rate limits, its SDK) stay in its adapter.

The contract, per call (any call may also raise `ReadOnly` for a token that may read but not
write, and `DeliveryFailed` when the forge kept failing or could not be reached: the findings
are in the report files):

- `name`: the forge as people call it ("GitHub"), in the reasons the summary gives.
- `change`: what the forge calls the change under review ("pull request", "merge request"),
  in the text reviewbot writes.
- `max_body`: the longest body the forge takes (characters); every body is built within it.
- `suggestion_fence(lines)`: the info string of the forge's suggestion block that replaces
  that many lines, from the line an inline comment is on ("suggestion" on GitHub).
- `login`: who reviewbot writes as. Every comment `post`/`reply` creates must come back under
  this login, else the caller raises `NotReviewbot`: a comment by any other author is never
  taken for reviewbot's, whatever markers it holds.
- `may_write(login)`: whether that person may command reviewbot (the forge's permissions).
- `lines()`: path -> the new-side lines of the change that take an inline comment (a file
  the forge shows no diff for: an empty set). The adapter turns (path, start, end) into its
  own position when it posts.
- `removed_lines()`: path -> the base-side numbers of the lines the change removed, which take
  an inline comment on the removed line itself (a finding about a deleted guard); asked only
  when such a finding is to be posted.
- `comments(kind)`: the comments of the change as `ForgeComment`s, oldest first:
  "inline" (on lines, in threads), "conversation" (the change's own thread), or
  "repository" (inline comments across the repository's changes, most recently updated
  first, bounded by `MAX_REPOSITORY_COMMENTS`: what dismissals are counted from).
- `post_inline(comments)`: posts them together as far as the forge allows; the ones it
  refused on their lines come back as `LineRefused`, with the reason, for the summary.
  Any other refusal is `DeliveryFailed`.
- `post(body)`, `reply(comment, body)`: a new comment in the conversation, or an answer in
  the comment's thread (in the conversation for a conversation comment); the comment made.
- `edit(comment, body)`, `delete(comment)`: `Gone` when the comment no longer exists.
- `resolve(comment, body)`: the comment's finding is gone: the body replaces its text, and
  a forge that can resolve the thread resolves it too.

Idempotence is the adapter's job: a write whose outcome is unknown (a 5xx, a dropped
connection) is looked up before it is repeated, by its marker (the body's last line, among
`login`'s comments), so no comment is made twice. The caller guarantees every body is already
redacted and fits the forge, and ends with reviewbot's marker on its last line
(`reviewbot.deliver.bodies`), which a redaction pass never touched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

CommentKind = Literal["inline", "conversation", "repository"]
# Inline comments read across a repository's changes to count dismissals.
MAX_REPOSITORY_COMMENTS = 1000


class ReadOnly(Exception):
    """The token may read the change but not comment on it."""


class DeliveryFailed(Exception):
    """The forge kept refusing or failing a write; the findings are in the report files."""


class NotReviewbot(DeliveryFailed):
    """A write came back under another author than the login reviewbot takes for itself."""


class Gone(DeliveryFailed):
    """What the write is about no longer exists (a deleted comment)."""


class LineRefused(DeliveryFailed):
    """The forge refused a comment on its lines: it goes to the summary with `reason`."""

    def __init__(self, comment: InlineComment, reason: str) -> None:
        super().__init__(reason)
        self.comment = comment
        self.reason = reason


@dataclass(frozen=True)
class ForgeComment:
    """A comment on the change, whoever wrote it: its body is untrusted text."""

    id: int
    kind: Literal["inline", "conversation"]
    author: str
    body: str
    url: str = ""
    # An inline comment's file, and the comment that starts its thread (None for the
    # thread's first comment, or when the forge's listing does not say).
    path: str | None = None
    thread: int | None = None
    resolved: bool = False
    # Who resolved its thread, when the forge says ("": nobody, or not said).
    resolved_by: str = ""
    # The change a repository-wide inline comment is on.
    change: int | None = None


@dataclass(frozen=True)
class InlineComment:
    """A comment to post on new-side lines `start`..`end` of `path`, or, with `base_line`, on
    that removed line of the base's side."""

    path: str
    start: int
    end: int
    body: str
    base_line: int | None = None


class Forge(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def change(self) -> str: ...

    @property
    def max_body(self) -> int: ...

    @property
    def reports(self) -> str:
        """Where every finding is when a comment cannot hold them all (the job summary...)."""
        ...

    @property
    def files_listed(self) -> str:
        """Where every changed file is listed when the walkthrough does not fit; "" when
        nowhere else."""
        ...

    def suggestion_fence(self, lines: int) -> str: ...

    @property
    def login(self) -> str: ...

    def may_write(self, login: str) -> bool: ...

    def lines(self) -> Mapping[str, set[int]]: ...

    def removed_lines(self) -> Mapping[str, set[int]]: ...

    def comments(self, kind: CommentKind) -> list[ForgeComment]: ...

    def post_inline(self, comments: Sequence[InlineComment]) -> list[LineRefused]: ...

    def post(self, body: str) -> ForgeComment: ...

    def reply(self, comment: ForgeComment, body: str) -> ForgeComment: ...

    def edit(self, comment: ForgeComment, body: str) -> None: ...

    def delete(self, comment: ForgeComment) -> None: ...

    def resolve(self, comment: ForgeComment, body: str) -> None: ...
