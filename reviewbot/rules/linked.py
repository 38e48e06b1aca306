"""A file that a symlink the change adds (or retargets) leads to, reviewed as what the link
makes it: code in the link's language, every line of it new (diff/languages.py found the
links). `import app.helpers` runs `data/helpers.txt` once `app/helpers.py` leads there, so its
whole content is new Python, whatever the diff shows of the file itself.

Its findings name the file and its lines (where the code is), are outside the diff's lines
unless the diff adds them, and say which link makes it code. The file takes the kind of the
link's name (a new link is no vendored file, wherever it leads).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial

from reviewbot.code.path_kinds import path_tags
from reviewbot.rules.base import FileChange
from reviewbot.rules.quieting import QUIETING_TAGS, FileKind
from reviewbot.schema.findings import Finding
from reviewbot.schema.units import DiffLine, Hunk, Link, ReviewUnit

LINKED = "linked_by_change"


def linked_changes(links: Iterable[Link], units: Sequence[ReviewUnit],
                   read_new: Callable[[str], str | None], kinds: Mapping[str, FileKind],
                   make: Callable[..., FileChange], notes: list[str],
                   ignored: Callable[[str], bool] = lambda path: False) -> list[FileChange]:
    """A FileChange for each file a link the change adds leads to, but for the lines its
    own units already review in that language and kind (`ignored`: whether the config
    ignores a path); a file that cannot be read is said in `notes`."""
    new_files = {u.file_path for u in units if u.patch_type == "add"}
    added: dict[str, set[int]] = {}
    language = {u.file_path: u.language for u in units}
    for unit in units:
        if unit.hunk is not None:
            added.setdefault(unit.file_path, set()).update(
                line.new_lineno for line in unit.hunk.added() if line.new_lineno)
    changes = []
    for link in links:
        if link.unit_id is None:
            continue
        text = read_new(link.target)
        if text is None:
            notes.append(f"{link.path} is a symlink the change adds to {link.target}, which "
                         f"cannot be read as a file: it is not reviewed as {link.language}")
            continue
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        # Lines the file's own units already review in this language, as plain code (its kind
        # quietens nothing: a new file under `vendor/` is not what the link makes it), are
        # context here.
        kind = kinds.get(link.path, FileKind())
        plain = not (kinds.get(link.target, FileKind()).tags & QUIETING_TAGS
                     or ignored(link.target))
        reviewed = (added.get(link.target, set())
                    if language.get(link.target) == link.language and plain else set())
        if len(reviewed) == len(lines) and link.target in new_files:
            continue  # every line is reviewed already, as this language
        hunk = Hunk(header=f"@@ -0,0 +1,{len(lines)} @@", old_start=0, old_length=0,
                    new_start=1, new_length=len(lines), lines=tuple(
                        DiffLine(kind="ctx" if number in reviewed else "add", text=line,
                                 new_lineno=number)
                        for number, line in enumerate(lines, 1)))
        unit = ReviewUnit(unit_id=link.unit_id, file_path=link.target, patch_type="add",
                          language=link.language, hunk=hunk)
        changes.append(make(
            path=link.target, language=link.language, units=(unit,),
            tags=frozenset({tag for tag in path_tags(link.path) if tag not in QUIETING_TAGS}
                           | kind.tags | {LINKED}),
            read_new=partial(read_new, link.target), kind=kind, linked=link.path,
            shown=frozenset(added.get(link.target, ()))))
    return changes


def as_linked(finding: Finding, change: FileChange) -> Finding:
    """A finding on a linked file: outside the diff's lines unless the diff adds its line,
    saying which link makes the file code."""
    return finding.replace(
        in_diff=finding.start_line in change.shown,
        message=f"{finding.message} ({change.path} is {change.language} here: the symlink "
                f"{change.linked}, which the change adds, leads to it.)")
