"""Markdown's own syntax, whatever the text inside holds; and untrusted text (code, file
names, a model's words, a commenter's reason) made inert for a body GitHub or GitLab renders.

GitHub renders a comment as Markdown with HTML: text from the reviewed repository or a model
could otherwise ping people (`@user`, `@org/team`, and the look-alikes: `&#64;`, `&commat;`,
the fullwidth and small at signs), post a committable ```` ```suggestion ```` block, raw
HTML (`<img>`, `<details>`, an HTML comment passing for one of reviewbot's markers), an image
or a link, a `/reviewbot` command line, a reference that shows up in another issue's
timeline (`#12`), or end a table's cell. GitLab renders a note as GitLab Flavored Markdown
and reads it for quick actions: a line that starts with `/merge`, `/approve` or `/assign` runs
as reviewbot's token user, and `!45`, `~label`, `%milestone`, `$12` and `&3` are references.

`inert` and `inert_line` keep the words readable and copyable, with no invisible character:
neither forge renders a mention, a reference or a link inside a code span (GitHub's mention
and reference filters and GitLab's reference filters skip every text node inside `code`,
`pre` and `a`), so a word that holds one is shown as a code span, and a code span the text
already has, closed on its line, stays as written. Everything else is escaped the way
CommonMark reads escapes (`&lt;`, `&amp;`, a backslash before a bracket, a backtick or a tilde),
which shows the character itself. Quoted code keeps its characters, but no line of it starts
with a `/` GitLab could read as a command (GitLab's extractor skips only the ``` blocks its own
regular expression finds, and a quoted ``` line ends one there): there, and only there, a
zero-width space is the one way to keep the code's text.
"""

from __future__ import annotations

import re

from reviewbot.lazy_re import lazy_re
from reviewbot.text.terminal import visible

