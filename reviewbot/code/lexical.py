"""Line-level lexical facts per language: is this line a comment, an import?"""

from __future__ import annotations

import re
from collections.abc import Sequence

from reviewbot.lazy_re import lazy_re

_HASH = ("#",)
_SLASH = ("//", "/*", "*", "*/")
_COMMENT_PREFIXES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("python", "shell", "yaml", "toml", "ruby", "perl", "r", "make",
                     "dockerfile", "ini", "terraform", "elixir"), _HASH),
    **dict.fromkeys(("javascript", "typescript", "go", "java", "kotlin", "scala", "rust",
                     "c", "cpp", "csharp", "swift", "dart", "groovy", "protobuf", "css",
                     "vue", "svelte"), _SLASH),
    "php": ("#", *_SLASH),
    "sql": ("--", "/*", "*", "*/"),
    "lua": ("--",),
    "html": ("<!--", "-->"),
    "xml": ("<!--", "-->"),
}

_IMPORTS: dict[str, re.Pattern[str]] = {
    "python": re.compile(r"^\s*(import\s+[\w.]+|from\s+[.\w]+\s+import\b)"),
    "javascript": re.compile(r"^\s*(import\b|export\s+(\*|\{[^}]*\})\s+from\b|"
                             r"(const|let|var)\s+[\w{}\s,]+=\s*require\()"),
    "go": re.compile(r"^\s*(import\b|(\w+\s+)?\"[\w./-]+\"\s*$)"),
    "java": re.compile(r"^\s*import\s"),
    "rust": re.compile(r"^\s*(pub\s+)?use\s"),
    "c": re.compile(r"^\s*#\s*include\b"),
}
_IMPORTS["typescript"] = _IMPORTS["javascript"]
_IMPORTS["kotlin"] = _IMPORTS["scala"] = _IMPORTS["java"]
_IMPORTS["cpp"] = _IMPORTS["c"]


def is_comment(text: str, language: str) -> bool:
    stripped = text.strip()
    prefixes = _COMMENT_PREFIXES.get(language, ())
    if language == "python" and stripped.startswith(('"""', "'''")):
        return False
    return bool(stripped) and stripped.startswith(prefixes)


def comment_flags(texts: Sequence[str], language: str) -> list[bool]:
    """Whether each of consecutive lines is a comment. In the languages with `/* ... */`, a
    line that starts with `*` is one only inside such a block, which the lines after it show
    (the next `*/` comes before any `/*`): `* eval(input)` continuing an expression is code,
    and must not pass for a doc comment's line."""
    flags = [is_comment(text, language) for text in texts]
    if _SLASH[0] not in _COMMENT_PREFIXES.get(language, ()):
        return flags
    closing = False  # whether the next block token after a position is `*/`
    for index in range(len(texts) - 1, -1, -1):
        stripped = texts[index].lstrip()
        if stripped.startswith("*") and not stripped.startswith("*/"):
            rest = _next_block_token(stripped[1:])
            flags[index] = (rest or ("*/" if closing else "")) == "*/"
        first = _next_block_token(stripped)
        if first:
            closing = first == "*/"
    return flags


def _next_block_token(text: str) -> str:
    """The first `/*` or `*/` in a line, or ""."""
    found = _BLOCK_TOKEN.search(text)
    return found.group() if found else ""


_BLOCK_TOKEN = lazy_re(r"/\*|\*/")


def comment_body(text: str) -> str:
    """The text of a line without a leading comment marker."""
    return text.strip().lstrip("#/*-<!;").strip()


def is_import(text: str, language: str) -> bool:
    pattern = _IMPORTS.get(language)
    return bool(pattern and pattern.match(text))
