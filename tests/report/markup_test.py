"""Untrusted text made inert for a GitHub body, read as GitHub renders it (markdown-it:
CommonMark with GFM tables)."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from reviewbot.report.markup import inert, inert_line

_MARKDOWN = MarkdownIt("commonmark").enable("table")


def _kinds(text: str) -> list[tuple[str, str]]:
    flat = []
    for token in _MARKDOWN.parse(text):
        flat += [token, *(token.children or [])]
    return [(t.type, t.info) for t in flat if t.type in ("fence", "code_block", "html_inline",
                                                         "html_block", "image", "link_open")]


@pytest.mark.parametrize("text", [
    "```suggestion\nos.system('x')\n```",
    "~~~suggestion\nos.system('x')\n~~~",
    "```suggestion\nnever closed",
    "- a list\n\n  ```suggestion\n  os.system('x')\n  ```",
    "> ```suggestion\n> os.system('x')\n> ```",
    "````suggestion\n```\nstill inside\n````",
])
def test_no_fence_of_a_models_becomes_a_suggestion(text: str) -> None:
    """A suggestion block comes only from the checked fix: whatever fence a model writes,
    its code stays code and its info string is no suggestion."""
    for prefix in ("", "Fix: "):
        kinds = _kinds(prefix + inert(text))
        assert all(info == "" for kind, info in kinds if kind == "fence"), kinds
        assert not [k for k, _ in kinds if k in ("html_inline", "html_block")]


def test_a_language_stays_and_the_code_is_whole() -> None:
    shown = inert("Use this:\n```python\nprint('`a`')\n```\nthen <b>go</b>")
    assert "```python\nprint('`a`')\n```" in shown
    assert _kinds(shown) == [("fence", "python")]


def test_one_line_keeps_its_cell() -> None:
    row = f"| {inert_line('a | b @c')} | x |"
    assert row == "| a \\| b @\u200bc | x |"
