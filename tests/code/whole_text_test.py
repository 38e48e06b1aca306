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


def test_unicode_space_is_what_re_reads_as_a_space() -> None:
    """RE2's `\\s` is ASCII; UNICODE_SPACE stands for `re`'s, character for character (every
    space is in the basic plane; the surrogates, which UTF-8 cannot carry, left out)."""
    import re

    from reviewbot.code.whole_text import UNICODE_SPACE, compile_whole_text

    space = compile_whole_text(UNICODE_SPACE)
    differ = [hex(code) for code in range(0x10000) if not 0xD800 <= code < 0xE000
              and bool(re.fullmatch(r"\s", chr(code)))
              != bool(space.fullmatch(chr(code).encode()))]
    assert differ == []
