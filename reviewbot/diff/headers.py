"""Make git's per-file diff headers unambiguous before unidiff reads them.

`diff --git a/P b/Q` cannot be split reliably when a path contains " b/" (for
example `b b/x.txt`); unidiff's greedy pattern then splits it wrongly and fails
with "Target without source". The real paths are recoverable from the rest of
the header block (the ---/+++ lines, `rename from/to`, or the two equal halves
of the header), so each block is rewritten with space-free stand-ins that
`decode_path` turns back into the real path afterwards.

Only header blocks are touched: from a `diff --git` line up to the first `@@`.
A hunk body line always starts with ' ', '+', '-' or '\\', so it is never taken
for a header line.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator

_GIT_HEADER = "diff --git "
# Private-use characters stand in for those unidiff's patterns split on.
_ENCODE = str.maketrans({" ": "\ue000", "\t": "\ue001", "\n": "\ue002"})
_DECODE = str.maketrans({"\ue000": " ", "\ue001": "\t", "\ue002": "\n"})


def normalise_headers(text: str) -> str:
    """The diff with each header block rewritten and the hunks between them copied as they
    are (found by searching for the blocks, not by splitting a diff of megabytes: the file
    headers in one pass over the text, each block's first hunk between its header and the
    next)."""
    headers = _line_starts(text, _GIT_HEADER)
    pieces: list[str] = []
    copied = 0
    for index, start in enumerate(headers):
        following = headers[index + 1] if index + 1 < len(headers) else len(text)
        hunk = text.find("\n@@ ", start, following)
        end = following if hunk == -1 else hunk + 1
        # The block's lines; the newline ending the last one stays with what follows.
        block = text[start:end - 1] if end < len(text) else text[start:]
        rewritten = "\n".join(_rewrite_block(block.split("\n")))
        if rewritten != block:  # most headers name paths that need nothing
            pieces += [text[copied:start], rewritten]
            copied = start + len(block)
    # Nothing rewritten: the text itself, not a copy of its megabytes.
    return "".join([*pieces, text[copied:]]) if pieces else text


def _line_starts(text: str, prefix: str) -> list[int]:
    """Where the lines that start with `prefix` begin, in order."""
    found = [0] if text.startswith(prefix) else []
    at = text.find("\n" + prefix)
    while at != -1:
        found.append(at + 1)
        at = text.find("\n" + prefix, at + 1)
    return found


def decode_path(path: str) -> str:
    return path.translate(_DECODE)


def _rewrite(lines: list[str]) -> Iterator[str]:
    index = 0
    while index < len(lines):
        if not lines[index].startswith(_GIT_HEADER):
            yield lines[index]
            index += 1
            continue
        end = index + 1
        while end < len(lines) and not lines[end].startswith(("@@ ", _GIT_HEADER)):
            end += 1
        yield from _rewrite_block(lines[index:end])
        index = end


def _rewrite_block(block: list[str]) -> Iterator[str]:
    old, new = _block_paths(block)
    added = any(line.startswith("new file mode") for line in block)
    deleted = any(line.startswith("deleted file mode") for line in block)
    src = "/dev/null" if added else f"a/{old.translate(_ENCODE)}"
    dst = "/dev/null" if deleted else f"b/{new.translate(_ENCODE)}"
    yield f"{_GIT_HEADER}a/{old.translate(_ENCODE)} b/{new.translate(_ENCODE)}"
    for line in block[1:]:
        if line.startswith("--- "):
            yield f"--- {src}"
        elif line.startswith("+++ "):
            yield f"+++ {dst}"
        elif line.startswith("Binary files "):
            yield f"Binary files {src} and {dst} differ"
        else:
            yield line


def _block_paths(block: list[str], errors: str = "replace") -> tuple[str, str]:
    """(old path, new path) of one file's header block, without a/ b/ prefixes (`errors`:
    how a quoted name's bytes that are not UTF-8 are decoded)."""
    minus = _field(block, "--- ")
    plus = _field(block, "+++ ")
    halves = _header_halves(block[0][len(_GIT_HEADER):], errors)
    if minus is not None and plus is not None:
        old = halves[0] if minus == "/dev/null" else _strip_prefix(minus, errors)
        new = halves[1] if plus == "/dev/null" else _strip_prefix(plus, errors)
        return old, new
    renamed_from = _field(block, "rename from ") or _field(block, "copy from ")
    renamed_to = _field(block, "rename to ") or _field(block, "copy to ")
    if renamed_from is not None and renamed_to is not None:
        return unquote(renamed_from, errors), unquote(renamed_to, errors)
    return halves


def block_paths(block: list[str]) -> tuple[str, str]:
    """(old path, new path) of a header block decoded with surrogateescape, exact: the
    names git's pathspecs need, whatever their bytes."""
    return _block_paths(block, "surrogateescape")


def _field(block: list[str], prefix: str) -> str | None:
    for line in block:
        if line.startswith(prefix):
            # git ends ---/+++ names that contain a space with a tab.
            return line[len(prefix):].rstrip("\t")
    return None


def _header_halves(rest: str, errors: str = "replace") -> tuple[str, str]:
    # Without a rename both halves are the same path, so the middle splits them.
    half = (len(rest) - 1) // 2
    return _strip_prefix(rest[:half], errors), _strip_prefix(rest[half + 1:], errors)


def _strip_prefix(name: str, errors: str = "replace") -> str:
    name = unquote(name, errors)
    return name[2:] if name.startswith(("a/", "b/")) else name


def unquote(name: str, errors: str = "replace") -> str:
    """git C-quotes names with tabs, newlines, quotes or backslashes."""
    if len(name) >= 2 and name.startswith('"') and name.endswith('"'):
        raw, _ = codecs.escape_decode(name[1:-1].encode("utf-8", "surrogateescape"))
        return bytes(raw).decode("utf-8", errors)
    return name


# A file's stanza starts with this at the start of a line (a hunk's lines start with ' ', '+',
# '-' or '\\', so a file's own "diff --git" text is never taken for one).
_STANZA = re.compile(rb"^diff --git ", re.MULTILINE)


def split_stanzas(raw: bytes) -> tuple[bytes, list[bytes]]:
    """A diff's text before its first file, and each file's stanza, in order."""
    starts = [m.start() for m in _STANZA.finditer(raw)]
    if not starts:
        return raw, []
    ends = [*starts[1:], len(raw)]
    return raw[:starts[0]], [raw[start:end] for start, end in zip(starts, ends, strict=True)]
