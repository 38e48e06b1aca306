"""Opening a repository: the root from anywhere inside it, and a fix-it message otherwise."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from reviewbot.errors import GitError
from reviewbot.repo.git import open_repo
from tests.conftest import GitFixture


def test_a_subfolder_opens_the_work_tree_root(repo: GitFixture) -> None:
    repo.write("pkg/deep/mod.py", "x = 1\n")
    repo.commit()
    opened = open_repo(repo.root / "pkg" / "deep")
    assert opened.root == repo.root.resolve()
    assert opened.show("HEAD", "pkg/deep/mod.py") == b"x = 1\n"
    assert opened.show("HEAD", "pkg/absent.py") is None


def test_a_file_path_opens_its_repository(repo: GitFixture) -> None:
    path = repo.write("mod.py", "x = 1\n")
    assert open_repo(path).root == repo.root.resolve()


def test_a_missing_path_says_so(tmp_path: Path) -> None:
    with pytest.raises(GitError, match=r"does not exist\. Pass --repo"):
        open_repo(tmp_path / "nowhere")


def test_a_bare_repository_needs_a_work_tree(tmp_path: Path) -> None:
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    with pytest.raises(GitError, match="bare repository or has no work tree"):
        open_repo(bare)


def test_the_git_folder_itself_has_no_work_tree(repo: GitFixture) -> None:
    with pytest.raises(GitError, match="no work tree"):
        open_repo(repo.root / ".git")


def test_git_missing_from_path_says_how_to_fix(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(GitError, match=r"git was not found\. Install git"):
        open_repo(tmp_path)


def test_git_messages_are_read_in_english_whatever_the_locale(
        repo: GitFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """`show` tells "absent" from "broken" by git's English message; a user whose git
    speaks German must get the same answer."""
    repo.write("a.py", "a = 1\n")
    repo.commit()
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setenv("LANGUAGE", "de")
    german = subprocess.run(["git", "show", "HEAD:b.py"], cwd=repo.root, capture_output=True,
                            text=True, check=False).stderr
    if "existiert nicht" not in german:
        pytest.skip("this git has no German messages to test against")
    opened = open_repo(repo.root)
    assert opened.show("HEAD", "b.py") is None
    with pytest.raises(GitError, match="failed"):
        opened.show("no-such-revision", "a.py")


def test_a_work_tree_removed_during_a_run_is_named(repo: GitFixture) -> None:
    opened = open_repo(repo.root)
    shutil.rmtree(repo.root)
    with pytest.raises(GitError, match=r"does not exist \(git runs there\)"):
        opened.head()


def test_a_repository_another_user_owns_gets_gits_fix(repo: GitFixture) -> None:
    """Common in containers: git refuses the repository; the error says why and the fix."""
    try:
        os.chown(repo.root, 4321, 4321)
    except PermissionError:
        pytest.skip("only root can give the repository to another user here")
    with pytest.raises(GitError, match="dubious ownership") as caught:
        open_repo(repo.root)
    assert f"git config --global --add safe.directory {repo.root}" in str(caught.value)


@pytest.mark.parametrize("source", [None, "", "HEAD"], ids=["work tree", "index", "commit"])
def test_grep_searches_files_the_attributes_call_binary(repo: GitFixture,
                                                        source: str | None) -> None:
    """The repository's `-diff` or `binary` attributes cannot hide a definition from the
    context search; a line of real binary content (a NUL byte) is never a hit."""
    repo.write(".gitattributes", "*.py -diff\nlegacy/* binary\n")
    repo.write("lib.py", "def helper():\n    return 1\n")
    repo.write("legacy/util.js", "function helper() {}\n")
    repo.write("blob.bin", b"helper\0\x01\x02\n")
    repo.commit()
    found = open_repo(repo.root).grep("helper", source)
    assert sorted(found) == [("legacy/util.js", 1, "function helper() {}"),
                             ("lib.py", 1, "def helper():")]


def test_the_staged_tree_is_read_while_another_git_holds_the_index(repo: GitFixture) -> None:
    """A `git add` or a second hook holding `index.lock` does not stop the staged review, and
    the user's index is never written (write-tree reads a private copy)."""
    repo.write("a.py", "x = 1\n")
    repo.stage("a.py")
    index = repo.root / ".git" / "index"
    before = index.read_bytes()
    (repo.root / ".git" / "index.lock").write_bytes(b"")
    tree = open_repo(repo.root).index_tree()
    assert repo.git("ls-tree", "--name-only", tree).split() == ["a.py"]
    assert index.read_bytes() == before


def test_the_staged_tree_is_the_index_git_names(repo: GitFixture,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """`git commit -a` runs hooks with GIT_INDEX_FILE naming its own index: that one is
    reviewed, and a repository with no index yet gives the empty tree."""
    opened = open_repo(repo.root)
    assert opened.index_tree() == opened.empty_tree()
    repo.write("a.py", "x = 1\n")
    repo.write("b.py", "y = 2\n")
    repo.stage("a.py")
    other = repo.root / ".git" / "other-index"
    subprocess.run(["git", "add", "b.py"], cwd=repo.root, check=True,
                   env={**os.environ, "GIT_INDEX_FILE": str(other)})
    monkeypatch.setenv("GIT_INDEX_FILE", str(other))
    tree = opened.index_tree()
    assert repo.git("ls-tree", "--name-only", tree).split() == ["b.py"]


def test_the_staged_tree_of_a_linked_worktree_is_its_own_index(repo: GitFixture,
                                                               tmp_path: Path) -> None:
    """A linked worktree's `.git` is a file: its index is under the main repository's
    `worktrees/`, and that one is reviewed, not the main work tree's."""
    repo.write("a.py", "x = 1\n")
    repo.commit()
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "--detach", str(linked))
    (linked / "b.py").write_text("y = 2\n")
    subprocess.run(["git", "add", "b.py"], cwd=linked, check=True)
    tree = open_repo(linked).index_tree()
    assert repo.git("ls-tree", "--name-only", tree).split() == ["a.py", "b.py"]
