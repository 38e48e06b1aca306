"""Rule tests run the real engine on a unified diff built in memory."""

from __future__ import annotations

import difflib

from reviewbot.config import Config
from reviewbot.diff import parse_units
from reviewbot.rules import run_rules
from reviewbot.schema import Finding, RulesResult


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


def review(path: str, new: str, old: str | None = None,
           config: Config | None = None) -> RulesResult:
    units = parse_units(make_diff(path, new, old))
    return run_rules(units, lambda p: new if p == path else None, config or Config())


def findings(path: str, new: str, old: str | None = None,
             config: Config | None = None) -> list[Finding]:
    return list(review(path, new, old, config).findings)


def hits(path: str, new: str, old: str | None = None) -> set[tuple[str, str]]:
    """(rule_id, severity) of every finding."""
    return {(f.rule_id, f.severity) for f in findings(path, new, old)}
