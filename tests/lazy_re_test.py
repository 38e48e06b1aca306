"""Module-level patterns compiled when first used (text/lazy_re.py)."""

from __future__ import annotations

import re

from reviewbot.lazy_re import lazy_re


def test_a_lazy_pattern_compiles_on_first_use_and_answers_as_the_pattern() -> None:
    pattern = lazy_re(r"(?P<word>to+do)", re.IGNORECASE)
    assert "search" not in vars(pattern)  # nothing compiled yet
    match = pattern.search("a TOOdo here")
    assert match is not None and match.group("word") == "TOOdo"
    assert "search" in vars(pattern)  # the compiled pattern's own method from now on
    assert pattern.sub("x", "todo todo") == "x x"
    assert [m.start() for m in pattern.finditer("todo, todo")] == [0, 6]
    assert (pattern.pattern, pattern.flags & re.IGNORECASE, pattern.groups) == (
        "(?P<word>to+do)", re.IGNORECASE, 1)
    assert pattern.split("atodob") == ["a", "todo", "b"]
    assert repr(pattern) == "lazy_re('(?P<word>to+do)')"


def test_a_bad_pattern_fails_where_it_is_used() -> None:
    pattern = lazy_re("(")
    try:
        pattern.search("x")
    except re.error:
        return
    raise AssertionError("a bad pattern compiled")


def test_every_lazy_pattern_of_the_package_compiles() -> None:
    """A lazy pattern fails where it is first used, not at import: every one of them, in
    every module, is compiled here."""
    import importlib
    import pkgutil

    import reviewbot
    from reviewbot.lazy_re import _Lazy

    found = 0
    for module in pkgutil.walk_packages(reviewbot.__path__, "reviewbot."):
        if module.name.endswith("__main__"):
            continue  # runs the program
        for value in vars(importlib.import_module(module.name)).values():
            if isinstance(value, _Lazy):
                assert isinstance(value.pattern, str)  # compiles it
                found += 1
    assert found > 100
