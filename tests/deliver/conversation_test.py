"""The conversation's forge-neutral rules, on a forge kept in memory: who is answered, and
what a command needs before it is handed back. (The same through GitHub's events, with real
PyGithub, is in tests/github/conversation_test.py.)"""

from __future__ import annotations

from reviewbot.deliver.commands import HELP, Command
from reviewbot.deliver.conversation import (
    NOT_ALLOWED,
    Answered,
    Talk,
    confirm_review,
    dismiss,
    heard,
    triage,
)
from reviewbot.deliver.delivery import Delivery
from reviewbot.deliver.forge import ForgeComment
from tests.deliver.delivery_test import FINDING, MemoryForge

HELP_ME = Command(name="help")


def test_only_a_writer_is_answered_and_a_question_is_never_refused() -> None:
    """Only someone the forge says may write commands reviewbot: anyone else's command gets
    one refusal, and their plain reply in a thread (a question) gets nothing."""
    forge = MemoryForge()
    delivery = Delivery(forge)
    asked = forge._add("conversation", "/reviewbot help", author="mallory")
    assert triage(delivery, asked, HELP_ME, "f" * 40, print) == Answered()
    assert NOT_ALLOWED in forge.stored[-1].body
    root = forge._add("inline", FINDING)
    question = forge._add("inline", "why?", author="mallory", thread=root.id)
    writes = list(forge.writes)
    assert triage(delivery, question, Command(name="question", argument="why?"), "f" * 40,
                  print) == Answered()
    assert forge.writes == writes
    mine = forge._add("conversation", "/reviewbot help", author="maintainer")
    assert triage(delivery, mine, HELP_ME, "f" * 40, print) == Answered()
    assert HELP in forge.stored[-1].body


def test_reviewbots_own_comment_and_bots_are_not_answered() -> None:
    """reviewbot never answers itself (its login and marker) nor any bot account, whatever
    the comment says."""
    forge = MemoryForge()
    delivery = Delivery(forge)
    own = forge._add("conversation", "/reviewbot help\n\n<!-- reviewbot:reply to=1 -->")
    assert triage(delivery, own, HELP_ME, "f" * 40, print) == Answered()
    assert forge.writes == ["add 1"]
    said: list[str] = []
    assert heard(own, True, said.append) is None and "bot" in said[0]


def test_a_thread_command_is_handed_back_with_reviewbots_root() -> None:
    """`explain` in reply to reviewbot's finding comment comes back as a Talk that names
    the comment; a plain reply in that thread is a question."""
    forge = MemoryForge()
    delivery = Delivery(forge)
    root = forge._add("inline", FINDING)
    reply = forge._add("inline", "/reviewbot explain", author="maintainer", thread=root.id)
    command = heard(reply, False, print)
    assert command == Command(name="explain", word="explain")
    talk = triage(delivery, reply, command, "f" * 40, print)
    assert isinstance(talk, Talk) and talk.root == root
    plain = ForgeComment(id=50, kind="inline", author="maintainer", body="and then?",
                         thread=root.id)
    assert heard(plain, False, print) == Command(name="question", argument="and then?")


def test_the_answers_name_the_change_as_the_forge_does() -> None:
    """The answers to `ignore` and `review` call the change what the forge calls it (a
    merge request on GitLab)."""
    forge = MemoryForge()
    delivery = Delivery(forge)
    root = forge._add("inline", FINDING)
    asked = forge._add("inline", "/reviewbot ignore", author="maintainer", thread=root.id)
    talk = Talk(delivery=delivery, comment=asked, command=Command(name="ignore"),
                head_sha="f" * 40, root=root)
    dismiss(talk, threshold=0)
    confirm_review(talk)
    answers = [c.body for c in forge.stored if c.author == forge.login and c.id > asked.id]
    assert len(answers) == 1  # one answer per comment: the second finds the first
    assert "this merge request" in answers[0] and "pull request" not in answers[0]
    again = forge._add("conversation", "/reviewbot review", author="maintainer")
    confirm_review(Talk(delivery=delivery, comment=again, command=Command(name="review"),
                        head_sha="f" * 40))
    assert "the whole merge request" in forge.stored[-1].body
