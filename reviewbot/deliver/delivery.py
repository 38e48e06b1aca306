"""A run's findings delivered to a change on a forge, through `Forge` only (no forge SDK here).

- One inline comment per new finding at the inline level or above (warning by default: the
  workflow's choice), at most `max_comments` a run, on the finding's new-side lines, and one
  summary comment (counts, coverage, every finding that could not go on a line, with the
  reason, and the findings below the inline level, collapsed). A finding below the level
  that an earlier run posted inline (a lower level then) keeps its comment: it is neither
  posted again nor resolved while it stands.
- Idempotent: every body ends with a hidden marker (`reviewbot.deliver.bodies`), and a marker
  counts only on a comment whose author is the forge's `login`: no other account, bot or not,
  is ever taken for reviewbot. A re-run posts only new findings, edits its summary in place,
  and resolves an earlier comment only when its finding is gone from the change as it now
  stands (wherever the finding is reported this time). A dismissed finding (marked so, or
  its thread resolved by a person on a forge that resolves threads) is never posted again,
  and its thread is left as it is. An answer to a comment is written once even when two
  runs of the same event answer at once: the later one deletes its own.
- Every body goes through the redaction pass before it is written, its marker (reviewbot's
  own last line) as written.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from reviewbot.deliver.bodies import (
    Placed,
    SummaryFacts,
    dismissed_body,
    finding_body,
    finding_marker,
    marked,
    reply_body,
    reply_marker,
    resolved_body,
    summary_body,
    summary_marker,
)
from reviewbot.deliver.dismissals import Dismissal
from reviewbot.deliver.forge import Forge, ForgeComment, Gone, InlineComment
from reviewbot.levels import SEVERITY_RANK, Severity
from reviewbot.report import ReportInput
from reviewbot.report.fingerprint import fingerprint
from reviewbot.schema.findings import Finding


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
    # Who resolved reviewbot's threads of standing findings (a forge where resolving is the
    # dismissal: the change's own author may).
    dismissed_by: set[str] = field(default_factory=set)
    elsewhere: list[Placed] = field(default_factory=list)
    # Below the inline level: in the summary only (with a reason when not on a line either).
    below_level: list[Placed] = field(default_factory=list)
    summary_url: str | None = None


@dataclass(frozen=True)
class Comment:
    """A finding's inline comment, before it is posted."""

    finding: Finding
    fingerprint: str
    body: str

    def inline(self) -> InlineComment:
        f = self.finding
        return InlineComment(path=f.file_path, start=f.start_line, end=f.end_line,
                             body=self.body, base_line=f.base_line)


