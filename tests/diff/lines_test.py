"""Which new-side lines a change covers."""

from __future__ import annotations

from reviewbot.diff.lines import DiffIndex
from reviewbot.diff.parse import parse_units
from tests.rules.conftest import make_diff

OLD = "".join(f"line {n}\n" for n in range(1, 21))
NEW = OLD.replace("line 10\n", "line 10\nadded a\nadded b\n")


def test_added_and_context_lines() -> None:
    units = parse_units(make_diff("src/a.py", NEW, OLD))
    index = DiffIndex.from_units(units)
    lines = index.lines("src/a.py")
    assert lines.added == {11, 12}
    assert lines.covered == set(range(8, 16))  # three lines of context on each side
    assert lines.text[11] == "added a"
    assert index.covers("src/a.py", 8, 15) and not index.covers("src/a.py", 7, 9)
    assert index.touches_added("src/a.py", 12, 30) and not index.touches_added("src/a.py", 1, 10)
    assert index.unit_at("src/a.py", 11) == units[0].unit_id
    assert index.unit_at("src/a.py", 1) is None


def test_files_outside_the_change() -> None:
    index = DiffIndex.from_units(parse_units(make_diff("src/a.py", NEW, OLD)))
    assert index.files() == ["src/a.py"] and not index.has_file("src/b.py")
    assert not index.covers("src/b.py", 1, 1)
