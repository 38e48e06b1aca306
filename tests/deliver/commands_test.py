"""What a comment asks of reviewbot: only its `/reviewbot` line, read as untrusted text."""

from __future__ import annotations

from reviewbot.deliver.commands import parse


def test_the_command_line_is_read_and_nothing_else() -> None:
    assert parse("thanks!\n/reviewbot ignore  it is a test fixture \nmore") == (
        parse("/reviewbot ignore it is a test fixture"))
    command = parse("/reviewbot ignore it is a test fixture")
    assert command is not None and (command.name, command.argument) == (
        "ignore", "it is a test fixture")
    assert parse("please /reviewbot review") is None  # not at the start of a line
    assert parse("> /reviewbot review\nquoted") is None
    assert parse("/REVIEWBOT Review") == parse("/reviewbot review")
    bare = parse("/reviewbot")
    assert bare is not None and bare.name == "help"
    odd = parse("/reviewbot frobnicate now")
    assert odd is not None and (odd.name, odd.word) == ("unknown", "frobnicate")
    assert len(parse("/reviewbot ignore " + "x" * 5000).argument) == 500  # type: ignore[union-attr]