@dataclass
class Delivery:
    forge: Forge
    inline: Inline = Inline()
    redact: Callable[[str], str] = lambda text: text

    def post(self, data: ReportInput, head_sha: str, notes: Sequence[str] = ()) -> PostResult:
        """Post the inline comments and the summary for the change as it now stands."""
        lines = self.forge.lines()
        # Asked only when a finding sits on a removed line (a deleted guard).
        removed = (self.forge.removed_lines()
                   if any(f.base_line is not None for f in data.report.findings) else {})
        result = PostResult()
        placed: list[tuple[Finding, str]] = []
        elsewhere: list[Placed] = []
        for finding in sorted(data.report.findings, key=importance):
            if reason := self._not_on_a_line(finding, lines, removed):
                (elsewhere if self.inline.takes(finding) else result.below_level).append(
                    Placed(finding, reason))
            else:
                placed.append((finding, fingerprint(data, finding)))
        # Read right before writing: another run may have posted since this one began.
        ours, dismissed = self._our_finding_comments()
        fresh = self._fresh(placed, ours, dismissed, result, elsewhere)
        result.posted, refused = self._post_inline(fresh)
        elsewhere += refused
        result.elsewhere = sorted(elsewhere, key=lambda p: importance(p.finding))
        result.below_level.sort(key=lambda p: importance(p.finding))
        # Every finding of the change as it stands keeps its comment, wherever it is reported
        # this time.
        current = {mark for _, mark in placed} | {
            fingerprint(data, p.finding) for p in [*elsewhere, *result.below_level]}
        result.resolved = self._resolve(ours, current, head_sha)
        facts = SummaryFacts(head_sha=head_sha, change=self.forge.change,
                             posted=result.posted,
                             already_posted=result.already_posted, resolved=result.resolved,
                             elsewhere=result.elsewhere, notes=notes,
                             dismissed=result.dismissed,
                             dismissed_by=sorted(result.dismissed_by),
                             below_level=result.below_level,
                             inline_level=self.inline.level, reports=self.forge.reports,
                             files_listed=self.forge.files_listed)
        result.summary_url = self._write_summary(
            self.sealed(summary_body(data, facts, self.forge.max_body)))
        return result

    def _not_on_a_line(self, finding: Finding, positions: Mapping[str, set[int]],
                       removed: Mapping[str, set[int]] | None = None) -> str | None:
        if not finding.in_diff:
            return "outside the changed lines"
        if finding.base_line is not None:
            if finding.base_line in (removed or {}).get(finding.file_path, set()):
                return None
            return f"its removed line is not in the {self.forge.change}'s diff"
        lines = positions.get(finding.file_path)
        if lines is None:
            return f"the file is not in the {self.forge.change}'s diff"
        if not lines:
            return f"{self.forge.name} shows no diff for this file (binary or too large)"
        if not all(n in lines for n in range(finding.start_line, finding.end_line + 1)):
            return f"its lines are not all in the {self.forge.change}'s diff"
        return None

    def _fresh(self, placed: list[tuple[Finding, str]], ours: Mapping[str, ForgeComment],
               dismissed: Mapping[str, str], result: PostResult,
               elsewhere: list[Placed]) -> list[Comment]:
        """The comments to post: the findings at the inline level that have none yet, up to
        max_comments (the rest go to `elsewhere`; those below the level, to the result's
        `below_level`). A finding that already has a comment keeps it, whatever its level."""
        fresh: list[Comment] = []
        limit = self.inline.max_comments
        for finding, mark in placed:
            if mark in dismissed:
                result.dismissed += 1
                result.dismissed_by.update(filter(None, [dismissed[mark]]))
            elif mark in ours:
                result.already_posted += 1
            elif not self.inline.takes(finding):
                result.below_level.append(Placed(finding, ""))
            elif len(fresh) >= limit:
                elsewhere.append(Placed(finding, f"over the {limit} comments of a review"))
            else:
                fresh.append(Comment(finding, mark, self.sealed(finding_body(
                    finding, mark, limit=self.forge.max_body,
                    fence=self.forge.suggestion_fence))))
        return fresh

    def _post_inline(self, comments: list[Comment]) -> tuple[int, list[Placed]]:
        """(how many were posted, the ones the forge refused on their lines, placed)."""
        if not comments:
            return 0, []
        pairs = [(comment, comment.inline()) for comment in comments]
        refused = self.forge.post_inline([inline for _, inline in pairs])
        placed = [Placed(comment.finding, r.reason)
                  for comment, inline in pairs for r in refused if r.comment is inline]
        return len(comments) - len(placed), placed

    def sealed(self, body: str) -> str:
        """A body through the redaction pass, its marker (the last line, reviewbot's own
        text) as written: a value the rules found in the change (a password that reads
        `reviewbot`, a file name holding a key's header) must not erase reviewbot's memory."""
        head, newline, last = body.rpartition("\n")
        if newline and marked(last):
            return f"{self.redact(head)}\n{last}"
        return self.redact(body)

    # --- earlier comments and the summary ----------------------------------------------

    def _ours(self, comment: ForgeComment) -> bool:
        """By login only: an account's type says nothing (any App is a bot)."""
        return comment.author == self.forge.login

    def wrote(self, comment: ForgeComment) -> bool:
        """Whether reviewbot wrote this comment: its author is reviewbot's login and it ends
        with one of reviewbot's markers (with a person's token, the same person's own
        comments are theirs)."""
        return self._ours(comment) and marked(comment.body)

    def _our_finding_comments(self) -> tuple[dict[str, ForgeComment], dict[str, str]]:
        """fingerprint -> reviewbot's open (not resolved, not dismissed) finding comment, and
        fingerprint -> who dismissed it on this change ("" when the forge does not say)."""
        ours: dict[str, ForgeComment] = {}
        dismissed: dict[str, str] = {}
        for comment in self.forge.comments("inline"):
            match = finding_marker(comment.body)
            if not (match and self._ours(comment)):
                continue
            # A thread resolved while reviewbot still reports its finding: a person resolved
            # it (reviewbot resolves only what is gone, and marks it so): a dismissal.
            if match.group("state") == ";dismissed" or (
                    match.group("state") is None and comment.resolved):
                dismissed.setdefault(match.group("fp"), comment.resolved_by)
            elif match.group("state") is None:
                ours.setdefault(match.group("fp"), comment)
        return {fp: c for fp, c in ours.items() if fp not in dismissed}, dismissed

    def _resolve(self, ours: Mapping[str, ForgeComment], current: set[str],
                 head_sha: str) -> int:
        """Resolve the comments whose finding is gone from the change as it stands."""
        gone = [c for fp, c in ours.items() if fp not in current]
        for comment in gone:
            self.forge.resolve(comment, self.sealed(resolved_body(comment.body, head_sha)))
        return len(gone)

    def _summary_comment(self) -> ForgeComment | None:
        return next((c for c in self.forge.comments("conversation")
                     if summary_marker(c.body) and self._ours(c)), None)

    def _write_summary(self, body: str) -> str:
        existing = self._summary_comment()
        if existing is not None:
            self.forge.edit(existing, body)
            return existing.url
        return self.forge.post(body).url

    def summary_url(self) -> str | None:
        found = self._summary_comment()
        return found.url if found is not None else None

    # --- conversation ------------------------------------------------------------------

    def thread_root(self, comment: ForgeComment) -> ForgeComment | None:
        """The reviewbot finding comment an inline comment replies to, if it is one."""
        if comment.kind != "inline" or comment.thread is None:
            return None
        root = next((c for c in self.forge.comments("inline") if c.id == comment.thread), None)
        if root is None or not self._ours(root) or finding_marker(root.body) is None:
            return None
        return root

    def dismiss(self, root: ForgeComment, login: str, reason: str) -> bool:
        """Mark a finding's comment dismissed (False: it already was)."""
        match = finding_marker(root.body)
        if match is None or match.group("state") == ";dismissed":
            return False
        self.forge.edit(root, self.sealed(dismissed_body(root.body, login, reason,
                                                     change=self.forge.change)))
        return True

    def repository_dismissals(self) -> list[Dismissal]:
        """reviewbot's dismissed comments across the repository's changes (the most recently
        updated, as far as the forge lists them)."""
        found: list[Dismissal] = []
        for comment in self.forge.comments("repository"):
            match = finding_marker(comment.body)
            if not (match and match.group("state") == ";dismissed" and match.group("rule")
                    and self._ours(comment)):
                continue
            if comment.change is not None:
                found.append(Dismissal(match.group("rule"), comment.path or "", comment.change))
        return found

    def reply(self, comment: ForgeComment, text: str) -> str:
        """Answer a comment (in its thread for an inline comment), once: a re-run of the same
        event finds the answer already there, and of two runs answering at once, the later
        answer is deleted again. Its URL."""
        # Redacted, then clipped (what the forge counts), then marked: the marker stays the
        # last line, and no value the pass masks can touch it.
        body = reply_body(self.redact(text)[:self.forge.max_body - 100], comment.id)
        found = self._reply_to(comment)
        if found is not None:
            return found.url
        return self._only_answer(comment, self.forge.reply(comment, body))

    def _only_answer(self, comment: ForgeComment, created: ForgeComment) -> str:
        """The URL of the comment's first answer; `created` is deleted when another run's
        answer came first (ids grow with time, so of two runs, only the later deletes)."""
        first = self._reply_to(comment)
        if first is None or first.id == created.id:
            return created.url
        with contextlib.suppress(Gone):  # already gone (a retried delete)
            self.forge.delete(created)
        return first.url

    def _reply_to(self, comment: ForgeComment) -> ForgeComment | None:
        """reviewbot's first answer to the comment, if there is one."""
        answers = [c for c in self.forge.comments(comment.kind)
                   if reply_marker(c.body) == comment.id and self._ours(c)]
        return min(answers, key=lambda c: c.id, default=None)


def importance(finding: Finding) -> tuple[int, str, int]:
    return (-SEVERITY_RANK[finding.severity], finding.file_path, finding.start_line)
