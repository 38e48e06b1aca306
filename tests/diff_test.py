"""Step 1 on real repositories: every kind of change git can produce."""

from __future__ import annotations

import pytest

from reviewbot import diff_binary
from reviewbot.diff import collect, compact_range, parse_units
from reviewbot.errors import GitError, UsageError
from reviewbot.git import open_repo
from reviewbot.schema import ChangeRequest, Mode, ReviewUnit
from tests.conftest import GitFixture

TEN = "".join(f"line {n}\n" for n in range(1, 11))


def units(repo: GitFixture, mode: Mode = "staged", **kwargs: object) -> tuple[ReviewUnit, ...]:
    request = ChangeRequest.from_data({"mode": mode, **kwargs})
    return collect(open_repo(repo.root), request).units


def only(repo: GitFixture, mode: Mode = "staged", **kwargs: object) -> ReviewUnit:
    found = units(repo, mode, **kwargs)
    assert len(found) == 1, found
    return found[0]


def test_modified_file_one_unit_per_hunk(repo: GitFixture) -> None:
    repo.write("src/app.py", "".join(f"x{n} = {n}\n" for n in range(1, 41)))
    repo.commit()
    lines = [f"x{n} = {n}\n" for n in range(1, 41)]
    lines[4] = "x5 = 'five'\n"
    lines[30:32] = ["x31 = 31\n", "extra = True\n", "x32 = 32\n"]
    repo.write("src/app.py", "".join(lines))
    repo.stage()

    first, second = units(repo)
    assert (first.file_path, first.old_path, first.patch_type, first.language) == (
        "src/app.py", None, "modify", "python")
    assert first.metrics.to_data() == {"added_lines": 1, "removed_lines": 1, "hunk_count": 2}
    assert first.line_numbers.to_data() == {"new_compact": "L2-L8", "old_compact": "L2-L8"}
    assert second.metrics.to_data() == {"added_lines": 1, "removed_lines": 0, "hunk_count": 2}
    assert second.line_numbers.to_data() == {"new_compact": "L29-L35",
                                                "old_compact": "L29-L34"}
    assert second.hunk is not None
    [added] = second.hunk.added()
    assert (added.text, added.new_lineno, added.old_lineno) == ("extra = True", 32, None)
    # Rule fields stay neutral until the rule stage fills them.
    assert (first.tags, first.rule_context_level, first.rule_confidence) == ((), "diff_only", 0.0)


def test_added_and_deleted_files(repo: GitFixture) -> None:
    repo.write("old.txt", "a\nb\n")
    repo.commit()
    repo.git("rm", "-q", "old.txt")
    repo.write("new.go", "package main\n\nfunc main() {}\n")
    repo.stage()

    added, deleted = sorted(units(repo), key=lambda u: u.patch_type)
    assert (added.file_path, added.patch_type, added.language) == ("new.go", "add", "go")
    assert added.metrics.added_lines == 3
    assert added.line_numbers.to_data() == {"new_compact": "L1-L3", "old_compact": ""}
    assert added.new_mode == "100644" and added.old_mode is None
    assert (deleted.file_path, deleted.patch_type) == ("old.txt", "delete")
    assert deleted.metrics.removed_lines == 2
    assert deleted.line_numbers.to_data() == {"new_compact": "", "old_compact": "L1-L2"}


def test_rename_without_edits_is_one_whole_file_unit(repo: GitFixture) -> None:
    repo.write("docs/guide.md", TEN)
    repo.commit()
    repo.git("mv", "docs/guide.md", "docs/manual.md")

    unit = only(repo)
    assert (unit.file_path, unit.old_path, unit.patch_type) == (
        "docs/manual.md", "docs/guide.md", "rename")
    assert unit.hunk is None
    assert unit.metrics.to_data() == {"added_lines": 0, "removed_lines": 0, "hunk_count": 0}


def test_rename_with_edits_keeps_old_path_on_each_hunk(repo: GitFixture) -> None:
    repo.write("pkg/a.py", TEN)
    repo.commit()
    repo.git("mv", "pkg/a.py", "pkg/b.py")
    repo.write("pkg/b.py", TEN.replace("line 5\n", "line five\n"))
    repo.stage()

    unit = only(repo)
    assert (unit.file_path, unit.old_path, unit.patch_type) == ("pkg/b.py", "pkg/a.py", "rename")
    assert unit.metrics.added_lines == 1 and unit.metrics.removed_lines == 1
    assert unit.line_numbers.new_compact == "L2-L8"


