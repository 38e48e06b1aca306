"""Answer someone who talks to reviewbot on a pull request (a comment event).

Who may: people with write access to the repository (GitHub's permission API); anyone else
gets one short answer and no action. Bots are never answered, and neither is a comment
reviewbot wrote, whatever the token (with a person's token reviewbot's comments are that
person's: they are known by reviewbot's login and marker, `Poster.wrote`). A comment is
untrusted text: only its `/reviewbot` line is read (`commands.parse`), and whatever of it is
shown back (a reason, an unknown word) is inert; nothing in it reaches endpoints, keys,
limits, tools or exit codes.

`help` and a refusal are answered here. `review`, `explain` and `ignore` need the review or
the repository's config (read at the base): `start` hands them back to the command line as a
`Talk`, with the pull request read from the API (a comment's payload does not hold its
commits).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from reviewbot.deliver.bodies import explanation, finding_marker
from reviewbot.deliver.commands import HELP, THREAD_COMMANDS, Command, parse
from reviewbot.deliver.delivery import Inline
from reviewbot.deliver.dismissals import proposal
from reviewbot.github.action import (
    FAILED,
    Notice,
    bot_login_of,
    guarded,
    new_poster,
    token_of,
)
from reviewbot.github.event import CommentEvent, PullRequestEvent
from reviewbot.github.poster import Poster
from reviewbot.report import ReportInput
from reviewbot.report.fingerprint import fingerprint
from reviewbot.report.markup import inert, inline_code
from reviewbot.review.answer import EXPLAIN, MAX_ANSWER_CHARS, Ask

NOT_ALLOWED = ("Only people with write access to this repository can ask reviewbot to act. "
               "`/reviewbot help` lists the commands.")
NOT_IN_A_THREAD = ("`/reviewbot {name}` works in reply to one of reviewbot's comments on a "
                   "line of the diff.")


@dataclass
class Talk:
    """A command that needs the review or the config: `review` (post it), `explain` (answer
    with the finding of the comment it replies to), `ignore` (dismiss that finding)."""

    event: CommentEvent
    pull: PullRequestEvent
    poster: Poster
    command: Command
    # The reviewbot comment an `explain` or `ignore` replies to.
    root: Any | None = None


@dataclass(frozen=True)
class Answered:
    """The comment needed no review: answered, or nothing to do. `ok` is False when a write
    to GitHub failed."""

    ok: bool = True


def start(event: CommentEvent, env: Mapping[str, str], inline: Inline, notice: Notice,
          redact: Callable[[str], str]) -> Talk | Answered:
    comment = event.comment
    if event.action != "created":
        notice(f"a comment was {event.action}: reviewbot answers new comments only")
        return Answered()
    if not event.on_pull_request:
        notice("the comment is on an issue, not a pull request: nothing to do")
        return Answered()
    if comment.user_type == "Bot":
        notice("the comment is a bot's: reviewbot never answers bots (itself included)")
        return Answered()
    command = parse(comment.body)
    if command is None and comment.kind == "review" and comment.in_reply_to is not None:
        command = Command(name="question", argument=comment.body)
    if command is None:
        notice("the comment holds no /reviewbot command: nothing to do")
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
    poster = new_poster(event.pull or placeholder, token, inline, notice, redact,
                        bot_login_of(env))
    found = guarded(notice, "answering the comment",
                    lambda: _triage(event, command, poster, env, notice), elsewhere="")
    if found is FAILED:
        return Answered(ok=False)
    if isinstance(found, Talk | Answered):
        return found
    return Answered()  # the token may not write here: said by `guarded`


def _triage(event: CommentEvent, command: Command, poster: Poster,
            env: Mapping[str, str], notice: Notice) -> Talk | Answered:
    comment = event.comment
    pull = poster.pull_event(env, event.event_name)
    if poster.wrote(comment):
        notice("the comment is reviewbot's own: reviewbot never answers itself")
        return Answered()
    question = command.name == "question"
    if not poster.may_command(comment):
        if question:  # a reply in a thread is not a command: no refusal either
            notice("a reply by someone without write access: not answered")
        else:
            poster.reply(comment, NOT_ALLOWED)
        return Answered()
    if command.name == "unknown":
        poster.reply(comment, f"reviewbot has no command {inline_code(command.word)}.\n\n"
                              f"{HELP}")
        return Answered()
    if command.name == "help":
        poster.reply(comment, HELP)
        return Answered()
    root = poster.thread_root(comment) if command.name in THREAD_COMMANDS else None
    if command.name in THREAD_COMMANDS and root is None:
        if question:
            notice("a reply in a thread reviewbot did not start: nothing to do")
        else:
            poster.reply(comment, NOT_IN_A_THREAD.format(name=command.name))
        return Answered()
    return Talk(event=event, pull=pull, poster=poster, command=command, root=root)


def dismiss(talk: Talk, threshold: int, notice: Notice) -> bool:
    """Answer `/reviewbot ignore`: the finding's comment marked dismissed, and, when its rule
    has now been dismissed in this kind of place on `threshold` pull requests, the
    `.reviewbot.toml` lines that would stop it there (False: a write failed)."""
    def answer() -> str:
        comment, root = talk.event.comment, talk.root
        assert root is not None  # noqa: S101 (start found the thread's root)
        if not talk.poster.dismiss(root, comment.login, talk.command.argument):
            return talk.poster.reply(comment, "This finding was already dismissed.")
        text = "Dismissed: reviewbot will not post this finding again on this pull request."
        match = finding_marker(root.body)
        rule = match.group("rule") if match else None
        if rule and threshold > 0:
            found = proposal(talk.poster.repository_dismissals(), rule, root.path, threshold)
            text += f"\n\n{found}" if found else ""
        return talk.poster.reply(comment, text)

    return guarded(notice, "answering the comment", answer, elsewhere="") is not FAILED


def confirm_review(talk: Talk, notice: Notice) -> bool:
    """Answer `/reviewbot review` once the review is posted (False: the answer failed)."""
    def answer() -> str:
        where = talk.poster.summary_url()
        text = (f"Reviewed `{talk.pull.head_sha[:12]}`, the whole pull request: "
                + (f"[the summary comment]({where}) is up to date." if where else
                   "the findings are in the job summary."))
        return talk.poster.reply(talk.event.comment, text)

    return guarded(notice, "answering the comment", answer, elsewhere="") is not FAILED


def explain(talk: Talk, data: ReportInput, notice: Notice, ask: Ask | None = None) -> bool:
    """Answer `/reviewbot explain`, or a question, in its thread, about the finding the review
    reports under the replied-to comment's fingerprint: by the model when `ask` is given
    (there is one), else, for `explain`, from the rule (False: the answer failed)."""
    question = talk.command.name == "question"
    match = finding_marker(talk.root.body) if talk.root is not None else None
    wanted = match.group("fp") if match else ""
    finding = next((f for f in data.report.findings if fingerprint(data, f) == wanted), None)
    if finding is None:
        text: str | None = (f"reviewbot no longer reports this at `{talk.pull.head_sha[:12]}`:"
                            " the code changed, or the finding was fixed.")
    elif ask is not None:
        answered = ask(finding, talk.command.argument if question else EXPLAIN)
        text = _from_model(answered.text) if answered.text else None
        if text is None:
            notice(f"the model gave no answer ({answered.outcome})")
            text = None if question else explanation(finding, data)
    else:
        if question:
            notice("no model is configured: questions are not answered")
        text = None if question else explanation(finding, data)
    if text is None:
        return True
    answer_text = text
    return guarded(notice, "answering the comment",
                   lambda: talk.poster.reply(talk.event.comment, answer_text),
                   elsewhere="") is not FAILED


def _from_model(text: str) -> str:
    """A model's answer, as untrusted as any: clipped, inert, and said to be the model's."""
    return (f"{inert(text[:MAX_ANSWER_CHARS])}\n\n<sub>Answered by reviewbot's review model "
            "from the code it read; it can be wrong.</sub>")
