"""Delivery's forge-neutral rules, on a forge kept in memory: who reviewbot is, one answer per
comment, dismissals. (Delivery through GitHub, with real PyGithub, is in tests/github.)"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from reviewbot.deliver.bodies import finding_marker
from reviewbot.deliver.delivery import Delivery
from reviewbot.deliver.forge import (
    CommentKind,
    ForgeComment,
    Gone,
    InlineComment,
    LineRefused,
)
from reviewbot.schema.findings import Finding

BOT = "reviewbot[bot]"
FINDING = ("🟠 **warning** t (`python.eval-exec`)\n\n"
           "<!-- reviewbot:fp=ab12 rule=python.eval-exec -->")


@dataclass
class MemoryForge:
    """A forge whose comments are a list; writes are recorded."""

    login: str = BOT
    name: str = "Memory"
    change: str = "merge request"
    max_body: int = 65_536
    reports: str = "the log"
    files_listed: str = ""
    stored: list[ForgeComment] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)

    def may_write(self, login: str) -> bool:
        return login == "maintainer"

    def suggestion_fence(self, lines: int) -> str:
        return "suggestion"

    def lines(self) -> Mapping[str, set[int]]:
        return {}

    def removed_lines(self) -> Mapping[str, set[int]]:
        return {}

    def comments(self, kind: CommentKind) -> list[ForgeComment]:
        wanted = "inline" if kind == "repository" else kind
        return [c for c in self.stored if c.kind == wanted]

    def post_inline(self, comments: Sequence[InlineComment]) -> list[LineRefused]:
        for comment in comments:
            self._add("inline", comment.body)
        return []

    def post(self, body: str) -> ForgeComment:
        return self._add("conversation", body)

    def reply(self, comment: ForgeComment, body: str) -> ForgeComment:
        return self._add(comment.kind, body, thread=comment.thread or comment.id)

    def edit(self, comment: ForgeComment, body: str) -> None:
        self.writes.append(f"edit {comment.id}")
        self.stored = [replace(c, body=body) if c.id == comment.id else c for c in self.stored]

    def delete(self, comment: ForgeComment) -> None:
        if all(c.id != comment.id for c in self.stored):
            raise Gone(f"no comment {comment.id}")
        self.writes.append(f"delete {comment.id}")
        self.stored = [c for c in self.stored if c.id != comment.id]

    def resolve(self, comment: ForgeComment, body: str) -> None:
        self.edit(comment, body)

    def _add(self, kind: str, body: str, author: str = BOT,
             thread: int | None = None) -> ForgeComment:
        made = ForgeComment(id=len(self.stored) + 1, kind="inline" if kind == "inline"
                            else "conversation", author=author, body=body,
                            url=f"memory://{len(self.stored) + 1}", path="app/run.py",
                            thread=thread, change=7)
        self.stored.append(made)
        self.writes.append(f"add {made.id}")
        return made


def test_the_delivery_package_imports_no_forge_sdk() -> None:
    """Delivery is forge-neutral: importing every module of reviewbot.deliver loads neither
    PyGithub nor python-gitlab (a forge's SDK belongs to its adapter)."""
    code = ("import sys, pkgutil, importlib, reviewbot.deliver as d\n"
            "sys.modules['github'] = None; sys.modules['gitlab'] = None\n"
            "names = [m.name for m in pkgutil.iter_modules(d.__path__)]\n"
            "assert {'forge', 'delivery', 'bodies'} <= set(names), names\n"
            "for name in names: importlib.import_module('reviewbot.deliver.' + name)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr


def test_a_thread_someone_else_started_has_no_reviewbot_root() -> None:
    """A finding's marker counts only on a comment reviewbot's login wrote: a person who
    copies one into their own comment cannot have it explained or dismissed."""
    forge = MemoryForge()
    ours = forge._add("inline", FINDING)
    theirs = forge._add("inline", FINDING, author="mallory")
    delivery = Delivery(forge)
    asked = ForgeComment(id=99, kind="inline", author="maintainer", body="why?",
                         thread=theirs.id)
    assert delivery.thread_root(asked) is None
    assert delivery.thread_root(replace(asked, thread=ours.id)) == ours


def test_an_answer_is_written_once_and_a_later_duplicate_is_deleted() -> None:
    """One answer per comment: a re-run finds its answer, and of two answers the later one
    is deleted again."""
    forge = MemoryForge()
    asked = forge._add("conversation", "/reviewbot help", author="maintainer")
    delivery = Delivery(forge)
    first = delivery.reply(asked, "the help")
    assert delivery.reply(asked, "the help") == first
    assert forge.writes == ["add 1", "add 2"]
    forge.stored.append(replace(forge.stored[-1], id=10, url="memory://10"))  # another run's
    assert delivery._only_answer(asked, forge.stored[-1]) == first
    assert forge.writes[-1] == "delete 10"


def test_a_dismissal_is_marked_once_and_counted_across_changes() -> None:
    """A dismissal lives in reviewbot's own comment: marked once, with who and why, and read
    back (by rule, path and change) only from comments reviewbot's login wrote."""
    forge = MemoryForge()
    root = forge._add("inline", FINDING)
    forge._add("inline", FINDING.replace("rule=", ";dismissed rule="), author="mallory")
    delivery = Delivery(forge, redact=lambda text: text.replace("secret", "[redacted]"))
    assert delivery.dismiss(root, "maintainer", "a fixture, no secret")
    dismissed = forge.stored[0]
    match = finding_marker(dismissed.body)
    assert match is not None and match["state"] == ";dismissed"
    assert "[redacted]" in dismissed.body and "`@maintainer`" in dismissed.body
    assert not delivery.dismiss(dismissed, "maintainer", "again")
    [counted] = delivery.repository_dismissals()
    assert (counted.rule_id, counted.path, counted.pull) == ("python.eval-exec", "app/run.py", 7)


def test_the_text_delivery_writes_names_the_change_as_the_forge_does() -> None:
    """Delivery's texts call the change what the forge calls it (a merge request on
    GitLab): a reason a finding is not on a line, a dismissal."""
    forge = MemoryForge()
    delivery = Delivery(forge)
    finding = Finding(file_path="app/run.py", start_line=5, end_line=5, severity="warning",
                      category="bug", rule_id="python.eval-exec", title="t", message="m",
                      source="rule")
    texts = [delivery._not_on_a_line(finding, {}) or "",
             delivery._not_on_a_line(finding, {"app/run.py": {4}}) or ""]
    root = forge._add("inline", FINDING)
    assert delivery.dismiss(root, "maintainer", "a fixture")
    texts.append(forge.stored[0].body)
    assert all("merge request" in text and "pull request" not in text for text in texts), texts