def test_binary_file(repo: GitFixture) -> None:
    repo.write("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00binary")
    repo.stage()

    unit = only(repo)
    assert (unit.file_path, unit.patch_type, unit.hunk) == ("logo.png", "binary", None)
    assert unit.line_numbers.to_data() == {"new_compact": "", "old_compact": ""}


def test_mode_only_change(repo: GitFixture) -> None:
    repo.write("run.sh", "#!/bin/sh\necho hi\n")
    repo.commit()
    repo.git("update-index", "--chmod=+x", "run.sh")

    unit = only(repo)
    assert (unit.file_path, unit.patch_type, unit.language) == ("run.sh", "mode", "shell")
    assert (unit.old_mode, unit.new_mode) == ("100644", "100755")
    assert unit.hunk is None


def test_symlink_added(repo: GitFixture) -> None:
    repo.write("target.txt", "x\n")
    repo.commit()
    (repo.root / "link").symlink_to("target.txt")
    repo.stage()

    unit = only(repo)
    assert (unit.file_path, unit.patch_type, unit.language, unit.new_mode) == (
        "link", "add", "symlink", "120000")
    assert unit.hunk is not None
    [line] = unit.hunk.lines
    assert (line.text, line.no_newline) == ("target.txt", True)


def test_submodule_pointer_change(repo: GitFixture) -> None:
    old, new = "1" * 40, "2" * 40
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{old},vendor/lib")
    repo.git("commit", "-q", "-m", "add submodule")
    repo.git("update-index", "--cacheinfo", f"160000,{new},vendor/lib")

    unit = only(repo)
    assert (unit.file_path, unit.patch_type, unit.language) == ("vendor/lib", "modify", "submodule")
    assert unit.hunk is not None
    assert [(line.kind, line.text) for line in unit.hunk.lines] == [
        ("del", f"Subproject commit {old}"), ("add", f"Subproject commit {new}")]


def test_crlf_lines_are_counted_and_kept(repo: GitFixture) -> None:
    repo.write("win.txt", b"one\r\ntwo\r\nthree\r\n")
    repo.commit()
    repo.write("win.txt", b"one\r\n2\r\nthree\r\n")
    repo.stage()

    unit = only(repo)
    assert unit.hunk is not None
    assert [(line.kind, line.text) for line in unit.hunk.lines] == [
        ("ctx", "one\r"), ("del", "two\r"), ("add", "2\r"), ("ctx", "three\r")]
    assert unit.line_numbers.new_compact == "L1-L3"


def test_no_newline_at_end_of_file(repo: GitFixture) -> None:
    repo.write("f.txt", "a\nb")
    repo.commit()
    repo.write("f.txt", "a\nb\nc")
    repo.stage()

    unit = only(repo)
    assert unit.hunk is not None
    assert [(ln.kind, ln.text, ln.no_newline) for ln in unit.hunk.lines] == [
        ("ctx", "a", False), ("del", "b", True), ("add", "b", False), ("add", "c", True)]
    assert unit.metrics.added_lines == 2 and unit.metrics.removed_lines == 1


def test_non_utf8_content_is_replaced_not_fatal(repo: GitFixture) -> None:
    repo.write("latin1.txt", "caf\xe9 = 1\n".encode("latin-1"))
    repo.stage()

    unit = only(repo)
    assert unit.hunk is not None
    assert unit.hunk.lines[0].text == "caf\ufffd = 1"
    assert unit.patch_type == "add"


@pytest.mark.parametrize("name", [
    "my file.py", "données/été.py", "tab\tname.py", 'qu"ote.py', "b b/é.py", "a/b b/c.py",
])
def test_file_names_with_spaces_and_non_ascii(repo: GitFixture, name: str) -> None:
    repo.write(name, "x = 1\n")
    repo.stage()

    unit = only(repo)
    assert (unit.file_path, unit.patch_type, unit.language) == (name, "add", "python")
    assert unit.line_numbers.new_compact == "L1"


