"""Repeated dismissals as evidence about a repository: when people with write access have
dismissed the same rule in the same kind of place on enough pull requests, reviewbot proposes
the `.reviewbot.toml` lines that would stop it there. It only proposes: the repository's
config, read at the base branch, stays the one place that decides, and a person commits it.

The dismissals are read from reviewbot's own comments across the repository's pull requests
(each one marked `;dismissed` with its rule): no other store, and nothing a pull request's
author can write.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from reviewbot.lazy_re import lazy_re

# Most recently updated review comments read to count them.
MAX_COMMENTS_READ = 1000
# What a proposed glob may hold: a file name from a pull request is untrusted text.
_SAFE = lazy_re(r"[A-Za-z0-9_.*/+-]{1,200}")


@dataclass(frozen=True)
class Dismissal:
    rule_id: str
    path: str
    pull: int


def place_of(path: str) -> str:
    """The kind of place a file is, as a `[[path_rules]]` glob: its top folder, or, for a
    file at the top level, its extension."""
    parts = PurePosixPath(path).parts
    if len(parts) > 1:
        return f"{parts[0]}/*"
    suffix = PurePosixPath(path).suffix
    return f"*{suffix}" if suffix else path


def proposal(dismissals: Iterable[Dismissal], rule_id: str, path: str,
             threshold: int) -> str | None:
    """The proposal for this rule in this file's place, once dismissed on `threshold` pull
    requests or more; None before, or when proposals are off (0)."""
    place = place_of(path)
    pulls = sorted({d.pull for d in dismissals
                    if d.rule_id == rule_id and place_of(d.path) == place})
    if threshold <= 0 or len(pulls) < threshold or not _SAFE.fullmatch(place):
        return None  # a file name that would need quoting in a comment is not proposed
    where = ", ".join(f"#{n}" for n in pulls[-10:])
    if rule_id.startswith("model."):
        setting = ("[[path_instructions]]\n"
                   f"path = {json.dumps(place)}\n"
                   f"instructions = {json.dumps(_instruction(rule_id))}")
        what = "To tell the review model, add to `.reviewbot.toml`"
    else:
        setting = ("[[path_rules]]\n"
                   f"path = {json.dumps(place)}\n"
                   f"rules = {{ {json.dumps(rule_id)} = \"off\" }}")
        what = ('To stop it there, add to `.reviewbot.toml` (or use "info" instead of "off" '
                "to keep it as a note)")
    return (f"`{rule_id}` has now been dismissed in `{place}` on {len(pulls)} pull requests "
            f"({where}). {what}:\n\n```toml\n{setting}\n```\n\nNothing changes until "
            "someone commits it; the file is read at the base branch.")


def _instruction(rule_id: str) -> str:
    category = rule_id.removeprefix("model.")
    return (f"Findings of the category {category!r} here have been dismissed repeatedly: "
            "report one only when it is clearly a defect.")
