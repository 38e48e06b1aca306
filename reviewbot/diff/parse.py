"""Step 1: the change, as one ReviewUnit per hunk (docs/ARCHITECTURE.md, seed 004 section 1).

`collect` asks git for the raw diff of a mode; `parse_units` is a pure function from
diff bytes to units, so it can be tested and replayed without a repository.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator

from unidiff.errors import UnidiffParseError
from unidiff.patch import Hunk as UnidiffHunk
from unidiff.patch import PatchedFile, PatchSet

from reviewbot.code.languages import detect_language, shebang_language
from reviewbot.code.long_lines import MINIFIED_LINE_CHARS
from reviewbot.code.whole_text import utf8
from reviewbot.diff.binary import as_text, binary_stanzas, patches_as_text, text_ones
from reviewbot.diff.headers import block_paths, decode_path, normalise_headers, split_stanzas
from reviewbot.diff.languages import NewSide, settle
from reviewbot.errors import GitError, UsageError
from reviewbot.repo.git import GitRepo
from reviewbot.schema.records import LineKind, PatchType
from reviewbot.schema.units import (
    ChangeRequest,
    DiffLine,
    DiffResult,
    HistoryLine,
    Hunk,
    LineNumbers,
    Metrics,
    ReviewUnit,
)

_SUBMODULE_MODE = "160000"
_SYMLINK_MODE = "120000"
_KINDS: dict[str, LineKind] = {"+": "add", "-": "del", " ": "ctx", "": "ctx"}


# Bounds on the per-commit history check of a pr range.
MAX_HISTORY_COMMITS = 500
MAX_HISTORY_LINES = 200_000


def collect(repo: GitRepo, request: ChangeRequest) -> DiffResult:
    """Run git for the requested mode and parse its diff into units."""
    collector = _COLLECTORS[request.mode]
    base_rev, head_rev, base_branch, raw = collector(repo, request)
    units = parse_units(raw)
    exact = raw_paths(raw, units)
    # What each file is comes from the reviewed side, not from the lines the diff shows.
    units, links, notes = settle(NewSide(repo, request, head_rev, exact), units)
    history: tuple[HistoryLine, ...] = ()
    if request.check_history and head_rev is not None:
        history, said = _history(repo, request, base_rev, head_rev, units)
        notes += said
    return DiffResult(
        request=request,
        repo_root=str(repo.root),
        base_rev=base_rev,
        head_rev=head_rev,
        base_branch=base_branch,
        units=units,
        history=history,
        notes=tuple(notes),
        raw_paths=exact,
        links=links,
    )


def _history(repo: GitRepo, request: ChangeRequest, base_rev: str, head_rev: str,
             units: tuple[ReviewUnit, ...]) -> tuple[tuple[HistoryLine, ...], list[str]]:
    """Lines some commit of the range added that the change's result no longer has: what a
    secret added in one commit and deleted in the next leaves behind in the pushed history."""
    revs = [head_rev] if request.base_is_root else [head_rev, f"^{base_rev}"]
    patches = patches_as_text(repo, repo.commit_patches(revs, MAX_HISTORY_COMMITS + 1))
    notes = []
    if len(patches) > MAX_HISTORY_COMMITS:
        notes.append(f"history: only the newest {MAX_HISTORY_COMMITS} commits of the range "
                     "were checked for secrets")
        patches = patches[:MAX_HISTORY_COMMITS]
    if len(patches) < 2:
        return (), notes  # one commit: its additions are the change itself
    kept = {(u.file_path, line.text) for u in units if u.hunk for line in u.hunk.added()}
    found: list[HistoryLine] = []
    for sha, patch in patches:
        for unit in parse_units(patch):
            for line in unit.hunk.added() if unit.hunk else ():
                if (unit.file_path, line.text) not in kept:
                    found.append(HistoryLine(commit=sha, file_path=unit.file_path,
                                             line=line.new_lineno or 0, text=line.text))
        if len(found) > MAX_HISTORY_LINES:
            notes.append(f"history: stopped after {MAX_HISTORY_LINES:,} removed-again lines")
            break
    return tuple(found[:MAX_HISTORY_LINES]), notes


_Collected = tuple[str, str | None, str | None, bytes]


def _diff(repo: GitRepo, args: list[str], *, worktree: bool = False) -> bytes:
    """`git diff ARGS`, with every file whose content is text shown as text, whatever the
    repository's attributes say (diff/binary.py), and no rename that changes a language."""
    def rediff(paths: list[str], renames: bool) -> bytes:
        return repo.diff(["--text", *([] if renames else ["--no-renames"]), *args, "--", *paths])
    raw = as_text(repo, repo.diff([*args, "--"]), rediff, worktree=worktree)
    kept, moved = _language_renames(raw)
    return kept + repo.diff(["--no-renames", *args, "--", *moved]) if moved else raw


