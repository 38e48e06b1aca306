"""Rule tests run the real engine on a unified diff built in memory."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from reviewbot.config import Config
from reviewbot.diff.parse import parse_units
from reviewbot.rules import run_rules
from reviewbot.schema.findings import Finding, RulesResult


def make_diff(path: str, new: str, old: str | None = None) -> bytes:
    if old is None:
        lines = new.splitlines(keepends=True)
        body = "".join(f"+{line}" if line.endswith("\n") else f"+{line}\n" for line in lines)
        header = (f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n"
                  f"+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n")
        return (header + body).encode()
    hunks = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 f"a/{path}", f"b/{path}", n=3)
    return (f"diff --git a/{path} b/{path}\n" + "".join(hunks)).encode()


class Base:
    """The base of a change, as far as the rules ask about it: which folders and files it
    has (`everything`: a repository that already has every folder a name could mean)."""

    def __init__(self, *paths: str, everything: bool = False) -> None:
        self.paths = frozenset(paths)
        self.everything = everything

    def readable_files(self) -> frozenset[str]:
        return frozenset()

    def rules_texts(self, paths: Sequence[str]) -> dict[str, str | None]:
        return dict.fromkeys(paths)

    def base_paths(self, paths: Sequence[str]) -> frozenset[str]:
        return frozenset(p for p in paths if self.everything or p in self.paths)


def review(path: str, new: str, old: str | None = None,
           config: Config | None = None, base: Base | None = None) -> RulesResult:
    units = parse_units(make_diff(path, new, old))
    return run_rules(units, lambda p: new if p == path else None, config or Config(),
                     project=base, read_old=lambda p: old if p == path else None)


def findings(path: str, new: str, old: str | None = None,
             config: Config | None = None, base: Base | None = None) -> list[Finding]:
    return list(review(path, new, old, config, base).findings)


def hits(path: str, new: str, old: str | None = None,
         base: Base | None = None) -> set[tuple[str, str]]:
    """(rule_id, severity) of every finding."""
    return {(f.rule_id, f.severity) for f in findings(path, new, old, base=base)}
