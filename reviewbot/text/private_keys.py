"""Private keys in text: the armour that starts one (PEM, SSH2, PuTTY), the block it runs
to, and whether key material goes with an armour. Redaction masks what is found here, and
the secrets rule reports it; both read a block the same way.

On long text (a minified line of megabytes) a block is looked for only where an armour
starts, and runs to the first footer after it: the whole pattern tried at every place, or
its lazy run to the text's end from every armour, cost seconds to minutes.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice

from reviewbot.code.whole_text import LONG_TEXT, utf8
from reviewbot.lazy_re import lazy_re

# A private key's armour: PEM's `-----BEGIN ... PRIVATE KEY-----`, SSH2's `---- BEGIN SSH2
# ENCRYPTED PRIVATE KEY ----`, PuTTY's `PuTTY-User-Key-File-2: ssh-rsa`.
KEY_ARMOUR = lazy_re(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|"
                        r"---- BEGIN SSH2 [A-Z ]*PRIVATE KEY ----|PuTTY-User-Key-File-\d+:")
# What may follow the armour on a line of key material, in every layout a key reader accepts
# (openssl reads any line width, and a blank line after the armour) or a program holds it in
# (a string per line, `\n` escapes, `+` between them): base64, a header (`Proc-Type:`,
# PuTTY's `Private-Lines:`), or nothing.
_KEY_LINE = (r"[ \t]*(?:(?:[\"'`]?(?:[A-Za-z0-9+/]+={0,2})?(?:\\[nr])*[\"'`]?[ \t]*"
             r"[+,;]?[ \t]*)|(?:Proc-Type|DEK-Info|Comment|[A-Z][A-Za-z-]*-Lines|"
             r"Encryption|Private-MAC):[^\n]*)\r?")
# A block with its footer, or one cut short: its armour's line and the lines of key material
# after it, not the rest of the text (a file name holding the header in a summary's table
# took the summary's end, marker and all, with it).
PRIVATE_KEY = lazy_re(
    rf"(?:{KEY_ARMOUR.pattern})"
    r"(?:.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|---- END SSH2 [A-Z ]*PRIVATE KEY ----)"
    rf"|[^\n]*(?:\n{_KEY_LINE}(?=\n|\Z))*)", re.DOTALL)
_KEY_BODY_LINE = lazy_re(_KEY_LINE)
# PRIVATE_KEY's parts, for long text: a footer, and a block cut short (no footer after it).
_KEY_FOOTER = lazy_re(r"-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|"
                      r"---- END SSH2 [A-Z ]*PRIVATE KEY ----")
_KEY_CUT = lazy_re(rf"(?:{KEY_ARMOUR.pattern})[^\n]*(?:\n{_KEY_LINE}(?=\n|\Z))*")
_HEADER = r"\s*(?:Proc-Type|DEK-Info|Comment|[A-Z][A-Za-z-]*-Lines|Encryption):"
_KEY_HEADER = lazy_re(_HEADER)
_KEY_NOISE = lazy_re(r"\\[nr]|[^A-Za-z0-9+/]")
# Between two pieces of one key on a line: a `\\n` escape, or the end of one string literal
# and the start of the next (`"..." + "..."`, `"..." "..."`).
_JOIN = r"\\[nr]|[\"'`]\s*\+?\s*[\"'`]"
_KEY_JOINS = lazy_re(_JOIN)
_KEY_RUN = lazy_re(r"[A-Za-z0-9+/]{32,}")
# Key material: the smallest key (an ed25519 key, PKCS#8) has 64 characters of it.
KEY_MATERIAL = 32
# How much of a long line after an armour is read for its key (a 4096-bit key in one string
# is about 3,300 characters).
KEY_WINDOW = 8192
# How many lines after the armour are read for it (a blank line and headers come first).
_KEY_LOOKAHEAD = 8


# Where a key's material starts on a long line of code: within this many characters of its
# armour, once `\\n`s and joined literals are taken out (`"...\\n" + "MIIE..."`), or
# `' + NL + '` between them; an encrypted key's header as near. Farther on is the rest of a
# bundle, whose library may hold armour constants.
_MATERIAL_START = 64
_HEADER_NEAR = lazy_re(rf"(?s).{{0,{_MATERIAL_START}}}?{_HEADER}")
# PuTTY's armour line goes on with the key's algorithm (`ssh-ed25519`).
_ALGORITHM = lazy_re(r"^[ \t]*[\w@.-]*")


def key_material_at(armour: str, rest: str, following: Iterable[str]) -> bool:
    """`key_follows` for an armour on a long line of code (a minified bundle's megabytes
    can follow it): its material, or an encrypted key's header, starts near the armour,
    before a footer; with nothing but spaces after the armour, the lines after hold it."""
    if armour.startswith("PuTTY"):
        rest = _ALGORITHM.sub("", rest, count=1)
    if not rest.strip():
        return key_follows("", following)
    own = re.split(r"-----END|---- END", rest[:KEY_WINDOW], maxsplit=1)[0]
    run = _KEY_RUN.search(_KEY_JOINS.sub("", own))
    return ((run is not None and run.start() <= _MATERIAL_START)
            or _HEADER_NEAR.match(own) is not None)


def key_follows(rest: str, following: Iterable[str]) -> bool:
    """Whether key material goes with an armour: `rest` is its line after the armour (a key
    in one string, with `\\n`s), `following` the lines after it. Read as PRIVATE_KEY reads a
    block (so redaction masks what the rules report): lines of base64 in any width, quoted or
    not, a blank line, headers; an encrypted key's headers are a key."""
    own = re.split(r"-----END|---- END", rest, maxsplit=1)[0]
    if _KEY_RUN.search(_KEY_JOINS.sub("", own)):
        return True
    material = 0
    for line in islice(following, _KEY_LOOKAHEAD):
        if _KEY_HEADER.match(line):
            return True
        if "-----END" in line or "---- END" in line or not _KEY_BODY_LINE.fullmatch(line):
            break
        material += len(_KEY_NOISE.sub("", line))
        if material >= KEY_MATERIAL:
            return True
    return False


