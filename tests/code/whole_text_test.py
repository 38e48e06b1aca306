"""Texts joined and searched once in UTF-8 (code/whole_text.py)."""

from __future__ import annotations

from reviewbot.code.whole_text import JoinedTexts, compile_whole_text


def test_a_lone_surrogate_is_searched_past_and_offsets_stay_right() -> None:
    """A decoded escape can hold a character no UTF-8 holds: the search goes on past it,
    and a match after it is found in the right text."""
    joined = JoinedTexts.of(["a\ud800b", "caf\u00e9", "key=AKIA"])
    match = compile_whole_text(r"AKIA").search(joined.data)
    assert match is not None and joined.index_at(match.start()) == 2
    assert joined.index_at(0) == 0 and joined.index_at(joined.starts[1]) == 1
