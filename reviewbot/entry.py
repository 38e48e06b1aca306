"""The `reviewbot` console script. `reviewbot --version` answers before the command line's
imports (~0.1 s): a version check in a script
or a hook's install step should not pay for a review."""

from __future__ import annotations

import sys

from reviewbot import __version__


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        print(f"reviewbot {__version__}")
        sys.exit(0)
    from reviewbot.cli import entry

    entry()
