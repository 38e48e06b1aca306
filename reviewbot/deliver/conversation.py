"""Answer someone who talks to reviewbot on a change (a comment), whatever the forge.

Who may: people with write access to the repository (`Forge.may_write`); anyone else gets
one short answer and no action. Bots are never answered, and neither is a comment reviewbot
wrote, whatever the token (with a person's token reviewbot's comments are that person's:
they are known by reviewbot's login and marker, `Delivery.wrote`). A comment is untrusted
text: only its `/reviewbot` line is read (`commands.parse`), and whatever of it is shown
back (a reason, an unknown word) is inert; nothing in it reaches endpoints, keys, limits,
tools or exit codes.

`help` and a refusal are answered by `triage`. `review`, `explain` and `ignore` need the
review or the repository's config (read at the base): `triage` hands them back as a `Talk`,
and the command line answers them with `dismiss`, `confirm_review` and `explain` once it has
what they need. Every write raises delivery's errors (`reviewbot.deliver.forge`); the forge's
entry (`reviewbot/github/conversation.py`) says what a failure means to the run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from reviewbot.deliver.bodies import explanation, finding_marker
from reviewbot.deliver.commands import HELP, THREAD_COMMANDS, Command, parse
from reviewbot.deliver.delivery import Delivery
from reviewbot.deliver.dismissals import proposal
from reviewbot.deliver.forge import ForgeComment
from reviewbot.report import ReportInput
from reviewbot.report.fingerprint import fingerprint
from reviewbot.report.markup import inert, inline_code
from reviewbot.review.answer import EXPLAIN, MAX_ANSWER_CHARS, Ask

Notice = Callable[[str], None]
NOT_ALLOWED = ("Only people with write access to this repository can ask reviewbot to act. "
               "`/reviewbot help` lists the commands.")
NOT_IN_A_THREAD = ("`/reviewbot {name}` works in reply to one of reviewbot's comments on a "
                   "line of the diff.")


@dataclass(frozen=True)
class Talk:
    """A command that needs the review or the config: `review` (post it), `explain` (answer
    with the finding of the comment it replies to), `ignore` (dismiss that finding)."""

    delivery: Delivery
    comment: ForgeComment
    command: Command
    # The change's head as the forge describes it now: what the review is of.
    head_sha: str
    # The reviewbot comment an `explain` or `ignore` replies to.
    root: ForgeComment | None = None


@dataclass(frozen=True)
class Answered:
    """The comment needed no review: answered, or nothing to do. `ok` is False when a write
    to the forge failed."""

    ok: bool = True


def heard(comment: ForgeComment, by_bot: bool, notice: Notice) -> Command | None:
    """What a comment asks of reviewbot, read before anything is asked of the forge: None
    (said by a notice) when it is not for reviewbot. `by_bot`: the forge names its author a
    bot account."""
    if by_bot:
        notice("the comment is a bot's: reviewbot never answers bots (itself included)")
        return None
    command = parse(comment.body)
    if command is None and comment.kind == "inline" and comment.thread is not None:
        command = Command(name="question", argument=comment.body)
    if command is None:
        notice("the comment holds no /reviewbot command: nothing to do")
    return command


def triage(delivery: Delivery, comment: ForgeComment, command: Command, head_sha: str,
           notice: Notice) -> Talk | Answered:
    """Answer what needs no review (help, an unknown command, a refusal), or hand the
    command back as a `Talk`."""
    if delivery.wrote(comment):
        notice("the comment is reviewbot's own: reviewbot never answers itself")
        return Answered()
    question = command.name == "question"
    if not delivery.forge.may_write(comment.author):
        if question:  # a reply in a thread is not a command: no refusal either
            notice("a reply by someone without write access: not answered")
        else:
            delivery.reply(comment, NOT_ALLOWED)
        return Answered()
    if command.name == "unknown":
        delivery.reply(comment, f"reviewbot has no command {inline_code(command.word)}.\n\n"
                                f"{HELP}")
        return Answered()
    if command.name == "help":
        delivery.reply(comment, HELP)
        return Answered()
    root = delivery.thread_root(comment) if command.name in THREAD_COMMANDS else None
    if command.name in THREAD_COMMANDS and root is None:
        if question:
            notice("a reply in a thread reviewbot did not start: nothing to do")
        else:
            delivery.reply(comment, NOT_IN_A_THREAD.format(name=command.name))
        return Answered()
    return Talk(delivery=delivery, comment=comment, command=command, head_sha=head_sha,
                root=root)


def dismiss(talk: Talk, threshold: int) -> str:
    """Answer `/reviewbot ignore`: the finding's comment marked dismissed, and, when its rule
    has now been dismissed in this kind of place on `threshold` changes, the
    `.reviewbot.toml` lines that would stop it there. The answer's URL."""
    delivery, comment, root = talk.delivery, talk.comment, talk.root
    assert root is not None  # noqa: S101 (triage found the thread's root)
    if not delivery.dismiss(root, comment.author, talk.command.argument):
        return delivery.reply(comment, "This finding was already dismissed.")
    text = ("Dismissed: reviewbot will not post this finding again on this "
            f"{delivery.forge.change}.")
    match = finding_marker(root.body)
    rule = match.group("rule") if match else None
    if rule and threshold > 0:
        found = proposal(delivery.repository_dismissals(), rule, root.path or "", threshold)
        text += f"\n\n{found}" if found else ""
    return delivery.reply(comment, text)


def confirm_review(talk: Talk) -> str:
    """Answer `/reviewbot review` once the review is posted. The answer's URL."""
    where = talk.delivery.summary_url()
    text = (f"Reviewed `{talk.head_sha[:12]}`, the whole {talk.delivery.forge.change}: "
            + (f"[the summary comment]({where}) is up to date." if where else
               "the findings are in the job summary."))
    return talk.delivery.reply(talk.comment, text)


def explain(talk: Talk, data: ReportInput, notice: Notice, ask: Ask | None = None) -> str | None:
    """Answer `/reviewbot explain`, or a question, in its thread, about the finding the review
    reports under the replied-to comment's fingerprint: by the model when `ask` is given
    (there is one), else, for `explain`, from the rule. The answer's URL (None: nothing to
    answer, said by a notice)."""
    question = talk.command.name == "question"
    change = talk.delivery.forge.change
    match = finding_marker(talk.root.body) if talk.root is not None else None
    wanted = match.group("fp") if match else ""
    finding = next((f for f in data.report.findings if fingerprint(data, f) == wanted), None)
    if finding is None:
        text: str | None = (f"reviewbot no longer reports this at `{talk.head_sha[:12]}`:"
                            " the code changed, or the finding was fixed.")
    elif ask is not None:
        answered = ask(finding, talk.command.argument if question else EXPLAIN)
        text = _from_model(answered.text) if answered.text else None
        if text is None:
            notice(f"the model gave no answer ({answered.outcome})")
            text = None if question else explanation(finding, data, change=change)
    else:
        if question:
            notice("no model is configured: questions are not answered")
        text = None if question else explanation(finding, data, change=change)
    return talk.delivery.reply(talk.comment, text) if text is not None else None


def _from_model(text: str) -> str:
    """A model's answer, as untrusted as any: clipped, inert, and said to be the model's."""
    return (f"{inert(text[:MAX_ANSWER_CHARS])}\n\n<sub>Answered by reviewbot's review model "
            "from the code it read; it can be wrong.</sub>")
