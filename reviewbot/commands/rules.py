"""`reviewbot rules`: every rule with its id, severity, category and rationale."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from reviewbot.errors import EXIT_CLEAN

if TYPE_CHECKING:
    pass


def rules(args: argparse.Namespace) -> int:
    from reviewbot.rules import RULES

    print(f"{'rule':34} {'severity':14} {'category':16} title")
    for rule in RULES.values():
        levels = rule.levels
        severity = levels[0] if len(levels) == 1 else f"{levels[0]}..{levels[-1]}"
        print(f"{rule.id:34} {severity:14} {rule.category:16} {rule.title}")
        print(f"{'':34} {rule.rationale}")
    print("\nA range: the finding says how sure or how bad (input from a request is an error, "
          "from a parameter a warning). In test code every rule reports one level lower, "
          "except a known token format (a real key in a test file is still a leaked key; "
          "one level lower in documentation); `[rules]` in the config re-levels a rule.")
    return EXIT_CLEAN
