"""The `reviewbot` console script. `reviewbot --version` answers before the command line's
imports (~0.1 s): a version check in a script
or a hook's install step should not pay for a review."""

from __future__ import annotations

import gc
import sys

from reviewbot import __version__

# A run lives seconds and builds syntax trees and records that hold no reference cycles
# (freed as soon as they are dropped): the cycle collector's default pace (every 700 new
# objects) spent 5% of a large change's time finding nothing.
GC_THRESHOLDS = (10_000, 10, 10)


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        print(f"reviewbot {__version__}")
        sys.exit(0)
    gc.set_threshold(*GC_THRESHOLDS)
    from reviewbot.cli import entry

    entry()
