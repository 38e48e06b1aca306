"""Token estimates that work offline, and rendering code with line numbers within caps.

tiktoken downloads its encodings at run time, so it cannot be relied on here. Counting
words and punctuation marks separately tracks BPE token counts of source code closely
enough for budgeting (identifiers and operators are each about one token).
"""

from __future__ import annotations

from reviewbot.lazy_re import lazy_re

_TOKEN = lazy_re(r"\w+|[^\w\s]")
MAX_SNIPPET_LINES = 40
MAX_FULL_FILE_LINES = 400


def estimate_tokens(text: str | None) -> int:
    return len(_TOKEN.findall(text)) if text else 0


def numbered(lines: list[str], start: int, end: int, header: str = "",
             limit: int = MAX_SNIPPET_LINES) -> tuple[str, bool]:
    """Lines start..end (1-based, inclusive) with their numbers; whether it was clipped."""
    end = min(end, len(lines))
    shown = range(start, min(end, start + limit - 1) + 1)
    body = [f"{n:>5} | {lines[n - 1]}" for n in shown]
    clipped = end > shown.stop - 1
    if clipped:
        body.append(f"  ... | ({end - shown.stop + 1} more lines)")
    return "\n".join(([header] if header else []) + body), clipped


def clip_lines(text: str, limit: int) -> tuple[str, bool]:
    lines = text.split("\n")
    if len(lines) <= limit:
        return text, False
    return "\n".join([*lines[:limit], f"... ({len(lines) - limit} more lines)"]), True