AWKWARD = "dir b/x y.py"


def test_awkward_names_in_whole_file_units(repo: GitFixture) -> None:
    """Renames, binaries, mode changes and deletes of names unidiff's header regex splits."""
    repo.write(AWKWARD, "x = 1\n")
    repo.write("img b/a b.png", b"\x00\x01binary")
    repo.write("run b/go b.sh", "echo\n")
    repo.write("gone b/old b.py", "y = 2\n")
    repo.commit()
    (repo.root / "new b").mkdir()
    repo.git("mv", AWKWARD, "new b/z b.py")
    repo.write("img b/a b.png", b"\x00\x02binary")
    repo.git("update-index", "--chmod=+x", "run b/go b.sh")
    repo.git("rm", "-q", "gone b/old b.py")
    repo.stage("img b/a b.png")

    found = {u.file_path: (u.old_path, u.patch_type) for u in units(repo)}
    assert found == {
        "new b/z b.py": (AWKWARD, "rename"),
        "img b/a b.png": (None, "binary"),
        "run b/go b.sh": (None, "mode"),
        "gone b/old b.py": (None, "delete"),
    }


def test_empty_diff_gives_no_units(repo: GitFixture) -> None:
    repo.write("a.txt", "a\n")
    repo.commit()
    assert units(repo) == ()
    assert units(repo, "working") == ()


def test_staged_works_before_the_first_commit(repo: GitFixture) -> None:
    repo.write("README.md", "# hello\n")
    repo.stage()

    unit = only(repo)
    assert (unit.file_path, unit.patch_type, unit.language) == ("README.md", "add", "markdown")


def test_staged_reviews_the_index_not_the_working_tree(repo: GitFixture) -> None:
    repo.write("a.py", "x = 1\n")
    repo.commit()
    repo.write("a.py", "x = 2\n")
    repo.stage()
    repo.write("a.py", "x = 3\n")  # unstaged edit on top

    staged = only(repo)
    working = only(repo, "working")
    assert staged.hunk is not None and working.hunk is not None
    assert [ln.text for ln in staged.hunk.added()] == ["x = 2"]
    assert [ln.text for ln in working.hunk.added()] == ["x = 3"]


def test_working_mode_untracked_files_only_on_request(repo: GitFixture) -> None:
    repo.write("tracked.py", "a = 1\n")
    repo.commit()
    repo.write("tracked.py", "a = 2\n")
    repo.write("new dir/fresh.py", "b = 1\nc = 2\n")
    repo.write(".gitignore", "*.log\n")
    repo.write("debug.log", "ignored\n")

    assert {u.file_path for u in units(repo, "working")} == {"tracked.py"}
    with_untracked = {u.file_path: u for u in units(repo, "working", include_untracked=True)}
    assert set(with_untracked) == {"tracked.py", "new dir/fresh.py", ".gitignore"}
    fresh = with_untracked["new dir/fresh.py"]
    assert (fresh.patch_type, fresh.metrics.added_lines) == ("add", 2)
    # Reading untracked files must not stage them.
    assert repo.git("diff", "--cached", "--name-only") == ""


def _fork(repo: GitFixture) -> None:
    """main gets a commit after `feature` forks, which a PR diff must not show."""
    repo.write("shared.py", TEN)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("feature.py", "def feature():\n    return 1\n")
    repo.commit("feature work")
    repo.git("checkout", "-q", "main")
    repo.write("shared.py", TEN.replace("line 1\n", "line one\n"))
    repo.commit("main moves on")
    repo.git("checkout", "-q", "feature")


def test_pr_mode_diffs_from_the_merge_base(repo: GitFixture) -> None:
    _fork(repo)
    unit = only(repo, "pr", base="main")
    assert (unit.file_path, unit.patch_type) == ("feature.py", "add")
    explicit = only(repo, "pr", base="main", head="feature")
    assert explicit.unit_id == unit.unit_id


def test_pr_mode_needs_a_base(repo: GitFixture) -> None:
    repo.commit()
    with pytest.raises(UsageError, match="--base"):
        units(repo, "pr")


def test_pr_mode_unknown_base_says_how_to_fetch(repo: GitFixture) -> None:
    repo.commit()
    with pytest.raises(GitError, match="fetch-depth: 0"):
        units(repo, "pr", base="origin/nowhere")


