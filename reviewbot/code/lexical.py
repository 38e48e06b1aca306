"""Line-level lexical facts per language: is this line a comment, an import?"""

from __future__ import annotations

import re

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


def comment_body(text: str) -> str:
    """The text of a line without a leading comment marker."""
    return text.strip().lstrip("#/*-<!;").strip()


def is_import(text: str, language: str) -> bool:
    pattern = _IMPORTS.get(language)
    return bool(pattern and pattern.match(text))