def private_keys(text: str) -> Iterator[re.Match[str]]:
    """PRIVATE_KEY's matches. On long text the pattern is tried only where an armour can
    start (`re` tries its alternatives at every place of a minified line's megabytes; a
    plain search for two words is a few milliseconds)."""
    if len(text) < LONG_TEXT:
        yield from PRIVATE_KEY.finditer(text)
        return
    # A block runs to the first footer after its armour: with none after it, the pattern's
    # lazy run to a footer would read to the text's end from every armour (many armours
    # and no footer took minutes), so the block cut short is matched alone, as it ends.
    armours = _armour_starts(text)
    if not armours:
        return  # most long text (a minified bundle): no footer need be looked for
    footers = [(at, found.end()) for at in _line_starts_of(text, ("-----END", "---- END SSH2"))
               if (found := _KEY_FOOTER.match(text, at)) is not None]
    starts = [at for at, _ in footers]
    end = 0
    for at in armours:
        if at < end:
            continue
        after = bisect.bisect_left(starts, at)
        match = (PRIVATE_KEY.match(text, at, footers[after][1]) if after < len(footers)
                 else _KEY_CUT.match(text, at))
        if match is not None:
            end = match.end()
            yield match


def _line_starts_of(text: str, words: tuple[str, ...]) -> list[int]:
    """Where each of the words occurs in the text, in order."""
    found: list[int] = []
    for word in words:
        at = text.find(word)
        while at != -1:
            found.append(at)
            at = text.find(word, at + 1)
    return sorted(found)


def _may_start_key(line: str) -> bool:
    """Whether a key's armour can start on the line: a plain search of its bytes (shared
    with the other searches of a long line) or of its text."""
    if len(line) >= LONG_TEXT:
        data = utf8(line)
        return b"BEGIN" in data or b"PuTTY-User-Key-File-" in data
    return "BEGIN" in line or "PuTTY-User-Key-File-" in line


def _armour_starts(text: str) -> list[int]:
    """Where `-----BEGIN`, `---- BEGIN` (SSH2) and `PuTTY-User-Key-File-` start."""
    found: list[int] = []
    for word, before in (("BEGIN", ("-----", "---- ")), ("PuTTY-User-Key-File-", ("",))):
        at = text.find(word)
        while at != -1:
            found += [at - len(dashes) for dashes in before
                      if at >= len(dashes) and text.startswith(dashes, at - len(dashes))]
            at = text.find(word, at + 1)
    return sorted(found)


def block_lines(lines: Sequence[str]) -> set[str]:
    """The lines inside multi-line secrets (private-key blocks) of consecutive lines.

    Structured data (a diff's lines, one string each) would hide a key's body from a pass
    that sees one string at a time: these lines become known values of the Redactor."""
    if not any(_may_start_key(line) for line in lines):
        return set()  # no armour: the lines need not be joined (a minified line is megabytes)
    text = "\n".join(lines)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    found: set[str] = set()
    for match in private_keys(text):
        first = bisect.bisect_right(starts, match.start()) - 1
        last = bisect.bisect_right(starts, max(match.end() - 1, match.start())) - 1
        found |= {line.strip() for line in lines[first:last + 1] if len(line.strip()) >= 8}
    return found
