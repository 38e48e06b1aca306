"""Language of a file, from its name. Shared by the diff, rules and context stages."""

from __future__ import annotations

from pathlib import PurePosixPath

from reviewbot.lazy_re import lazy_re

_BY_SUFFIX: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescript",
    ".go": "go", ".java": "java", ".kt": "kotlin", ".kts": "kotlin", ".scala": "scala",
    ".rs": "rust", ".rb": "ruby", ".php": "php", ".cs": "csharp", ".swift": "swift",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp",
    ".sh": "shell", ".bash": "shell", ".zsh": "shell", ".ksh": "shell",
    ".sql": "sql", ".yaml": "yaml", ".yml": "yaml", ".json": "json", ".toml": "toml",
    ".ini": "ini", ".cfg": "ini", ".conf": "ini", ".xml": "xml", ".html": "html", ".htm": "html",
    ".jinja": "html", ".jinja2": "html", ".djhtml": "html",
    ".css": "css", ".scss": "css", ".md": "markdown", ".rst": "rst", ".txt": "text",
    ".tf": "terraform", ".proto": "protobuf", ".lua": "lua", ".pl": "perl", ".r": "r",
    ".vue": "vue", ".svelte": "svelte", ".dart": "dart", ".ex": "elixir", ".exs": "elixir",
    ".csv": "csv", ".tsv": "csv",
}

_BY_NAME: dict[str, str] = {
    "dockerfile": "dockerfile", "makefile": "make", "gnumakefile": "make",
    "jenkinsfile": "groovy", "vagrantfile": "ruby", "gemfile": "ruby", "rakefile": "ruby",
    ".bashrc": "shell", ".profile": "shell", ".zshrc": "shell",
    # git's own files: configuration, not prose.
    ".gitmodules": "ini", ".gitconfig": "ini", ".editorconfig": "ini",
    ".gitattributes": "gitattributes", ".gitignore": "gitignore", ".dockerignore": "gitignore",
}


def detect_language(path: str) -> str:
    """A lower-case language name, or "text" when the name says nothing."""
    pure = PurePosixPath(path)
    name = pure.name.lower()
    if name in _BY_NAME:
        return _BY_NAME[name]
    if name.startswith("dockerfile") or name.endswith(".dockerfile"):
        return "dockerfile"
    return _BY_SUFFIX.get(pure.suffix.lower(), "text")


# Not code by name: what an unknown suffix gets (an image, an archive), and data.
_NOT_CODE = frozenset({"text", "csv", "json", "xml", "protobuf"})


def named_as_code(path: str) -> bool:
    """Whether a file's name makes it code, to be read as text whatever its bytes: a NUL
    byte in a comment does not stop node or bash from running the rest, so it must not stop
    the rules."""
    return detect_language(path) not in _NOT_CODE

# `#!/usr/bin/env python3`, `#!/bin/bash -e`, `#!/usr/bin/env -S node --flag`: the program.
_SHEBANG = lazy_re(r"^#!\s*(?:\S*/)?(?:env\s+(?:-\S+\s+)*)?(?P<program>[A-Za-z]+)")
_BY_PROGRAM: dict[str, str] = {
    "python": "python", "pypy": "python", "uv": "python", "sh": "shell", "bash": "shell",
    "zsh": "shell", "ksh": "shell", "dash": "shell", "node": "javascript",
    "deno": "typescript", "bun": "typescript", "tsx": "typescript", "ts": "typescript",
    "ruby": "ruby", "perl": "perl", "php": "php",
}


def shebang_language(first_line: str) -> str | None:
    """The language a script's `#!` line runs it with, or None: a program with no suffix is
    still code (a name is not what decides whether a file is reviewed as code)."""
    match = _SHEBANG.match(first_line)
    return _BY_PROGRAM.get(match.group("program").lower()) if match else None
