"""The definitions around lines of Python."""

from __future__ import annotations

import ast

from reviewbot.code.docstrings import docstring_lines
from reviewbot.code.enclosing import definition_headers, enclosing_headers

SOURCE = '''\
import os


class Store:
    @property
    def path(self):
        return os.getcwd()

    async def save(self, data):
        if data:
            def inner():
                return 1
            return inner()


def top():
    pass
'''


def test_headers_are_the_first_lines_of_every_definition_outermost_first() -> None:
    headers = definition_headers(ast.parse(SOURCE), SOURCE)
    assert [(h.start, h.end, h.text) for h in headers] == [
        (4, 13, "class Store:"),
        (6, 7, "def path(self):"),
        (9, 13, "async def save(self, data):"),
        (11, 12, "def inner():"),
        (16, 17, "def top():"),
    ]


def test_enclosing_lists_every_definition_around_the_lines() -> None:
    headers = definition_headers(ast.parse(SOURCE), SOURCE)
    assert enclosing_headers(headers, 12, 12) == ["class Store:", "async def save(self, data):",
                                                  "def inner():"]
    assert enclosing_headers(headers, 7, 9) == ["class Store:", "def path(self):",
                                                "async def save(self, data):"]
    assert enclosing_headers(headers, 1, 2) == []


def test_no_tree_no_headers() -> None:
    assert definition_headers(None, SOURCE) == ()
    assert definition_headers(ast.parse(SOURCE), None) == ()


# Definitions and docstrings under a match case and an except clause, which hold statements
# without being statements.
IN_BLOCKS = '''\
match mode:
    case "fast":
        def quick():
            """Quick."""
try:
    import fastjson
except ImportError:
    def slow():
        """Slow."""
'''


def test_definitions_and_docstrings_under_a_case_or_an_except_clause_are_found() -> None:
    tree = ast.parse(IN_BLOCKS)
    assert [h.text for h in definition_headers(tree, IN_BLOCKS)] == ["def quick():",
                                                                     "def slow():"]
    assert docstring_lines(tree) == {4, 9}
