"""What someone asks of reviewbot in a pull request comment, read from untrusted text.

A command is a line of its own that starts with `/reviewbot` (the first such line counts):

    /reviewbot review            review the pull request as it stands, in full
    /reviewbot help              the commands
    /reviewbot explain           (in reply to a reviewbot comment) why it is a problem
    /reviewbot ignore [reason]   (in reply to a reviewbot comment) dismiss it on this pull
                                 request, with the reason

Anything else in the comment is prose for people. The words after a command are only ever a
reason shown back in a comment (clipped, made inert): never an instruction. A reply without a
command in a reviewbot comment's thread is a question for the model (fenced as data).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from reviewbot.lazy_re import lazy_re

# "question": not a command, a plain reply in a reviewbot comment's thread.
CommandName = Literal["review", "help", "explain", "ignore", "question", "unknown"]
# Commands that act on the reviewbot comment they reply to.
THREAD_COMMANDS = frozenset({"explain", "ignore", "question"})
MAX_REASON_CHARS = 500
_COMMAND = lazy_re(r"^[ \t]*/reviewbot(?:[ \t]+(?P<word>\S+))?(?:[ \t]+(?P<rest>.*))?$",
                      re.IGNORECASE | re.MULTILINE)
_NAMES: dict[str, CommandName] = {"review": "review", "help": "help", "explain": "explain",
                                  "why": "explain", "ignore": "ignore", "dismiss": "ignore"}


@dataclass(frozen=True)
class Command:
    name: CommandName
    # The words after the command (a dismissal's reason), clipped; "" when none.
    argument: str = ""
    # The word as written, for an unknown command's answer.
    word: str = ""


def parse(body: str) -> Command | None:
    """The comment's command, or None when it holds none."""
    match = _COMMAND.search(body)
    if match is None:
        return None
    word = (match.group("word") or "help").lower()
    rest = (match.group("rest") or "").strip()[:MAX_REASON_CHARS]
    return Command(name=_NAMES.get(word, "unknown"), argument=rest, word=word[:40])


HELP = """\
reviewbot answers these commands, each on a line of its own, from people with write access \
to this repository:

| command | where | what it does |
| --- | --- | --- |
| `/reviewbot review` | any comment on the pull request | reviews the pull request as it \
stands now, in full, and updates the summary comment |
| `/reviewbot explain` | a reply to a reviewbot comment | why the finding is a problem: the \
rule's reasoning, the code it is about, the fix |
| `/reviewbot ignore [reason]` | a reply to a reviewbot comment | dismisses the finding on \
this pull request: it is marked dismissed with your reason and never posted here again |
| `/reviewbot help` | any comment | this table |

A dismissal silences the comment, not the check: the repository's `.reviewbot.toml` (read \
at the base branch) still decides what fails it."""