def test_pr_mode_unrelated_histories(repo: GitFixture) -> None:
    repo.write("a.txt", "a\n")
    repo.commit()
    repo.git("checkout", "-q", "--orphan", "other")
    repo.write("b.txt", "b\n")
    repo.commit()
    with pytest.raises(GitError, match="no common history"):
        units(repo, "pr", base="main")


def test_pr_mode_shallow_clone_names_the_fix(repo: GitFixture) -> None:
    _fork(repo)
    clone = repo.root.parent / "shallow"
    repo.git("clone", "-q", "--depth=1", "--no-single-branch", f"file://{repo.root}",
             str(clone))
    shallow = GitFixture(clone)
    shallow.git("checkout", "-q", "feature")
    with pytest.raises(GitError, match="git fetch --unshallow"):
        units(shallow, "pr", base="origin/main")


def test_unit_id_is_stable_and_content_sensitive(repo: GitFixture) -> None:
    repo.write("a.py", TEN)
    repo.commit()
    repo.write("a.py", TEN.replace("line 5\n", "line five\n"))
    repo.stage()
    first, again = only(repo), only(repo)
    assert first.unit_id == again.unit_id and len(first.unit_id) == 16

    repo.write("a.py", TEN.replace("line 5\n", "line FIVE\n"))
    repo.stage()
    assert only(repo).unit_id != first.unit_id


def test_parse_units_accepts_an_empty_diff() -> None:
    assert parse_units(b"") == ()


@pytest.mark.parametrize(("start", "length", "expected"), [
    (20, 16, "L20-L35"), (7, 1, "L7"), (0, 0, ""), (5, 0, ""),
])
def test_compact_range(start: int, length: int, expected: str) -> None:
    assert compact_range(start, length) == expected


@pytest.mark.parametrize(("rev", "remotes", "command"), [
    ("origin/main", ["origin"], "git fetch origin main"),
    ("upstream/release/1.2", ["origin", "upstream"], "git fetch upstream release/1.2"),
    ("main", ["origin"], "git fetch origin main"),
    ("feature/x", ["origin"], "git fetch origin feature/x"),
    ("v1.0", [], "git fetch origin v1.0"),
])
def test_the_fetch_a_missing_base_needs(rev: str, remotes: list[str], command: str) -> None:
    from reviewbot.diff import fetch_command

    assert fetch_command(rev, remotes) == command


def test_header_blocks_are_rewritten_where_they_are_and_nothing_else_moves() -> None:
    from reviewbot.diff_headers import normalise_headers

    text = ("diff --git a/a b/a\nold mode 100644\nnew mode 100755\n"
            "diff --git a/x y/c b/x y/c\nindex 1..2\n--- a/x y/c\n+++ b/x y/c\n"
            "@@ -1 +1 @@\n-diff --git a/not b/a header\n+@@ not a hunk\n"
            "diff --git a/c d/c b/c d/c\nBinary files a/c d/c and b/c d/c differ")
    space = "\ue000"
    assert normalise_headers(text) == (
        "diff --git a/a b/a\nold mode 100644\nnew mode 100755\n"
        f"diff --git a/x{space}y/c b/x{space}y/c\nindex 1..2\n--- a/x{space}y/c\n"
        f"+++ b/x{space}y/c\n"
        "@@ -1 +1 @@\n-diff --git a/not b/a header\n+@@ not a hunk\n"
        f"diff --git a/c{space}d/c b/c{space}d/c\n"
        f"Binary files a/c{space}d/c and b/c{space}d/c differ")
    assert normalise_headers(text + "\n").endswith(" differ\n")
    assert normalise_headers("no header\n") == "no header\n"


# The repository's attributes cannot make git call a text file binary (and hide it).
SHELL_CALL = 'import os\nos.system(f"ls {path}")\n'
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR"
HIDING = {
    "no diff": "* -diff\n",
    "no diff for python": "*.py -diff\n",
    "binary macro": "*.py binary\n",
    "binary driver": "*.py diff=nothing\n",
}


