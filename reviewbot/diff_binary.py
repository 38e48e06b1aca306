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

import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from reviewbot.diff_headers import block_paths
from reviewbot.git import GitRepo

# git's buffer_is_binary: a NUL byte in the first FIRST_FEW_BYTES of a side.
FIRST_FEW_BYTES = 8000
_BINARY_LINE = b"Binary files "
_GIT_HEADER = b"diff --git "
_INDEX = re.compile(r"^index ([0-9a-f]+)\.\.([0-9a-f]+)(?: \d+)?$")

# Diffs the files (paths) again as text; `renames` says whether to pair renames.
Rediff = Callable[[list[str], bool], bytes]


@dataclass(frozen=True)
class BinaryStanza:
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
    ids = next((m.groups() for m in map(_INDEX.match, lines) if m), None)
    if ids is None:
        return None
    old_path, new_path = block_paths(lines)
    added = any(line.startswith("new file mode ") for line in lines)
    deleted = any(line.startswith("deleted file mode ") for line in lines)
    return BinaryStanza(start=start, end=end, key=raw[start:at],
                        old_id=None if added else ids[0], new_id=None if deleted else ids[1],
                        old_path=old_path, new_path=new_path,
                        renamed=any(line.startswith("rename from ") for line in lines))


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
            if not is_binary or (s.new_path in encoded and not binary(s.old_id, s.old_path))]


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
    """(paths, renames) of at most two diffs: one for the files the first diff paired as
    renames, and one without rename detection for the rest (so that a smaller set of files
    cannot be paired differently)."""
    for renames in (False, True):
        paths = sorted({p for s in text if s.renamed == renames for p in (s.old_path, s.new_path)})
        if paths:
            yield paths, renames


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
    starts = [m.start() + 1 for m in re.finditer(b"\n" + re.escape(_GIT_HEADER), raw)]
    starts = ([0] if raw.startswith(_GIT_HEADER) else []) + starts + [len(raw)]
    for start, end in itertools.pairwise(starts):
        stanza = raw[start:end]
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
