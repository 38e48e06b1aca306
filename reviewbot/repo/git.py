"""Every git call reviewbot makes (STYLE.md: side effects at the edges).

Output is read as raw bytes and never stripped: unidiff counts hunk lines, and a
stripped trailing newline or blank context line gives "Hunk is shorter than
expected" on otherwise valid diffs.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reviewbot.errors import GitError
from reviewbot.lazy_re import lazy_re

# Settings that would change the shape of the diff text if a user's config set them.
_CONFIG_OVERRIDES = (
    "-c", "core.quotePath=false",
    "-c", "diff.noprefix=false",
    "-c", "diff.mnemonicPrefix=false",
    "-c", "color.ui=never",
)

# Fixed flags so the same change gives the same hunks (and unit ids) on every machine.
DIFF_FLAGS = (
    "--no-color", "--no-ext-diff", "--no-textconv", "--find-renames",
    "--src-prefix=a/", "--dst-prefix=b/", "--unified=3", "--submodule=short",
    "--no-relative",
)


# What `git show REV:PATH` says when the path is simply not at that revision (or in the index;
# a path under a folder the index lacks is "ambiguous"). Callers pass revisions they have
# already resolved, so these are about the path.
_ABSENT = lazy_re(r"does not exist|exists on disk, but not in|is in the index, but not|"
                     r"unknown revision or path not in the working tree")

# A revision that counts back from another (`HEAD~1000`, `main^^`): when the start resolves
# and the revision does not, the history is too short, and no fetch of the name helps.
_ANCESTRY = lazy_re(r"(?P<start>.+?)(?P<steps>(?:[~^][0-9]*)+)")


@dataclass(frozen=True)
class GitRepo:
    """A repository, addressed by its work-tree root."""

    root: Path
    # HEAD's commit, asked once a run (the empty check and the diff both need it).
    _head: list[str | None] = field(default_factory=list, compare=False, repr=False)

    def run(self, args: Sequence[str], *, ok_codes: tuple[int, ...] = (0,)) -> bytes:
        """Run `git ARGS` at the root and return stdout as raw bytes."""
        status, stdout, stderr = self._execute(args)
        if status not in ok_codes:
            message = stderr.strip() or f"exit status {status}"
            raise GitError(f"`git {' '.join(args)}` failed: {message}")
        return stdout

    def text(self, args: Sequence[str]) -> str:
        return self.run(args).decode("utf-8", "replace").strip()

    def rev_parse(self, rev: str) -> str | None:
        """The commit a revision names, or None when it names none."""
        out = self.run(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], ok_codes=(0, 1))
        sha = out.decode("ascii", "replace").strip()
        return sha or None

    def head(self) -> str | None:
        """HEAD's commit, or None in a repository with no commits yet (read once: a run
        reviews one state of the repository)."""
        if not self._head:
            self._head.append(self.rev_parse("HEAD"))
        return self._head[0]

    def empty_tree(self) -> str:
        # Computed rather than hard-coded: SHA-256 repositories have another id.
        return self.text(["hash-object", "-t", "tree", os.devnull])

    def merge_base(self, base: str, head: str) -> str | None:
        out = self.run(["merge-base", base, head], ok_codes=(0, 1))
        return out.decode("ascii", "replace").strip() or None

    def remotes(self) -> list[str]:
        return self.text(["remote"]).split()

    def fetch(self, remote: str, refspec: str) -> bool:
        """Fetch objects (never a checkout, never a prompt); False when git could not."""
        status, _, _ = self._execute(["fetch", "--no-tags", "--quiet", remote, refspec])
        return status == 0

    def is_shallow(self) -> bool:
        return self.text(["rev-parse", "--is-shallow-repository"]) == "true"

    def history_problem(self, rev: str) -> str | None:
        """Why a revision that counts back from a commit here names none (`HEAD~1000` past
        the first commit), with what to do; None when `rev` is not such a revision."""
        match = _ANCESTRY.fullmatch(rev)
        start = match["start"] if match else ""
        sha = self.rev_parse(start) if start else None
        if sha is None:
            return None
        length = self.count_commits(sha, first_parent=True)
        commits = f"{length} commit{'s' if length != 1 else ''}"
        if self.is_shallow():
            return (f"this shallow clone holds {commits} of {start}'s history; fetch the rest "
                    "first (`git fetch --unshallow`; in GitHub Actions use actions/checkout "
                    "with `fetch-depth: 0`).")
        # A full history: no fetch can bring a commit older than the first.
        return (f"{start}'s history has {commits} ({start}~{length - 1} is the first); name "
                f"a commit that exists (`git log --oneline {start}` lists them).")

    def current_branch(self) -> str | None:
        out = self.run(["symbolic-ref", "--quiet", "--short", "HEAD"], ok_codes=(0, 1))
        return out.decode("utf-8", "replace").strip() or None

    def diff(self, args: Sequence[str]) -> bytes:
        return self.run(["diff", *DIFF_FLAGS, *args])

    def index_tree(self) -> str:
        """The index as a tree object (what a commit would record), written into the object
        database like `git commit` does. `git diff --cached` may read a file from the work
        tree when its stat data says it is unchanged, and a file it cannot open there is
        then diffed as empty; a tree's blobs are the index's, whatever the work tree holds.

        `git write-tree` locks the index it reads to store the trees it computed, so two
        hooks at once (or a `git add` beside one) would fail on `index.lock`: it reads a
        private copy of the index instead, and the user's index is never written."""
        index = self._index_file()
        with tempfile.TemporaryDirectory(prefix="reviewbot-index-") as scratch:
            copy = Path(scratch) / "index"
            # No index yet reads as an empty one: write-tree gives the empty tree.
            with contextlib.suppress(FileNotFoundError):
                shutil.copyfile(index, copy)
            status, out, err = _git(self.root, ["write-tree"], env={"GIT_INDEX_FILE": str(copy)})
        if status == 0:
            return out.decode("ascii").strip()
        if "unmerged" in err:
            raise GitError("the index has unmerged paths (a merge, rebase or cherry-pick is "
                           "in progress): resolve them and `git add` them, then run "
                           "reviewbot again.")
        raise GitError(f"`git write-tree` failed, so the staged content cannot be read from "
                       f"the index: {err.strip()}")

    def _index_file(self) -> Path:
        """The index git reads here: GIT_INDEX_FILE (a hook of `git commit -a` gets its own),
        else `.git/index`; git says where in any other layout (a worktree, GIT_DIR)."""
        named = os.environ.get("GIT_INDEX_FILE")
        if named:
            return self.root / named
        if (self.root / ".git").is_dir() and "GIT_DIR" not in os.environ:
            return self.root / ".git" / "index"
        return self.root / self.text(["rev-parse", "--git-path", "index"])

    def has_staged_changes(self) -> bool:
        base = self.head() or self.empty_tree()
        status, _, _ = self._execute(["diff", "--cached", "--quiet", base, "--"])
        return status != 0

    def upstream_or_default(self) -> str | None:
        """The branch HEAD tracks, else the remote's default branch (`origin/HEAD`)."""
        tracked = self.run(["rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}"],
                           ok_codes=(0, 128)).decode("utf-8", "replace").strip()
        if tracked and self.rev_parse(tracked):
            return tracked
        remote_head = self.run(["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"],
                               ok_codes=(0, 1, 128)).decode("utf-8", "replace").strip()
        return remote_head if remote_head and self.rev_parse(remote_head) else None

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        status, _, _ = self._execute(["merge-base", "--is-ancestor", ancestor, descendant])
        return status == 0

    def count_commits(self, rev_range: str, *, first_parent: bool = False) -> int:
        return int(self.text(["rev-list", "--count",
                              *(["--first-parent"] if first_parent else []), rev_range]) or 0)

    def commit_patches(self, revs: Sequence[str], limit: int) -> list[tuple[str, bytes]]:
        """(sha, patch) of each non-merge commit of `git log REVS`, newest first, with no
        context lines: what each commit added, for checks that look at history."""
        return self._patches(["log", f"--max-count={limit}", "--no-merges", *revs, "--"])

    def text_patches(self, shas: Sequence[str], paths: Sequence[str], *,
                     renames: bool) -> list[tuple[str, bytes]]:
        """`commit_patches` of exactly these commits, limited to PATHS, every file diffed as
        text whatever the attributes say (`renames`: False for files the first diff did not
        pair, so that a smaller set cannot pair them now)."""
        return self._patches(["log", "--no-walk=unsorted", "--text",
                              *([] if renames else ["--no-renames"]), *shas, "--", *paths])

    def _patches(self, log: Sequence[str]) -> list[tuple[str, bytes]]:
        marker = b"\0reviewbot-commit "
        command, *rest = log
        out = self.run([command, "--format=%x00reviewbot-commit %H", "-p", *DIFF_FLAGS,
                        "--unified=0", *rest])
        patches: list[tuple[str, bytes]] = []
        for chunk in out.split(marker)[1:]:
            sha, _, patch = chunk.partition(b"\n")
            patches.append((sha.decode("ascii", "replace").strip(), patch.lstrip(b"\n")))
        return patches

    def untracked_files(self) -> list[str]:
        out = self.run(["ls-files", "--others", "--exclude-standard", "-z"])
        return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]

    def diff_untracked(self, path: str, *, text: bool = False) -> bytes:
        """A new-file diff for an untracked path, without touching the index (`text`: diffed
        as text whatever the attributes say)."""
        # --no-index exits 1 when the files differ, which is always the case here.
        args = ["diff", "--no-index", *DIFF_FLAGS, *(["--text"] if text else []), "--",
                os.devnull, path]
        return self.run(args, ok_codes=(0, 1))

    def read_blobs(self, rev: str, paths: Sequence[str]) -> dict[str, bytes | None]:
        """Many files at a revision ("" means the index) in one `git cat-file --batch`;
        None for a path absent there. Paths with a newline are left to `show`."""
        wanted = [p for p in paths if "\n" not in p and "\r" not in p]
        return dict(zip(wanted, self._batch([f"{rev}:{path}" for path in wanted]), strict=True))

    def read_objects(self, ids: Sequence[str]) -> dict[str, bytes | None]:
        """Blobs by (possibly abbreviated) object id, in one `git cat-file --batch`; None for
        an id that names no blob here (missing, ambiguous, or not a blob)."""
        return dict(zip(ids, self._batch(ids), strict=True))

    def _batch(self, names: Sequence[str]) -> list[bytes | None]:
        if not names:
            return []
        request = "".join(f"{name}\n" for name in names).encode("utf-8", "surrogateescape")
        out = self._input(["cat-file", "--batch"], request)
        found: list[bytes | None] = []
        offset = 0
        for _ in names:
            end = out.index(b"\n", offset)
            header = out[offset:end].split()
            offset = end + 1
            if len(header) != 3 or header[1] != b"blob":
                found.append(None)  # "missing", or a tree/submodule: not a file to read
                continue
            size = int(header[2])
            found.append(out[offset:offset + size])
            offset += size + 1
        return found

    def folders(self, rev: str, paths: Sequence[str]) -> frozenset[str] | None:
        """Which paths are folders in a commit, in one `git cat-file --batch-check`; None
        when the commit's tree is empty (an empty first commit: it holds nothing)."""
        wanted = [p for p in paths if "\n" not in p and "\r" not in p]
        request = "".join([f"{rev}^{{tree}}\n", *(f"{rev}:{path}\n" for path in wanted)])
        answers = self._input(["cat-file", "--batch-check"],
                              request.encode("utf-8", "surrogateescape")).splitlines()
        if answers[0].split(b" ")[2:3] == [b"0"]:
            return None
        return frozenset(path for path, answer in zip(wanted, answers[1:], strict=True)
                         if answer.split(b" ")[1:2] == [b"tree"])

    def symlinks(self, rev: str) -> dict[str, str]:
        """Every symlink of a commit's tree, or of the index when `rev` is "": path -> the
        object id of its target's name."""
        if rev:
            listed = self.run(["ls-tree", "-r", "-z", "--full-tree", rev])
        else:
            listed = self.run(["ls-files", "-s", "-z"])
        found: dict[str, str] = {}
        for entry in listed.split(b"\0"):
            meta, _, name = entry.partition(b"\t")
            fields = meta.split(b" ")
            if fields[0] == b"120000" and len(fields) >= 3:
                oid = fields[1] if not rev else fields[2]
                found[name.decode("utf-8", "surrogateescape")] = oid.decode("ascii")
        return found

    def tree_mode(self, rev: str, path: str) -> str | None:
        """The mode of a path's entry in a commit's tree (`120000` a symlink, `100644` a
        file, `040000` a folder), None when the tree has no such entry."""
        listed = self.run(["ls-tree", "-z", "--full-tree", rev, "--", path])
        for entry in listed.split(b"\0"):
            meta, _, name = entry.partition(b"\t")
            if os.fsdecode(name) == path:
                return meta.split(b" ", 1)[0].decode("ascii")
        return None

    def git_dirs(self) -> tuple[Path, ...]:
        """The repository's git directories, symlinks resolved: its own (`.git`, or where a
        `.git` file or GIT_DIR leads) and the one a linked worktree shares with the others."""
        listed = self.text(["rev-parse", "--git-dir", "--git-common-dir"]).splitlines()
        # Relative to the root where git ran, or absolute: joining handles both.
        return tuple(dict.fromkeys((self.root / line).resolve() for line in listed if line))

    def show(self, rev: str, path: str) -> bytes | None:
        """A file's bytes at a revision ("" means the index), or None if it is not there.

        Any other failure (a bad revision, a corrupt object) is a GitError, not "absent".
        """
        status, out, err = self._execute(["show", f"{rev}:{path}"])
        if status == 0:
            return out
        if _ABSENT.search(err):
            return None
        raise GitError(f"`git show {rev}:{path}` failed: {err.strip()}")

    def grep(self, needle: str, source: str | None, *,
             word: bool = True) -> list[tuple[str, int, str]]:
        """Fixed-string hits in tracked text files, as (path, line, text).

        `source`: None searches the work tree, "" the index, anything else that commit.
        Tracked files only, so .gitignore'd and untracked files are never read.
        """
        # `-I` (and grep's own "Binary file matches") follow the repository's `-diff` and
        # `binary` attributes, which would hide any file from the search: every file is
        # searched as text, and a hit whose line holds a NUL byte (binary content) is left out.
        args = ["grep", "-n", "--text", "--null", "--no-color", "-F",
                *(["-w"] if word else []), "-e", needle]
        if source == "":
            args.append("--cached")
        elif source:
            args.append(source)
        out = self.run([*args, "--"], ok_codes=(0, 1))
        prefix = f"{source}:" if source else ""
        hits: list[tuple[str, int, str]] = []
        for row in out.decode("utf-8", "replace").split("\n"):
            parts = row.split("\0", 2)
            if len(parts) == 3 and parts[1].isdigit() and "\0" not in parts[2]:
                path = parts[0].removeprefix(prefix) if prefix else parts[0]
                hits.append((path, int(parts[1]), parts[2].rstrip("\r")))
        return hits

    def tracked_files(self, source: str | None) -> list[str]:
        """Every tracked file: of the index ("" or None, the work tree's tracked files) or
        of a commit."""
        if source:
            out = self.run(["ls-tree", "-r", "-z", "--name-only", source, "--"])
        else:
            out = self.run(["ls-files", "-z", "--"])
        return [p for p in out.decode("utf-8", "replace").split("\0") if p]

    def tracks(self, folder: Path) -> bool:
        """Whether git tracks any file under a folder of the work tree."""
        try:
            relative = folder.resolve().relative_to(self.root)
        except ValueError:
            return False
        out = self.run(["ls-files", "-z", "--", str(relative)], ok_codes=(0, 128))
        return bool(out)

    def attribute(self, name: str, paths: Sequence[str]) -> dict[str, str]:
        """The value of one attribute for each path, as the work tree's attributes give it
        ("unspecified", "set", "unset" or the value)."""
        if not paths:
            return {}
        out = self.run(["check-attr", "-z", name, "--", *paths])
        fields = out.decode("utf-8", "surrogateescape").split("\0")
        return {fields[i]: fields[i + 2] for i in range(0, len(fields) - 2, 3)}

    def read_worktree(self, path: str) -> bytes | None:
        """A file from the working tree as git would store it: a regular file's bytes, a
        symlink's target *name* (never what it points at, inside the repository or out);
        None for anything else, or when a folder on the way is a symlink."""
        target = self.root / path
        try:
            if target.parent.resolve() != target.parent:
                return None
            if target.is_symlink():
                return os.fsencode(target.readlink())
            return target.read_bytes() if target.is_file() else None
        except (OSError, ValueError):
            return None

    def _input(self, args: Sequence[str], data: bytes) -> bytes:
        status, stdout, stderr = _git(self.root, args, data)
        if status != 0:
            raise GitError(f"`git {' '.join(args)}` failed: {stderr.strip()}")
        return stdout

    def _execute(self, args: Sequence[str]) -> tuple[int, bytes, str]:
        """(status, stdout bytes, stderr text)."""
        return _git(self.root, args)