def _language_renames(raw: bytes) -> tuple[bytes, list[str]]:
    """The diff without its renames that change a file's language (`notes.txt` to
    `notes.py`), and both paths of each: under its new name the file's code was never read
    as code, so it is diffed again as a deletion and an addition (every line added)."""
    if b"\nrename from " not in raw:
        return raw, []
    preamble, stanzas = split_stanzas(raw)
    kept, moved = [preamble], []
    for stanza in stanzas:
        head = stanza.split(b"\n@@ ", 1)[0]
        if b"\nrename from " in head:
            lines = head.decode("utf-8", "surrogateescape").split("\n")
            old, new = block_paths(lines)
            if detect_language(old) != detect_language(new):
                moved += [old, new]
                continue
        kept.append(stanza)
    return b"".join(kept), moved


def _untracked(repo: GitRepo, path: str) -> bytes:
    raw = repo.diff_untracked(path)
    stanzas = binary_stanzas(raw)
    if stanzas and text_ones(repo, stanzas, worktree=True):
        return repo.diff_untracked(path, text=True)
    return raw


def _collect_staged(repo: GitRepo, request: ChangeRequest) -> _Collected:
    # With no commits yet the old side is the empty tree: every staged file is new. The new
    # side is the index as a tree, never the work tree (GitRepo.index_tree).
    base = repo.head() or repo.empty_tree()
    return base, None, repo.current_branch(), _diff(repo, [base, repo.index_tree()])


def _collect_working(repo: GitRepo, request: ChangeRequest) -> _Collected:
    base = repo.empty_tree() if request.base_is_root else (repo.head() or repo.empty_tree())
    raw = _diff(repo, [base], worktree=True)
    if request.include_untracked:
        raw += b"".join(_untracked(repo, path) for path in repo.untracked_files())
    return base, None, repo.current_branch(), raw


def _collect_pr(repo: GitRepo, request: ChangeRequest) -> _Collected:
    head_name = request.head or "HEAD"
    if request.base_is_root:
        head_sha = _require_commit(repo, head_name, "--head")
        root = repo.empty_tree()
        return root, head_sha, None, _diff(repo, [root, head_sha])
    if not request.base:
        raise UsageError("--mode pr needs --base REV (the branch the change will merge into).")
    base_sha = _require_commit(repo, request.base, "--base")
    head_sha = _require_commit(repo, head_name, "--head")
    # Like GitHub's "files changed": diff from the merge base, not from the base tip.
    merge_base = repo.merge_base(base_sha, head_sha)
    if merge_base is None:
        raise GitError(_no_merge_base_message(repo, request.base, head_name))
    return merge_base, head_sha, request.base, _diff(repo, [merge_base, head_sha])


def _require_commit(repo: GitRepo, rev: str, flag: str) -> str:
    sha = repo.rev_parse(rev)
    if sha is None:
        raise GitError(missing_commit(repo, rev, flag))
    return sha


def missing_commit(repo: GitRepo, rev: str, given: str, why: str = "") -> str:
    """What to say about a revision the user gave that names no commit here (`why`: what
    it was needed for): fetch it, unless no fetch could bring it."""
    said = f"{given} {rev} is not a commit in this repository{why}"
    problem = repo.history_problem(rev)
    if problem is not None:
        return f"{said}: {problem}"
    remotes = repo.remotes()
    if not remotes:
        return (f"{said}, and the repository has no remote to fetch it from: name a branch, "
                "tag or commit it has (`git log --oneline --all` lists them).")
    return (f"{said}. Fetch it first (`{fetch_command(rev, remotes)}`; in GitHub Actions use "
            "actions/checkout with `fetch-depth: 0`).")


