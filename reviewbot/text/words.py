"""Counts in words, for any message a stage or a report writes."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str = "") -> str:
    """`1 unit`, `2 units`: a count with its noun in the right number."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
