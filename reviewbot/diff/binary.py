"""Binary by content, never by attributes: a diff the repository cannot hide from the rules.

git reports a file as binary ("Binary files a/x and b/x differ") when its content has a NUL
byte, but also when `.gitattributes` says `-diff`, `binary`, or names a diff driver the
user's config marks `binary` — and the repository under review writes `.gitattributes`.
Each file git reported as binary is decided again by git's own content rule (a NUL byte in
the first 8,000 bytes of either side), and the text ones are diffed again with `--text`
and spliced in place of their binary stanza. An ordinary diff has no binary stanza and
costs one search over its bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import msgspec

from reviewbot.code.languages import named_as_code
from reviewbot.diff.headers import block_paths, split_stanzas
from reviewbot.repo.git import GitRepo

# git's buffer_is_binary: a NUL byte in the first FIRST_FEW_BYTES of a side.
FIRST_FEW_BYTES = 8000
_BINARY_LINE = b"Binary files "
_GIT_HEADER = b"diff --git "

# Characters of paths one git call is given (Linux allows 128 KiB for one argument and
# 2 MiB for them all; Windows 32 KiB for the whole command line).
MAX_PATHS_CHARS = 24_000
# Diffs the files (paths) again as text; `renames` says whether to pair renames.
Rediff = Callable[[list[str], bool], bytes]


class BinaryStanza(msgspec.Struct, frozen=True):
    """One file git reported as binary: where its stanza is and what its two sides are."""

    start: int
    end: int
    # The header lines before "Binary files": the same lines start its text stanza.
    key: bytes
    old_id: str | None  # None: that side is absent (an added or deleted file)
    new_id: str | None
    old_path: str
    new_path: str
    renamed: bool


def binary_stanzas(raw: bytes) -> list[BinaryStanza]:
    """Every stanza of a diff that git reported as binary, in order."""
    found: list[BinaryStanza] = []
    at = raw.find(_BINARY_LINE)
    while at != -1:
        # A hunk line starts with ' ', '+', '-' or '\\': this is a header line.
        if at == 0 or raw[at - 1:at] == b"\n":
            stanza = _stanza(raw, at)
            if stanza is not None:
                found.append(stanza)
        at = raw.find(_BINARY_LINE, at + 1)
    return found


def _stanza(raw: bytes, at: int) -> BinaryStanza | None:
    start = raw.rfind(b"\n" + _GIT_HEADER, 0, at) + 1
    if not raw.startswith(_GIT_HEADER, start):
        return None
    end = raw.find(b"\n", at)
    end = len(raw) if end == -1 else end + 1
    lines = raw[start:at].decode("utf-8", "surrogateescape").split("\n")[:-1]
    ids = next((_ids(line) for line in lines if line.startswith("index ")), None)
    if ids is None:
        return None
    old_path, new_path = block_paths(lines)
    added = any(line.startswith("new file mode ") for line in lines)
    deleted = any(line.startswith("deleted file mode ") for line in lines)
    return BinaryStanza(start=start, end=end, key=raw[start:at],
                        old_id=None if added else ids[0], new_id=None if deleted else ids[1],
                        old_path=old_path, new_path=new_path,
                        renamed=any(line.startswith("rename from ") for line in lines))


def _ids(index_line: str) -> tuple[str, str] | None:
    """(old, new) object ids of an `index OLD..NEW[ MODE]` line."""
    old, dots, new = index_line[len("index "):].partition(" ")[0].partition("..")
    return (old, new) if dots and old and new else None


def text_ones(repo: GitRepo, stanzas: Sequence[BinaryStanza], *,
              worktree: bool) -> list[BinaryStanza]:
    """The stanzas whose two sides are text by content, read in one `git cat-file --batch`.

    `worktree`: a side git could not find in the object database (id 0000000, or the hash
    of an untracked file) is the work tree's file. A side that cannot be read at all counts
    as text: the file is shown, never hidden.
    """
    ids = sorted({i for s in stanzas for i in (s.old_id, s.new_id) if i and i.strip("0")})
    blobs = repo.read_objects(ids)
    from_disk: set[str] = set()

    def binary(object_id: str | None, path: str) -> bool:
        if object_id is None:
            return False
        data = blobs.get(object_id)
        if data is None and worktree:
            data = repo.read_worktree(path)
            from_disk.add(path)
        return data is not None and b"\0" in data[:FIRST_FEW_BYTES]

    found = {s: binary(s.old_id, s.old_path) or binary(s.new_id, s.new_path) for s in stanzas}
    encoded = _encoded(repo, sorted(from_disk)) if any(found.values()) else set()
    return [s for s, is_binary in found.items()
            if not is_binary or named_as_code(s.new_path)
            or (s.new_path in encoded and not binary(s.old_id, s.old_path))]


def _encoded(repo: GitRepo, paths: Sequence[str]) -> set[str]:
    """Work-tree files git re-encodes to UTF-8 on the way in (`working-tree-encoding`): a
    UTF-16 file has NUL bytes on disk, but git diffs (and stores) its UTF-8 text."""
    values = repo.attribute("working-tree-encoding", paths)
    return {path for path, value in values.items() if value not in ("unspecified", "unset")}


def as_text(repo: GitRepo, raw: bytes, rediff: Rediff, *, worktree: bool = False) -> bytes:
    """The diff with each text file git reported as binary diffed as text, in place."""
    stanzas = binary_stanzas(raw)
    text = text_ones(repo, stanzas, worktree=worktree) if stanzas else []
    if not text:
        return raw
    return splice(raw, text, rediffed(text, rediff))


def rediffed(text: Sequence[BinaryStanza], rediff: Rediff) -> dict[bytes, bytes]:
    """The text stanzas of these files by key (see `_rediffs`)."""
    found: dict[bytes, bytes] = {}
    for paths, renames in _rediffs(text):
        found |= text_stanzas(rediff(paths, renames))
    return found


def _rediffs(text: Sequence[BinaryStanza]) -> Iterator[tuple[list[str], bool]]:
    """(paths, renames) of the diffs to run again: the files the first diff paired as
    renames apart from the rest, which are diffed without rename detection (so that a
    smaller set of files cannot be paired differently); a few hundred kilobytes of paths a
    call at most, far below any system's limit on a command line."""
    for renames in (False, True):
        paths: set[str] = set()
        size = 0
        for stanza in (s for s in text if s.renamed == renames):
            more = {stanza.old_path, stanza.new_path} - paths
            paths |= more
            size += sum(len(path) + 1 for path in more)
            if size > MAX_PATHS_CHARS:
                yield sorted(paths), renames
                paths, size = set(), 0
        if paths:
            yield sorted(paths), renames