def _hide(repo: GitFixture, attributes: str) -> None:
    # A diff driver the user's own config marks binary (an image differ, say) that the
    # repository points its Python files at.
    repo.git("config", "diff.nothing.binary", "true")
    repo.write(".gitattributes", attributes)


def _added(found: tuple[ReviewUnit, ...], path: str) -> list[str]:
    return [line.text for u in found if u.file_path == path and u.hunk
            for line in u.hunk.added()]


@pytest.mark.parametrize("mode", ["staged", "working", "pr"])
@pytest.mark.parametrize("attributes", HIDING.values(), ids=HIDING.keys())
def test_attributes_committed_at_the_base_cannot_hide_a_text_file(
        repo: GitFixture, mode: Mode, attributes: str) -> None:
    """A `.gitattributes` already in the repository that calls Python files binary cannot
    hide their changes from the rules; a file with NUL bytes is still a binary unit."""
    _hide(repo, attributes + "*.png -diff\n")
    repo.write("run.py", "x = 1\n")
    repo.write("logo.png", PNG)
    base = repo.commit("base")
    repo.git("checkout", "-q", "-b", "change")
    repo.write("run.py", "x = 1\n" + SHELL_CALL)
    repo.write("logo.png", PNG + b"2")
    if mode == "pr":
        repo.commit("change")
    elif mode == "staged":
        repo.stage()
    found = units(repo, mode, **({"base": base} if mode == "pr" else {}))
    assert _added(found, "run.py") == SHELL_CALL.splitlines()
    [logo] = [u for u in found if u.file_path == "logo.png"]
    assert (logo.patch_type, logo.hunk) == ("binary", None)


@pytest.mark.parametrize("mode", ["staged", "working", "pr"])
def test_attributes_added_by_the_change_cannot_hide_it(repo: GitFixture, mode: Mode) -> None:
    """A change that adds `* -diff` alongside its code has every text file of it reviewed,
    the attributes file included."""
    repo.write("README.md", "# x\n")
    base = repo.commit("base")
    repo.write(".gitattributes", "* -diff\n")
    repo.write("run.py", SHELL_CALL)
    if mode == "pr":
        repo.commit("change")
    elif mode == "staged":
        repo.stage()
    kwargs = {"base": base} if mode == "pr" else {"include_untracked": True}
    found = units(repo, mode, **kwargs)
    assert _added(found, "run.py") == SHELL_CALL.splitlines()
    assert _added(found, ".gitattributes") == ["* -diff"]
    assert {u.patch_type for u in found} == {"add"}


def test_an_untracked_file_under_no_diff_is_read_as_text(repo: GitFixture) -> None:
    """Working mode with untracked files: `* -diff` in the work tree cannot hide a new,
    untracked file; an untracked file with NUL bytes is still binary."""
    repo.write(".gitattributes", "* -diff\n")
    repo.commit("base")
    repo.write("new.py", SHELL_CALL)
    repo.write("logo.png", PNG)
    found = units(repo, "working", include_untracked=True)
    assert _added(found, "new.py") == SHELL_CALL.splitlines()
    assert [u.patch_type for u in found if u.file_path == "logo.png"] == ["binary"]


def test_a_renamed_file_under_no_diff_keeps_its_rename_and_its_hunks(repo: GitFixture) -> None:
    """Renamed and edited under `* -diff`: the text diff is the same rename, spliced where the
    binary stanza was, and each unit has the id it has without the attribute."""
    repo.write("old.py", TEN)
    repo.write("z.py", "z = 1\n")
    repo.commit("base")
    repo.git("mv", "old.py", "new.py")
    repo.write("new.py", TEN + SHELL_CALL)
    repo.write("z.py", "z = 2\n")
    repo.stage()
    plain = units(repo)
    repo.write(".gitattributes", "* -diff\n")
    repo.git("add", ".gitattributes")
    hidden = [u for u in units(repo) if u.file_path != ".gitattributes"]
    assert [(u.file_path, u.old_path, u.patch_type) for u in hidden] == [
        ("new.py", "old.py", "rename"), ("z.py", None, "modify")]
    assert [u.unit_id for u in hidden] == [u.unit_id for u in plain]
    assert [u.hunk for u in hidden] == [u.hunk for u in plain]


