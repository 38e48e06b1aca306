"""Files written whole: owner-only records, files renamed into place over a name the
reviewed change may have made a symlink, and files written only where none is. The one place
that decides how reviewbot writes a file, whichever stage or command asks."""

from __future__ import annotations

import os
from pathlib import Path


def write_private(target: Path, text: str) -> None:
    """Write a file only its owner can read."""
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)


def replace_file(path: Path, text: str) -> None:
    """Write a report file in the workspace, which is the reviewed change's checkout: a new
    file renamed over the name, so a report file the change commits as a symlink (to
    `.git/config`, to a file in the runner's home) is replaced, never written through."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.unlink(missing_ok=True)
    with temporary.open("x", encoding="utf-8") as out:
        out.write(text)
    temporary.replace(path)


def write_if_absent(target: Path, text: str) -> None:
    """Write a new file only where no file (or symlink) is: a committed `.gitignore` symlink
    is never followed out of the folder."""
    try:
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                             0o644)
    except FileExistsError:
        return
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
