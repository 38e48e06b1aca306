"""Step 1 on real repositories: every kind of change git can produce."""

from __future__ import annotations

import pytest

from reviewbot.diff.parse import collect, compact_range, parse_units
from reviewbot.errors import GitError, UsageError
from reviewbot.repo.git import open_repo
from reviewbot.schema.records import Mode
from reviewbot.schema.units import ChangeRequest, ReviewUnit
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
    repo.git("remote", "add", "origin", str(repo.root))
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
    from reviewbot.diff.parse import fetch_command

    assert fetch_command(rev, remotes) == command


def test_header_blocks_are_rewritten_where_they_are_and_nothing_else_moves() -> None:
    from reviewbot.diff.headers import normalise_headers

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