# Git's messages in English whatever the user's locale: `_ABSENT` and the errors below read
# them. Every pathspec is a literal path: a file name (or a model's tool argument) such as
# `:(glob)**` or `:!x` is never git syntax. Set for git only, never for reviewbot itself.
# A fetch never waits for a password on a terminal.
_GIT_ENV = {"LC_ALL": "C", "LANGUAGE": "C", "GIT_LITERAL_PATHSPECS": "1",
            "GIT_TERMINAL_PROMPT": "0"}


def _git(cwd: Path, args: Sequence[str], data: bytes | None = None,
         env: dict[str, str] | None = None) -> tuple[int, bytes, str]:
    """Run git directly: a subprocess is all a git call needs, and GitPython's import alone
    was a twentieth of a small hook's time. `env` adds to the environment git gets."""
    try:
        result = subprocess.run(["git", *_CONFIG_OVERRIDES, *args], cwd=cwd, input=data,
                                stdin=None if data is not None else subprocess.DEVNULL,
                                capture_output=True, check=False,
                                env={**os.environ, **_GIT_ENV, **(env or {})})
    except FileNotFoundError as exc:
        if exc.filename != "git":
            raise GitError(f"{cwd} does not exist (git runs there).") from exc
        raise GitError("git was not found. Install git and make sure it is on PATH.") from exc
    return result.returncode, result.stdout, result.stderr.decode("utf-8", "replace")