def test_history_under_no_diff_still_shows_a_secret_added_then_removed(
        repo: GitFixture) -> None:
    """A secret added in one commit and removed in the next is found in the pushed history
    even when the repository's attributes call the file binary."""
    repo.write(".gitattributes", "*.py -diff\n")
    repo.write("settings.py", "DEBUG = False\n")
    base = repo.commit("base")
    repo.write("settings.py", "DEBUG = False\nTOKEN = 'hunter2-secret'\n")
    repo.write("logo.png", PNG)
    repo.commit("add a token")
    repo.write("settings.py", "DEBUG = False\n")
    repo.commit("remove it again")
    request = ChangeRequest.from_data({"mode": "pr", "base": base, "check_history": True})
    history = collect(open_repo(repo.root), request).history
    assert [(h.file_path, h.line, h.text) for h in history] == [
        ("settings.py", 2, "TOKEN = 'hunter2-secret'")]


def test_the_cli_finds_a_shell_call_behind_no_diff(
        repo: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    """End to end: `reviewbot --mode pr --base main --offline` on a branch that adds
    `* -diff` and a shell injection fails with the rule's finding."""
    from reviewbot.cli import main

    repo.write("README.md", "# x\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "sneaky")
    repo.write(".gitattributes", "* -diff\n")
    repo.write("run.py", SHELL_CALL)
    repo.commit("quiet the diff and add a shell call")
    code = main(["--repo", str(repo.root), "--mode", "pr", "--base", "main", "--offline",
                 "--format", "text"])
    out = capsys.readouterr().out
    assert code == 1 and "python.shell-injection" in out


@pytest.mark.parametrize("mode", ["staged", "working"])
def test_a_file_git_re_encodes_is_read_as_the_text_git_stores(repo: GitFixture,
                                                               mode: Mode) -> None:
    """A `working-tree-encoding=UTF-16` file has NUL bytes on disk but is stored (and run
    through the diff) as UTF-8 text: with `-diff` as well it is still reviewed, in the work
    tree as in the index."""
    repo.write(".gitattributes", "*.ps1 working-tree-encoding=UTF-16 -diff\n")
    repo.write("run.ps1", "Write-Host 1\n".encode("utf-16"))
    repo.commit("base")
    repo.write("run.ps1", "Write-Host 1\nInvoke-Expression $cmd\n".encode("utf-16"))
    if mode == "staged":
        repo.stage()
    assert _added(units(repo, mode), "run.ps1") == ["Invoke-Expression $cmd"]


@pytest.mark.parametrize("name", ["tab\tname.py", 'qu"ote b/x.py', "caf\udce9.py"])
def test_awkward_names_under_no_diff_are_read_as_text(repo: GitFixture, name: str) -> None:
    """`* -diff` cannot hide a file whose name git quotes, that holds " b/", or that is not
    UTF-8: its text diff is found by its exact name."""
    repo.write(".gitattributes", "* -diff\n")
    repo.commit("base")
    repo.root.joinpath(name).parent.mkdir(exist_ok=True)
    repo.root.joinpath(name).write_bytes(SHELL_CALL.encode())
    repo.stage()
    [unit] = units(repo)
    assert unit.patch_type == "add"
    assert _added((unit,), unit.file_path) == SHELL_CALL.splitlines()


def test_many_files_under_no_diff_are_diffed_again_in_bounded_calls(
        repo: GitFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """However many files a change puts under `* -diff`, each is read as text, renames
    included: their paths are split over several git calls rather than one command line
    past the system's limit."""
    monkeypatch.setattr(diff_binary, "MAX_PATHS_CHARS", 30)
    repo.write(".gitattributes", "* -diff\n")
    for n in range(6):
        repo.write(f"mod{n}.py", TEN)
    repo.commit("base")
    for n in range(6):
        repo.write(f"mod{n}.py", TEN + f"x{n} = {n}\n")
    repo.git("mv", "mod0.py", "renamed0.py")
    repo.git("mv", "mod1.py", "renamed1.py")
    repo.stage()
    found = units(repo)
    assert sorted((u.file_path, u.patch_type, u.hunk is not None) for u in found) == [
        *((f"mod{n}.py", "modify", True) for n in range(2, 6)),
        *((f"renamed{n}.py", "rename", True) for n in range(2))]
