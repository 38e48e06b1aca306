"""Markdown's own syntax, whatever the text inside holds."""

from __future__ import annotations

import re


def code_block(lines: list[str], info: str, indent: str = "  ") -> str:
    """A fenced block, its fence longer than any backtick run inside it."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    body = "\n".join(f"{indent}{line}" for line in lines)
    return f"{indent}{fence}{info}\n{body}\n{indent}{fence}"


def inline_code(text: str) -> str:
    """`text` as Markdown inline code, whatever backticks it holds (CommonMark 6.1)."""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def table_text(text: str) -> str:
    """Untrusted words (a model's) for one cell of a Markdown table: one line, no cell
    breaks, no @-mentions that ping people, no HTML comments that could pass for markers."""
    one_line = " ".join(text.split())
    return (one_line.replace("|", "\\|").replace("@", "@\u200b")
            .replace("<!--", "&lt;!--"))