def open_repo(path: Path) -> GitRepo:
    """Open the repository containing PATH, with a fix-it message when there is none."""
    if not path.exists():
        raise GitError(f"{path} does not exist. Pass --repo with a repository path.")
    folder = path if path.is_dir() else path.parent
    status, out, err = _git(folder, ["rev-parse", "--is-bare-repository", "--show-toplevel"])
    if status != 0 and "not a git repository" in err:
        raise GitError(
            f"{path} is not inside a git repository. Run reviewbot from a repository, "
            "or pass --repo PATH.",
        )
    if status != 0 and "dubious ownership" in err:
        # Another user owns the repository (a container, a shared checkout): git's own
        # message names the folder and the command that trusts it.
        fix = next((line.strip() for line in err.splitlines() if "safe.directory" in line), "")
        raise GitError(f"git refuses to work in {path}: another user owns the repository "
                       "(\"dubious ownership\"). If you trust it, run: "
                       f"{fix or 'git config --global --add safe.directory PATH'}")
    answers = out.decode("utf-8", "surrogateescape").splitlines()
    if status != 0 or answers[:1] == ["true"] or len(answers) < 2:
        raise GitError(f"{path} is a bare repository or has no work tree; "
                       "reviewbot needs a work tree.")
    return GitRepo(root=Path(answers[1]).resolve())