def fetch_command(rev: str, remotes: list[str]) -> str:
    """The fetch that makes `rev` resolve: `origin/main` is the branch `main` of the remote
    `origin` (`git fetch origin main`), never a ref named `origin/main` on it."""
    remote, _, branch = rev.partition("/")
    if branch and remote in remotes:
        return f"git fetch {remote} {branch}"
    return f"git fetch {remotes[0] if remotes else 'origin'} {rev}"


def _no_merge_base_message(repo: GitRepo, base: str, head: str) -> str:
    if repo.is_shallow():
        return (
            f"{base} and {head} have no merge base in this shallow clone. Fetch the "
            "history with `git fetch --unshallow` (in GitHub Actions: actions/checkout "
            "with `fetch-depth: 0`)."
        )
    return f"{base} and {head} have no common history; there is no merge base to diff from."


_COLLECTORS: dict[str, Callable[[GitRepo, ChangeRequest], _Collected]] = {
    "staged": _collect_staged,
    "working": _collect_working,
    "pr": _collect_pr,
}


def parse_units(raw: bytes) -> tuple[ReviewUnit, ...]:
    """Units of a unified git diff. Non-UTF-8 bytes are replaced, never fatal."""
    return tuple(unit for patched in _patch_set(raw, "replace")
                 for unit in _file_units(patched))


def _patch_set(raw: bytes, errors: str) -> PatchSet:
    text = normalise_headers(raw.decode("utf-8", errors))
    try:
        return PatchSet(text)
    except UnidiffParseError as exc:
        raise GitError(f"could not parse the diff git produced: {exc}") from exc


def raw_paths(raw: bytes, units: tuple[ReviewUnit, ...]) -> dict[str, str]:
    """Paths that are not UTF-8, as the run shows them (U+FFFD for a bad byte) -> their
    bytes, hex: what reading the file from git or the disk needs. Empty for most changes."""
    if not any("\ufffd" in unit.file_path for unit in units):
        return {}
    found: dict[str, str] = {}
    for shown, exact in zip(_patch_set(raw, "replace"), _patch_set(raw, "surrogateescape"),
                            strict=True):
        for side in ("target_file", "source_file"):
            path = _clean_path(getattr(shown, side))
            if "\ufffd" in path:
                name = _clean_path(getattr(exact, side))
                found[path] = name.encode("utf-8", "surrogateescape").hex()
    return found


def _file_units(patched: PatchedFile) -> Iterator[ReviewUnit]:
    path = _clean_path(patched.target_file if patched.target_file != "/dev/null"
                       else patched.source_file)
    old_path = None if patched.source_file == "/dev/null" else _clean_path(patched.source_file)
    patch_type = _patch_type(patched)
    # What every unit of the file shares; each unit adds its id, metrics and hunk.
    base = ReviewUnit(
        unit_id="", file_path=path, patch_type=patch_type,
        old_path=old_path if old_path != path else None,
        language=_language(patched, path),
        old_mode=patched.source_mode if patched.source_file != "/dev/null" else None,
        new_mode=patched.target_mode if patched.target_file != "/dev/null" else None)
    hunks = list(patched)
    if patched.is_binary_file or not hunks:
        yield _whole_file_unit(patched, base)
        return
    for hunk in hunks:
        yield _hunk_unit(hunk, len(hunks), base)


def _patch_type(patched: PatchedFile) -> PatchType:
    if patched.is_binary_file:
        return "binary"
    if patched.source_file == "/dev/null":
        return "add"
    if patched.target_file == "/dev/null":
        return "delete"
    if patched.is_rename:
        return "rename"
    if not list(patched) and patched.source_mode != patched.target_mode:
        return "mode"
    return "modify"


