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
    assert row == "| a \\| b `@c` | x |"


@pytest.mark.parametrize(("text", "spans"), [
    ("Use %s placeholders: cursor.execute(sql, (name,))", ["%s"]),
    ("Link the issue: `TODO(#123)`, not TODO(#9).", ["TODO(#123)", "TODO(#9)."]),
    ("Ask @team, see !45 ~bug %v1 $12 &3 GH-7 https://x.invalid www.x.invalid",
     ["@team,", "!45", "~bug", "%v1", "$12", "&3", "GH-7", "https://x.invalid",
      "www.x.invalid"]),
    ("/merge first, then `/approve`", ["/merge", "/approve"]),
])
def test_inert_text_copies_as_it_reads(text: str, spans: list[str]) -> None:
    """A fix is copied from the report: no invisible character anywhere in it. Neither forge
    renders a mention, a reference or a link inside a code span, so what would be one is a
    code span holding exactly its characters, and the rest of the text is plain words."""
    shown = inert(text)
    assert "\u200b" not in shown
    tokens = [child for token in _MARKDOWN.parse(shown) for child in token.children or []]
    assert [t.content for t in tokens if t.type == "code_inline"] == spans
    rendered = "".join(t.content for t in tokens if t.type in ("code_inline", "text",
                                                                "softbreak"))
    assert " ".join(rendered.split()) == " ".join(text.replace("`", "").split())
    assert not [t for t in tokens if t.type not in ("code_inline", "text", "softbreak")]


@pytest.mark.parametrize(("text", "code"), [
    ("a `span that never closes\n`/merge` on the next line", ["/merge"]),
    ("<b>bold</b> &amp; [link](x) ![img](y) \\`escaped` ```fence ~~~", ["escaped"]),
    ("[ref]: http://x.invalid", ["http://x.invalid"]),
])
def test_what_commonmark_would_read_as_syntax_shows_as_its_characters(
        text: str, code: list[str]) -> None:
    """Outside code spans every character CommonMark reads as syntax is escaped: no HTML, no
    link, no image, no fence, and no span that opens on one line and closes on the next (a
    word on the next line would then be read as text)."""
    shown = inert(text)
    assert _kinds(shown) == []
    spans = [child.content for token in _MARKDOWN.parse(shown) for child in token.children or []
             if child.type == "code_inline"]
    assert spans == code
    assert "\u200b" not in shown
