"""A comment event on GitHub answered: the comment as the event gives it (untrusted), the
token, GitHub's forge, and the pull request read from the API (a comment's payload does not
hold its commits). What to answer is `reviewbot.deliver.conversation`'s; a write GitHub
refuses or keeps failing is said by a notice (`guarded`), and the answer is not ok.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from reviewbot.deliver import conversation
from reviewbot.deliver.conversation import Answered, Talk, heard, triage
from reviewbot.deliver.delivery import Delivery, Inline
from reviewbot.deliver.forge import ForgeComment
from reviewbot.github.action import FAILED, Notice, bot_login_of, guarded, new_forge, token_of
from reviewbot.github.event import CommentEvent, PullComment, PullRequestEvent
from reviewbot.report import ReportInput
from reviewbot.review.answer import Ask


@dataclass(frozen=True)
class PullTalk:
    """A command that needs the review, and the pull request as the API describes it now
    (what is reviewed, and what the answers are about)."""

    talk: Talk
    pull: PullRequestEvent


def start(event: CommentEvent, env: Mapping[str, str], inline: Inline, notice: Notice,
          redact: Callable[[str], str]) -> PullTalk | Answered:
    comment = event.comment
    if event.action != "created":
        notice(f"a comment was {event.action}: reviewbot answers new comments only")
        return Answered()
    if not event.on_pull_request:
        notice("the comment is on an issue, not a pull request: nothing to do")
        return Answered()
    said = neutral(comment)
    command = heard(said, comment.user_type == "Bot", notice)
    if command is None:
        return Answered()
    token = token_of(env)
    if not token:
        notice("no GitHub token (the github-token input, or GITHUB_TOKEN): reviewbot cannot "
               "answer the comment")
        return Answered()
    placeholder = PullRequestEvent(
        number=event.number, base_sha="", head_sha="", base_ref="",
        repository=event.repository, from_fork=False, api_url=event.api_url,
        event_name=event.event_name)
    forge = new_forge(event.pull or placeholder, token, notice, bot_login_of(env))
    if comment.association == "OWNER":  # may command when permissions cannot be read
        forge.owners.add(comment.login)
    delivery = Delivery(forge, inline=inline, redact=redact)

    def triaged() -> PullTalk | Answered:
        pull = forge.pull_event(env, event.event_name)
        found = triage(delivery, said, command, pull.head_sha, notice)
        return PullTalk(found, pull) if isinstance(found, Talk) else found

    found = guarded(notice, "answering the comment", triaged, elsewhere="")
    if found is FAILED:
        return Answered(ok=False)
    if isinstance(found, PullTalk | Answered):
        return found
    return Answered()  # the token may not write here: said by `guarded`


def neutral(comment: PullComment) -> ForgeComment:
    """A comment event's comment as the forge's neutral record."""
    return ForgeComment(id=comment.id, kind="inline" if comment.kind == "review"
                        else "conversation", author=comment.login, body=comment.body,
                        thread=comment.in_reply_to)


def dismiss(talk: Talk, threshold: int, notice: Notice) -> bool:
    """`conversation.dismiss` (False: a write failed, said by a notice)."""
    return _answered(notice, lambda: conversation.dismiss(talk, threshold))


def confirm_review(talk: Talk, notice: Notice) -> bool:
    """`conversation.confirm_review` (False: the answer failed, said by a notice)."""
    return _answered(notice, lambda: conversation.confirm_review(talk))


def explain(talk: Talk, data: ReportInput, notice: Notice, ask: Ask | None = None) -> bool:
    """`conversation.explain` (False: the answer failed, said by a notice)."""
    return _answered(notice, lambda: conversation.explain(talk, data, notice, ask))


def _answered(notice: Notice, answer: Callable[[], str | None]) -> bool:
    return guarded(notice, "answering the comment", answer, elsewhere="") is not FAILED