# Invisible, and no Markdown or HTML construct continues across it: used in quoted code
# alone, whose characters cannot be escaped.
_BREAK = "\u200b"
# A code fence's line: where a block in untrusted Markdown opens.
_FENCE_LINE = lazy_re(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
# A `/reviewbot` command and an HTML comment, in quoted code.
_COMMAND = lazy_re(r"/(?=reviewbot)", re.IGNORECASE)
# A line GitLab runs as a quick action starts with `/` and the command's name; whitespace
# before it is broken too, whatever a renderer strips.
_QUICK_ACTION = lazy_re(r"^(\s*)/(?=\w)")
_MARKER = lazy_re(r"<!--")
# A code block's language, when it is one (anything else is dropped); GitHub renders these
# info strings as something other than code.
_LANGUAGE = lazy_re(r"[A-Za-z0-9_+#.-]{1,30}")
_NOT_CODE = frozenset({"suggestion", "mermaid", "geojson", "topojson", "stl", "math"})


def code_block(lines: list[str], info: str, indent: str = "  ") -> str:
    """A fenced block, its fence longer than any backtick run inside it."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    body = "\n".join(f"{indent}{line}" for line in lines)
    return f"{indent}{fence}{info}\n{body}\n{indent}{fence}"


def inline_code(text: str, in_table: bool = False) -> str:
    """`text` as Markdown inline code, whatever backticks it holds (CommonMark 6.1); in a
    table cell, its pipes escaped (GFM splits a row at every unescaped pipe, code or not)."""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    inside = text.replace("|", "\\|") if in_table else text
    return f"{fence}{pad}{inside}{pad}{fence}"


def quoted_code(lines: list[str], info: str = "", indent: str = "") -> str:
    """Code reviewbot quotes (never a suggestion to commit): a fenced block whose fence
    holds it, with no HTML comment or `/reviewbot` line in it that a reader of the body could
    take for reviewbot's (the characters look the same)."""
    safe = [_QUICK_ACTION.sub(r"\1/" + _BREAK, _COMMAND.sub(
        "/" + _BREAK, _MARKER.sub("<" + _BREAK + "!--", visible(line)))) for line in lines]
    return code_block(safe, _language(info), indent=indent)


def inert(text: str) -> str:
    """Untrusted Markdown (a model's answer, a finding's message) for a GitHub body: its
    fenced code stays code (re-fenced by `quoted_code`, never a suggestion), everything else
    is `inert` prose. A block starts and ends on a line of its own, so the result may follow
    a prefix on the same line."""
    out: list[str] = []
    code: list[str] | None = None
    fence, info = "", ""
    for line in visible(text).split("\n"):
        opening = _FENCE_LINE.match(line) if code is None else None
        if opening is not None and not (opening["fence"][0] == "`" and "`" in opening["info"]):
            code, fence, info = [], opening["fence"], opening["info"].strip()
        elif code is None:
            out.append(_prose(line))
        elif re.fullmatch(rf" {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*", line):
            out += ["", quoted_code(code, info), ""]
            code = None
        else:
            code.append(line)
    if code is not None:  # a fence the text never closed: closed here
        out += ["", quoted_code(code, info), ""]
    return "\n".join(out)


def inert_line(text: str) -> str:
    """Untrusted words on one line (a title, a table cell, a reason): whitespace folded,
    `inert`, and pipes escaped so that no table cell ends inside them (GFM reads `\\|` as a
    pipe in a code span of a cell too)."""
    return _prose(" ".join(visible(text).split())).replace("|", "\\|")


# A backtick run, and what CommonMark pairs it with on the same line: the next run of the
# same length (CommonMark 6.1). A span is kept only when it closes on its line: one that
# would close on the next line is not paired here, so its backticks are escaped instead.
_BACKTICKS = lazy_re(r"`+")


def _prose(line: str) -> str:
    """One line of untrusted prose: its code spans as they are, every other word plain."""
    out: list[str] = []
    at = 0
    while at < len(line):
        run = _BACKTICKS.search(line, at)
        if run is None:
            out.append(_plain(line[at:], at == 0))
            break
        close = _closing(line, run)
        if close is None:
            out.append(_plain(line[at:run.end()], at == 0))
            at = run.end()
            continue
        code = line[run.start():close]
        out.append(_plain(line[at:run.start()], at == 0))
        # A span holding `<!--` is shown as text: the raw body must hold no comment that a
        # reader of it could take for one of reviewbot's markers.
        out.append(code if "<!--" not in code else _plain(code, False))
        at = close
    return "".join(out)


def _closing(line: str, run: re.Match[str]) -> int | None:
    """Where the code span this backtick run opens ends on the line, or None."""
    for other in _BACKTICKS.finditer(line, run.end()):
        if len(other.group()) == len(run.group()):
            return other.end()
    return None


# A word that holds any of these is shown as a code span, where neither forge reads it:
# mentions (and the at signs NFKC folds to `@`), GitHub's `#12` and `GH-12`, GitLab's `!45`,
# `$12`, `&3`, `~label`, `~"a label"`, `%milestone`, what GFM autolinks (`://`, `www.`), and a
# `/reviewbot` command.
_RISKY = lazy_re(r"[@\uff20\ufe6b]|[#!$&](?=[0-9])|[~%](?=[\w\"])|://|(?i:www)\.|"
                    r"(?i:\bGH)-(?=[0-9])|/(?i:reviewbot)")
# What CommonMark would read as syntax in the rest: HTML and entities, links and images,
# code spans and fences, a tilde fence; each escaped to show the character itself.
_ESCAPES = {"\\": "\\\\", "&": "&amp;", "<": "&lt;", "[": "\\[", "]": "\\]", "`": "\\`",
            "~": "\\~"}
_WORDS = lazy_re(r"(\s+)")


def _plain(text: str, line_start: bool) -> str:
    """Text outside code spans, word by word: a risky word as a code span, a line's first
    word starting with `/` too (GitLab would run it as a quick action); the rest escaped."""
    out: list[str] = []
    first = line_start
    for word in _WORDS.split(text):
        if not word or word.isspace():
            out.append(word)
            continue
        if _RISKY.search(word) or (first and word.startswith("/")):
            out.append(inline_code(word))
        else:
            out.append("".join(_ESCAPES.get(char, char) for char in word))
        first = False
    return "".join(out)


def runs_as_command(lines: list[str]) -> bool:
    """Whether a line would start a quick action if GitLab read it outside a code block: such
    lines cannot be quoted verbatim (a suggestion to commit) in a note."""
    return any(_QUICK_ACTION.match(line) for line in lines)


def _language(info: str) -> str:
    word = info.split(maxsplit=1)[0] if info.strip() else ""
    return word if _LANGUAGE.fullmatch(word) and word.lower() not in _NOT_CODE else ""
