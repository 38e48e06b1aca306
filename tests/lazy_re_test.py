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


def test_a_lazy_pattern_pickles_and_copies_as_the_pattern_it_stands_for() -> None:
    """What comes back from a forked worker comes by pickle (rules/processes.py): a lazy
    pattern in it, copied or pickled before or after its first use, is the same pattern,
    and a name re.Pattern lacks is no reason to compile it."""
    import copy
    import pickle

    for used in (False, True):
        pattern = lazy_re(r"a+b", re.IGNORECASE)
        if used:
            assert pattern.search("xAAb") is not None
        for again in (pickle.loads(pickle.dumps(pattern)),  # noqa: S301 (its own bytes)
                      copy.copy(pattern),
                      copy.deepcopy(pattern)):
            match = again.search("xAAb")
            assert match is not None and match.group(0) == "AAb"
            assert (again.pattern, again.flags & re.IGNORECASE) == ("a+b", re.IGNORECASE)
    unused = lazy_re("(")  # would fail to compile
    assert not hasattr(unused, "__setstate__") and not hasattr(unused, "no_such_name")
