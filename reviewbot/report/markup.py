"""Markdown's own syntax, whatever the text inside holds; and untrusted text (code, file
names, a model's words, a commenter's reason) made inert for a body GitHub renders.

GitHub renders a comment as Markdown with HTML: text from the reviewed repository or a model
could otherwise ping people (`@user`, `@org/team`, and the look-alikes: `&#64;`, `&commat;`,
the fullwidth and small at signs), post a committable ```` ```suggestion ```` block, raw
HTML (`<img>`, `<details>`, an HTML comment passing for one of reviewbot's markers), an image
or a link, a `/reviewbot` command line, a reference that shows up in another issue's
timeline (`#12`), or end a table's cell. GitLab renders a note as GitLab Flavored Markdown
and reads it for quick actions: a line that starts with `/merge`, `/approve` or `/assign` runs
as reviewbot's token user, and `!45`, `~label`, `%milestone`, `$12` and `&3` are references.
`inert` and `inert_line` keep the words readable and take all of that away: a zero-width space
after the character that would start it. Quoted code keeps its characters, but no line of it
starts with a `/` GitLab could read as a command (GitLab's extractor skips only the ``` blocks
its own regular expression finds, and a quoted ``` line ends one there).
"""

from __future__ import annotations

import re

from reviewbot.report.terminal import visible

# Invisible, and no Markdown or HTML construct continues across it.
_BREAK = "\u200b"
# What GitHub takes for a mention's "@" (NFKC folds the other two to it).
_ATS = ("@", "\uff20", "\ufe6b")
# Code fences and anything a fence could be made of.
_FENCE_RUN = re.compile(r"`{3,}|~{3,}")
_FENCE_LINE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_COMMAND = re.compile(r"/(?=reviewbot)", re.IGNORECASE)
# GitHub's `#12`; GitLab's `!45` (merge request), `$12` (snippet), `~label` and `~"a label"`,
# `%milestone` (`&3`, an epic, loses its `&` with the HTML entities).
_REFERENCE = re.compile(r"[#!$](?=[0-9])|[~%](?=[\w\"])")
# A line GitLab runs as a quick action starts with `/` and the command's name; whitespace
# before it is broken too, whatever a renderer strips.
_QUICK_ACTION = re.compile(r"^(\s*)/(?=\w)")
# What GFM links by itself: a scheme's `://`, `www.`, and `GH-12` references (the last
# character of each is split from the rest). `[a]: url` definitions are split at `]:`.
_AUTOLINK = re.compile(r"://|(?i:www)\.|(?i:\bGH)-(?=[0-9])")
_MARKER = re.compile(r"<!--")
# A code block's language, when it is one (anything else is dropped); GitHub renders these
# info strings as something other than code.
_LANGUAGE = re.compile(r"[A-Za-z0-9_+#.-]{1,30}")
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
    `inert`, and pipes escaped so that no table cell ends inside them."""
    return _prose(" ".join(visible(text).split())).replace("|", "\\|")


def _prose(line: str) -> str:
    text = line.replace("&", "&" + _BREAK).replace("<", "<" + _BREAK)
    for at in _ATS:
        text = text.replace(at, at + _BREAK)
    text = _FENCE_RUN.sub(lambda run: _BREAK.join(run.group()), text)
    text = _COMMAND.sub("/" + _BREAK, _REFERENCE.sub(lambda ref: ref.group() + _BREAK, text))
    text = _QUICK_ACTION.sub(r"\1/" + _BREAK, text)
    text = _AUTOLINK.sub(lambda found: found.group()[:-1] + _BREAK + found.group()[-1], text)
    return (text.replace("![", "!" + _BREAK + "[").replace("](", "]" + _BREAK + "(")
            .replace("]:", "]" + _BREAK + ":"))


def runs_as_command(lines: list[str]) -> bool:
    """Whether a line would start a quick action if GitLab read it outside a code block: such
    lines cannot be quoted verbatim (a suggestion to commit) in a note."""
    return any(_QUICK_ACTION.match(line) for line in lines)


def _language(info: str) -> str:
    word = info.split(maxsplit=1)[0] if info.strip() else ""
    return word if _LANGUAGE.fullmatch(word) and word.lower() not in _NOT_CODE else ""
