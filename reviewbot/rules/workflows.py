"""GitHub Actions workflows: privileged triggers and expression injection."""

from __future__ import annotations

from collections.abc import Iterator

from reviewbot.code.whole_text import compile_whole_text
from reviewbot.lazy_re import lazy_re
from reviewbot.rules.base import MINIFIED_LINE_CHARS, FileChange, Hit, RuleBase, RuleInfo

# Triggers that run with the base repository's secrets and a write token whoever caused
# them: a pull request from a fork, a comment on one, the run a fork's pull request started.
_TRIGGER = lazy_re(r"\b(pull_request_target|workflow_run|issue_comment)\b")
# A checkout (or fetch) of the pull request's own code: by its head, its number's refs
# (`refs/pull/N/merge`, `pull/N/head`, with N written as an expression), `gh pr checkout`,
# its fork given as the repository to check out, or the head of the run a pull request
# started given to a checkout (not the same fields tested in an `if:`).
_PR_HEAD = lazy_re(
    r"github\.event\.pull_request\.(head\.(sha|ref)|merge_commit_sha)|github\.head_ref|"
    r"\bpull/(\$\{\{[^}]*\}\}|[^/\s]+)/(head|merge)\b|\bgh\s+pr\s+checkout\b|"
    r"\b(ref|repository)\s*:[^#]*github\.event\.(pull_request\.head\.repo\.full_name|"
    r"workflow_run\.(head_sha|head_branch|head_repository\.full_name))|"
    r"\bgit\s+(checkout|fetch|switch|reset)\b[^#]*github\.event\.workflow_run\.head_")
# Event fields an outside contributor writes.
_UNTRUSTED = lazy_re(
    r"\$\{\{\s*(github\.event\.(issue|pull_request|comment|review|review_comment|discussion|"
    r"head_commit|commits|pages)\b[\w.\[\]*]*\b(title|body|message|name|label|ref|email|"
    r"head_ref|default_branch)\b|github\.head_ref)[^}]*\}\}",
)
_UNTRUSTED_LONG = compile_whole_text(_UNTRUSTED.pattern)


def _untrusted(text: str) -> str | None:
    """The first untrusted expression on a line; a long line is searched by RE2 (linear in
    it: a workflow's line padded past the long-line limit is read too)."""
    if len(text) <= MINIFIED_LINE_CHARS:
        match = _UNTRUSTED.search(text)
        return match.group(0) if match else None
    encoded = text.encode("utf-8", "surrogatepass")
    found = _UNTRUSTED_LONG.search(encoded)
    return encoded[found.start():found.end()].decode("utf-8", "replace") if found else None


# `KEY: ${{ ... }}` maps the value into env/with, which is the safe way to pass it.
_MAPPING = lazy_re(r"^\s*-?\s*(?!run\b)[\w-]+\s*:\s*[\"']?\$\{\{")


class WorkflowRule(RuleBase, frozen=True):
    def applies_to(self, change: FileChange) -> bool:
        return "ci_workflow" in change.tags and change.language == "yaml" and bool(change.added)


class PullRequestTargetCheckout(WorkflowRule, frozen=True):
    def check(self, change: FileChange) -> Iterator[Hit]:
        text = change.new_text or ""
        if not _TRIGGER.search(text):
            return
        lines = text.splitlines()
        heads = [n for n, line in enumerate(lines, 1) if _PR_HEAD.search(line)]
        if not heads:
            return
        triggers = [n for n, line in enumerate(lines, 1) if _TRIGGER.search(line)]
        # Report where the change made it dangerous: the checkout line, else the trigger.
        added = [n for n in heads if n in change.added_by_line] or [
            n for n in triggers if n in change.added_by_line]
        for number in added:
            yield Hit(
                rule_id=self.id, line=number,
                message=("The workflow runs on a privileged trigger (pull_request_target, "
                         "issue_comment or workflow_run: with secrets and a write token) and "
                         "checks out the pull request's code, so a fork can run its own code "
                         "with those privileges."),
                suggestion=("Use the pull_request trigger for building PR code, or split into "
                            "an unprivileged build and a workflow_run job that uses its "
                            "artifacts."),
            )


class ExpressionInjection(WorkflowRule, frozen=True):
    def check(self, change: FileChange) -> Iterator[Hit]:
        for number, text in change.pattern_lines.items():
            expression = _untrusted(text)
            if expression and not _MAPPING.match(text):
                yield Hit(
                    rule_id=self.id, line=number,
                    message=(f"`{expression}` is expanded into the script before it runs; "
                             "a crafted title or branch name becomes shell code."),
                    suggestion="Pass it through env (`env: TITLE: ${{ ... }}`) and use "
                               "\"$TITLE\" in the script.",
                )


RULES = (
    PullRequestTargetCheckout(RuleInfo(
        id="gha.pull-request-target-checkout", title="pull_request_target runs PR code",
        severity="error", category="security",
        rationale="pull_request_target has secrets; checking out the PR head runs a fork's "
                  "code with them.")),
    ExpressionInjection(RuleInfo(
        id="gha.expression-injection", title="Untrusted event data in a script",
        severity="warning", category="security",
        rationale="${{ }} is substituted into run scripts before the shell parses them.")),
)