def patches_as_text(repo: GitRepo, patches: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """`as_text` for each commit's patch of `GitRepo.commit_patches`: one read of every
    binary-reported file's sides, and at most two `git log` calls for all the commits."""
    stanzas = {sha: binary_stanzas(patch) for sha, patch in patches}
    text = set(text_ones(repo, [s for found in stanzas.values() for s in found], worktree=False))
    if not text:
        return patches
    chosen = {sha: [s for s in found if s in text] for sha, found in stanzas.items()}
    shas = [sha for sha, found in chosen.items() if found]
    redone: dict[str, dict[bytes, bytes]] = {}
    for paths, renames in _rediffs(list(text)):
        for sha, patch in repo.text_patches(shas, paths, renames=renames):
            redone.setdefault(sha, {}).update(text_stanzas(patch))
    return [(sha, splice(patch, chosen[sha], redone.get(sha, {}))) for sha, patch in patches]


def text_stanzas(raw: bytes) -> dict[bytes, bytes]:
    """A text diff's stanzas, by their header lines before `--- `."""
    found: dict[bytes, bytes] = {}
    for stanza in split_stanzas(raw)[1]:
        minus = stanza.find(b"\n--- ")
        hunk = stanza.find(b"\n@@ ")
        if minus != -1 and (hunk == -1 or minus < hunk):
            found[stanza[:minus + 1]] = stanza
    return found


def splice(raw: bytes, stanzas: Sequence[BinaryStanza], text: dict[bytes, bytes]) -> bytes:
    """RAW with each stanza that has a text version replaced by it."""
    pieces: list[bytes] = []
    copied = 0
    for stanza in stanzas:
        replacement = text.get(stanza.key)
        if replacement is not None:
            pieces += [raw[copied:stanza.start], replacement]
            copied = stanza.end
    return b"".join([*pieces, raw[copied:]])
