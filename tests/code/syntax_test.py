"""Function boundaries per language, against golden files (nested functions, decorators,
methods in classes, arrow functions, Go receivers)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest

from reviewbot.code.syntax import enclosing, spans
from tests.conftest import assert_golden

FIXTURES = Path(__file__).parent / "fixtures"
GOLDEN = Path(__file__).parent / "golden"
LANGUAGES = {"sample.py": "python", "sample.js": "javascript", "sample.ts": "typescript",
             "sample.go": "go", "Sample.java": "java", "sample.rs": "rust"}


@pytest.mark.parametrize("name", LANGUAGES)
def test_spans_golden(name: str) -> None:
    found = spans((FIXTURES / name).read_text(), LANGUAGES[name])
    assert_golden(GOLDEN / f"spans_{name}.json", json.dumps([asdict(s) for s in found], indent=2))


@pytest.mark.parametrize(("name", "line", "qualname", "start", "end"), [
    ("sample.py", 6, "outer.inner", 5, 6),      # nested function: the inner one
    ("sample.py", 7, "outer", 4, 7),
    ("sample.py", 13, "Cart.total", 11, 13),    # decorator included
    ("sample.js", 5, "load.parse", 4, 6),       # arrow function with its declaration
    ("sample.js", 12, "Store.get", 11, 13),
    ("sample.ts", 9, "Circle.area", 8, 10),
    ("sample.ts", 14, "scale", 13, 15),
    ("sample.go", 10, "Cart.Total", 7, 13),     # Go receiver
    ("Sample.java", 13, "Cart.total", 10, 16),
    ("sample.rs", 7, "Cart.total", 6, 8),
])
def test_enclosing_function(name: str, line: int, qualname: str, start: int, end: int) -> None:
    found = enclosing(spans((FIXTURES / name).read_text(), LANGUAGES[name]), line, "function")
    assert found is not None
    assert (found.qualname, found.start, found.end) == (qualname, start, end)


def test_module_level_line_has_no_enclosing_function() -> None:
    assert enclosing(spans((FIXTURES / "sample.py").read_text(), "python"), 1) is None


def test_heuristic_for_languages_without_a_grammar() -> None:
    ruby = "class Cart\n  def total\n    items.sum\n  end\nend\n"
    kotlin = "class Cart {\n    fun total(): Int {\n        return 1\n    }\n}\n"
    ruby_spans = spans(ruby, "ruby")
    assert [(s.name, s.start, s.end) for s in ruby_spans] == [("Cart", 1, 4), ("total", 2, 3)]
    kotlin_span = enclosing(spans(kotlin, "kotlin"), 3, "function")
    assert kotlin_span is not None and (kotlin_span.name, kotlin_span.start, kotlin_span.end) == (
        "total", 2, 4)


def test_broken_code_still_gives_spans() -> None:
    broken = "def ok():\n    return 1\n\ndef broken(:\n    pass\n"
    assert enclosing(spans(broken, "python"), 2, "function") is not None


@pytest.mark.parametrize("name", LANGUAGES)
def test_point_lookup_agrees_with_the_full_walk(name: str) -> None:
    from reviewbot.code.syntax import SyntaxIndex

    text = (FIXTURES / name).read_text()
    index = SyntaxIndex(text, LANGUAGES[name])
    for line in range(1, text.count("\n") + 2):
        for kind in ("function", "class", None):
            assert index.at(line, kind) == enclosing(index.all(), line, kind), (line, kind)