def _language(patched: PatchedFile, path: str) -> str:
    mode = patched.target_mode or patched.source_mode
    if mode == _SUBMODULE_MODE:
        return "submodule"
    if mode == _SYMLINK_MODE:
        return "symlink"
    language = detect_language(path)
    first = next(iter(patched), None)
    if language == "text" and first is not None and first.target_start == 1 and len(first):
        # A script without a suffix: its `#!` line says what it is.
        top = first[0]
        if not top.is_removed:
            return shebang_language(top.value) or language
    return language


def _hunk_unit(hunk: UnidiffHunk, hunk_count: int, base: ReviewUnit) -> ReviewUnit:
    ours = _convert_hunk(hunk)
    metrics = Metrics(added_lines=len(ours.added()), removed_lines=len(ours.removed()),
                      hunk_count=hunk_count)
    line_numbers = LineNumbers(
        new_compact=compact_range(ours.new_start, ours.new_length),
        old_compact=compact_range(ours.old_start, ours.old_length),
    )
    unit_id = _unit_id(base.file_path, base.old_path, base.patch_type, ours.header,
                       _hunk_bytes(ours))
    return base.replace(unit_id=unit_id, metrics=metrics, line_numbers=line_numbers, hunk=ours)


def _whole_file_unit(patched: PatchedFile, base: ReviewUnit) -> ReviewUnit:
    # The git header (index line, modes, similarity) is what identifies such a change.
    header = "".join(patched.patch_info or [])
    return base.replace(unit_id=_unit_id(base.file_path, base.old_path, base.patch_type,
                                         header))


def _convert_hunk(hunk: UnidiffHunk) -> Hunk:
    lines: list[DiffLine] = []
    for line in hunk:
        if line.line_type == "\\":
            if lines:
                lines[-1] = lines[-1].replace(no_newline=True)
            continue
        lines.append(DiffLine(
            kind=_KINDS.get(line.line_type, "ctx"),
            text=line.value[:-1] if line.value.endswith("\n") else line.value,
            old_lineno=line.source_line_no,
            new_lineno=line.target_line_no,
        ))
    header = _hunk_header(hunk)
    return Hunk(
        header=header, old_start=hunk.source_start, old_length=hunk.source_length,
        new_start=hunk.target_start, new_length=hunk.target_length,
        section=hunk.section_header or "", lines=tuple(lines),
    )


def _hunk_header(hunk: UnidiffHunk) -> str:
    section = f" {hunk.section_header}" if hunk.section_header else ""
    return (f"@@ -{hunk.source_start},{hunk.source_length} "
            f"+{hunk.target_start},{hunk.target_length} @@{section}")


def compact_range(start: int, length: int) -> str:
    """"L20-L35" for a range of lines, "L20" for one, "" for none."""
    if length <= 0:
        return ""
    end = start + length - 1
    return f"L{start}" if end == start else f"L{start}-L{end}"


def _unit_id(path: str | None, old_path: str | None, patch_type: str, header: str,
             body: Iterable[bytes] = ()) -> str:
    digest = hashlib.sha256()
    for part in (path or "", old_path or "", patch_type, header):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    for piece in body:
        digest.update(piece)
    digest.update(b"\0")
    return digest.hexdigest()[:16]


_MARKS = {"add": b"+", "del": b"-", "ctx": b" "}


def _hunk_bytes(hunk: Hunk) -> Iterator[bytes]:
    """`hunk.text()` as UTF-8, piece by piece: the text of a hunk of megabytes (a minified
    line) is never built, and a long line's bytes are the ones its later readers share."""
    yield f"{hunk.header}\n".encode("utf-8", "surrogatepass")
    for line in hunk.lines:
        yield _MARKS[line.kind]
        yield (utf8(line.text) if len(line.text) > MINIFIED_LINE_CHARS
               else line.text.encode("utf-8", "surrogatepass"))
        yield b"\n"


def _clean_path(raw: str) -> str:
    """A repository path from a (normalised) diff header, without its a/ or b/ prefix."""
    path = decode_path(raw)
    return path[2:] if path.startswith(("a/", "b/")) else path
