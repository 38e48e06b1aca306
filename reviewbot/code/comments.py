"""The comments on a file's lines, read from its language's own tokens.

A suppression or an allowlist pragma counts only in a comment: `f"ssh {host} # nosec"` holds
the word in a string, which a pattern over the line cannot tell from a comment. Python,
JavaScript, TypeScript, Go, Java and Rust are read by their tree-sitter grammars (the ones
code/syntax.py loads; Python's knows 3.12's f-strings, so a `#` inside one is no comment
on any interpreter); the other languages by Pygments' lexers. A file of no known language
(`.env`, a name without a suffix) is read as a shell reads it: `KEY=value  # comment`.

Lines are git's (a file's text split at `\\n`): a bare `\\r`, which some languages end a
line with, never moves a comment onto another line's number.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING

from reviewbot.code.syntax import parser_for
from reviewbot.lazy_re import lazy_re

if TYPE_CHECKING:
    from pygments.lexer import Lexer
    from tree_sitter import Node

# Beyond this much text, a file's comments are not read by a lexer (Pygments' lexers are
# regular expressions): a comment there suppresses nothing.
MAX_LEXED_CHARS = 1_000_000

_TREE_SITTER = frozenset({"python", "javascript", "typescript", "go", "java", "rust"})
_COMMENT_NODES = frozenset({"comment", "line_comment", "block_comment"})
# reviewbot's language -> Pygments' lexer alias (and its options).
_PYGMENTS: dict[str, str] = {
    "shell": "bash", "sql": "sql", "yaml": "yaml", "toml": "toml", "ini": "ini",
    "xml": "xml", "html": "html+jinja", "css": "css", "markdown": "markdown", "rst": "rst",
    "terraform": "terraform", "protobuf": "protobuf", "lua": "lua", "perl": "perl",
    "r": "splus", "vue": "vue", "svelte": "html", "dart": "dart", "elixir": "elixir",
    # A Dockerfile's instructions read as a shell reads them: `RUN x  # note` ends in a shell
    # comment, which Pygments' Docker lexer does not mark.
    "dockerfile": "bash", "make": "make", "groovy": "groovy", "ruby": "ruby", "php": "php",
    "kotlin": "kotlin", "scala": "scala", "csharp": "csharp", "swift": "swift", "c": "c",
    "cpp": "cpp", "json": "json",
    # For a file its tree-sitter grammar fails on (`_tree_sitter`).
    "python": "python", "javascript": "javascript", "typescript": "typescript", "go": "go",
    "java": "java", "rust": "rust",
}
_SHELL_LIKE = "bash"
# An HTML comment in Markdown's prose (Pygments reads it as text).
_HTML_COMMENT = lazy_re(r"<!--.*?(?:-->|$)")


def line_comments(text: str, language: str) -> dict[int, str]:
    """Line number (1-based, git's lines) -> the text of the comments on it, for every line
    that has one. A file too long to lex has none."""
    if language in _TREE_SITTER:
        return _tree_sitter(text, language)
    if len(text) > MAX_LEXED_CHARS or language == "csv":
        return {}
    return _pygments(text, language)


def _tree_sitter(text: str, language: str) -> dict[int, str]:
    parser = parser_for(language)
    if parser is None:  # pragma: no cover (every language in _TREE_SITTER has a grammar)
        return {}
    data = text.encode("utf-8", "surrogatepass")
    root = parser.parse(data).root_node
    breaks = [match.start() for match in re.finditer(b"\n", data)]
    found: dict[int, list[str]] = {}
    for node in _comments(root):
        piece = data[node.start_byte:node.end_byte].decode("utf-8", "replace")
        line = bisect.bisect_left(breaks, node.start_byte) + 1
        for offset, part in enumerate(piece.split("\n")):
            found.setdefault(line + offset, []).append(part)
    comments = {line: " ".join(parts) for line, parts in found.items()}
    if not root.has_error or not comments:
        return comments
    # A grammar that fails on the file may misplace its comments (tree-sitter-java reads a
    # text block's line that starts with `//` as one): a comment counts only where the
    # language's regular-expression lexer reads the same one.
    other = _pygments(text, language) if len(text) <= MAX_LEXED_CHARS else {}
    return {line: comment for line, comment in comments.items()
            if "".join(other.get(line, "").split()) == "".join(comment.split())}


def _comments(root: Node) -> Iterator[Node]:
    pending = [root]
    while pending:
        node = pending.pop()
        if node.type in _COMMENT_NODES:
            yield node
        else:
            pending.extend(node.children)


def _pygments(text: str, language: str) -> dict[int, str]:
    from pygments.token import Comment, Text, is_token_subtype

    # Pygments ends a line at a bare `\r` too: a space keeps git's numbering.
    source = text.replace("\r", " ")
    found: dict[int, list[str]] = {}
    prose: dict[int, list[str]] = {}
    line = 1
    for kind, value in _lexer(_PYGMENTS.get(language, _SHELL_LIKE)).get_tokens(source):
        # A preprocessor line (`#define X "..."`) or a template's `{{` is no comment.
        if is_token_subtype(kind, Comment) and not is_token_subtype(kind, Comment.Preproc):
            target = found
        elif language == "markdown" and kind is Text:
            target = prose
        else:
            line += value.count("\n")
            continue
        for offset, part in enumerate(value.split("\n")):
            if part:
                target.setdefault(line + offset, []).append(part)
        line += value.count("\n")
    for number, parts in prose.items():
        for match in _HTML_COMMENT.finditer("".join(parts)):
            found.setdefault(number, []).append(match.group())
    return {number: " ".join(parts) for number, parts in found.items()}


@cache
def _lexer(alias: str) -> Lexer:
    from pygments.lexers import get_lexer_by_name

    options = {"startinline": True} if alias == "php" else {}
    return get_lexer_by_name(alias, stripnl=False, stripall=False, ensurenl=False,
                             **options)
