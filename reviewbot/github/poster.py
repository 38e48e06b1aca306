"""A pull request's delivery on GitHub: the forge-neutral `Delivery` working through
`GithubForge`, for the action and the conversation. This is where a comment event's
`PullComment` becomes the forge's neutral record.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from reviewbot.deliver.delivery import Delivery, Inline, PostResult
from reviewbot.deliver.dismissals import Dismissal
from reviewbot.deliver.forge import ForgeComment
from reviewbot.github.event import PullComment, PullRequestEvent
from reviewbot.github.forge import DEFAULT_BOT_LOGIN, GithubForge
from reviewbot.report import ReportInput


@dataclass
class Poster:
    token: str
    event: PullRequestEvent
    inline: Inline = field(default_factory=Inline)
    # PyGithub's own pacing, against GitHub's secondary rate limits (0 in tests).
    seconds_between_requests: float = 0.25
    seconds_between_writes: float = 1.0
    sleep: Callable[[float], None] = time.sleep
    redact: Callable[[str], str] = lambda text: text
    notice: Callable[[str], None] = lambda message: None
    # Who reviewbot is when the token cannot read `/user`: the workflow says (trusted).
    bot_login: str = DEFAULT_BOT_LOGIN
    forge: GithubForge = field(init=False)
    delivery: Delivery = field(init=False)

    def __post_init__(self) -> None:
        self.forge = GithubForge(
            token=self.token, event=self.event, sleep=self.sleep, notice=self.notice,
            seconds_between_requests=self.seconds_between_requests,
            seconds_between_writes=self.seconds_between_writes, bot_login=self.bot_login)
        self.delivery = Delivery(self.forge, inline=self.inline, redact=self.redact)

    def connect(self) -> None:
        self.forge.connect()

    @property
    def login(self) -> str:
        return self.forge.login

    def post(self, data: ReportInput, notes: Sequence[str] = ()) -> PostResult:
        """Post the review and the summary for the pull request as it now stands."""
        return self.delivery.post(data, self.event.head_sha, notes)

    def pull_event(self, env: Mapping[str, str], event_name: str) -> PullRequestEvent:
        """The pull request as the API describes it now (a comment event's payload does not
        carry it); the poster reviews and answers about this one from here on."""
        self.event = self.forge.pull_event(env, event_name)
        return self.event

    def wrote(self, comment: PullComment) -> bool:
        return self.delivery.wrote(neutral(comment))

    def may_command(self, comment: PullComment) -> bool:
        """Whether the comment's author has write access to the repository (GitHub's
        permission API; if the token may not read it, only the repository's owner, as the
        event names it)."""
        if comment.association == "OWNER":
            self.forge.owners.add(comment.login)
        return self.forge.may_write(comment.login)

    def summary_url(self) -> str | None:
        return self.delivery.summary_url()

    def thread_root(self, comment: PullComment) -> ForgeComment | None:
        return self.delivery.thread_root(neutral(comment))

    def dismiss(self, root: ForgeComment, login: str, reason: str) -> bool:
        return self.delivery.dismiss(root, login, reason)

    def repository_dismissals(self) -> list[Dismissal]:
        return self.delivery.repository_dismissals()

    def reply(self, comment: PullComment, text: str) -> str:
        return self.delivery.reply(neutral(comment), text)


def neutral(comment: PullComment) -> ForgeComment:
    """A comment event's comment as the forge's neutral record."""
    return ForgeComment(id=comment.id, kind="inline" if comment.kind == "review"
                        else "conversation", author=comment.login, body=comment.body,
                        thread=comment.in_reply_to)


__all__ = ["Poster", "neutral"]
