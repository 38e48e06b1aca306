"""Which events start a GitHub workflow, and which of the event's fields each one fills.

zizmor reads a workflow's expressions whatever starts it: `${{ github.event.issue.title }}` in
a `run:` is template injection in a workflow that only `workflow_dispatch` starts, where the
field is always empty. A change that adds the `issues:` trigger makes that latent injection
reachable by anyone who can open an issue: the finding is the change's, though the line and
zizmor's finding are the base's. This module answers that question for rules/scanners.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from reviewbot.lazy_re import lazy_re

# The fields of `github.event` (and the contexts) each event fills with what its sender wrote.
# An event not listed fills none an outsider controls.
_FILLS: dict[str, frozenset[str]] = {
    "issues": frozenset({"issue"}),
    "issue_comment": frozenset({"issue", "comment"}),
    "pull_request": frozenset({"pull_request", "head_ref"}),
    "pull_request_target": frozenset({"pull_request", "head_ref"}),
    "pull_request_review": frozenset({"pull_request", "review", "head_ref"}),
    "pull_request_review_comment": frozenset({"pull_request", "comment", "head_ref"}),
    "discussion": frozenset({"discussion"}),
    "discussion_comment": frozenset({"discussion", "comment"}),
    "push": frozenset({"head_commit", "commits", "pusher"}),
    "commit_comment": frozenset({"comment"}),
    "gollum": frozenset({"pages"}),
    "workflow_run": frozenset({"workflow_run"}),
    "release": frozenset({"release"}),
    "workflow_dispatch": frozenset({"inputs"}),
    "repository_dispatch": frozenset({"client_payload"}),
    "merge_group": frozenset({"merge_group"}),
}
_FIELD = lazy_re(r"\bgithub\.event\.(?P<field>\w+)|\bgithub\.(?P<head_ref>head_ref)\b")


def triggers(text: str | None) -> frozenset[str] | None:
    """The events that start the workflow (`on:` as a name, a list or a mapping); None when
    the text is not a workflow that can be read."""
    if text is None:
        return None
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict):
        return None
    # YAML 1.1 reads a bare `on` key as true.
    on: Any = data.get("on", data.get(True))
    if isinstance(on, str):
        return frozenset({on})
    if isinstance(on, list):
        return frozenset(str(event) for event in on)
    if isinstance(on, dict):
        return frozenset(str(event) for event in on)
    return None


def fields(text: str) -> frozenset[str]:
    """The event fields an expression text reads (`issue` of `github.event.issue.title`,
    `head_ref` of `github.head_ref`)."""
    return frozenset(match.group("field") or match.group("head_ref")
                     for match in _FIELD.finditer(text))


def filled(events: Iterable[str]) -> frozenset[str]:
    return frozenset(field for event in events for field in _FILLS.get(event, ()))


def made_reachable(old: str | None, new: str | None, expression: str) -> bool:
    """Whether the change's triggers make an expression's event fields filled that none of
    the base's triggers filled: what was latent at the base is reachable now."""
    read = fields(expression)
    before, after = triggers(old), triggers(new)
    if not read or before is None or after is None:
        return False
    now = read & filled(after)
    return bool(now) and not read & filled(before)
