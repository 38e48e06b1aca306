"""The pull-request author's attributes: a `.gitattributes` (committed at the base, or added
by the change) that calls text files binary (`-diff`, `binary`, a driver the user marks
binary) cannot hide their lines from the rules; binary is decided by content."""

from __future__ import annotations

import json

import pytest

from reviewbot.cli import main
from reviewbot.diff import binary as diff_binary
from reviewbot.diff.parse import collect
from reviewbot.repo.git import open_repo
from reviewbot.schema.records import Mode
from reviewbot.schema.units import ChangeRequest, ReviewUnit
from tests.conftest import GitFixture
from tests.diff.parse_test import TEN, units

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


@pytest.mark.parametrize("mode", ["staged", "pr"])
def test_a_nul_byte_does_not_make_code_binary(repo: GitFixture, mode: Mode) -> None:
    """A NUL byte in a comment of a JavaScript file (node runs the rest) does not make it a
    binary unit nobody reads: a file named as code is read as text; an image is not."""
    base = repo.commit("base")
    code = '// \0\nconst { exec } = require("child_process");\nexec(`git log ${b}`);\n'
    repo.write("web/run.js", code)
    repo.write("logo.png", PNG)
    if mode == "pr":
        repo.commit("change")
    else:
        repo.stage()
    found = units(repo, mode, **({"base": base} if mode == "pr" else {}))
    assert _added(found, "web/run.js")[1:] == code.splitlines()[1:]
    assert [u.patch_type for u in found if u.file_path == "logo.png"] == ["binary"]


def test_a_rename_into_another_language_is_read_as_new_code(repo: GitFixture) -> None:
    """Code committed as text (`h.txt`, which no Python rule reads) and then only renamed to
    `h.py` is new Python: its lines are added under the new name, not a bare rename."""
    repo.write("h.txt", SHELL_CALL)
    base = repo.commit("notes")
    repo.git("mv", "h.txt", "h.py")
    repo.commit("rename")
    found = units(repo, "pr", base=base)
    assert [(u.file_path, u.patch_type) for u in found] == [("h.py", "add"), ("h.txt", "delete")]
    assert _added(found, "h.py") == SHELL_CALL.splitlines()
    repo.git("mv", "h.py", "g.py")
    repo.stage()
    assert [(u.file_path, u.patch_type) for u in units(repo)] == [("g.py", "rename")]


EVAL = "const x = eval(location.hash);\nvar y = 1;\n"


@pytest.mark.parametrize(("path", "data", "expected"), [
    # A browser decodes a script by its byte-order mark; every diff viewer shows binary.
    ("web/a.js", EVAL.encode("utf-16"), [("wide-encoding", "warning", 1)]),
    ("web/a.js", EVAL.encode("utf-16-be"), [("wide-encoding", "warning", 1)]),
    ("web/a.html", f"<script>{EVAL}</script>\n".encode("utf-32"),
     [("wide-encoding", "warning", 1)]),
    # Text without a NUL byte (CJK) on top does not dilute the code's lines under it.
    ("web/a.js", ("// " + "\u4e01" * 3000 + "\n" + EVAL).encode("utf-16-le"),
     [("wide-encoding", "warning", 2)]),
    # Near misses: the script as UTF-8, a NUL byte in a comment, an image.
    ("web/a.js", EVAL.encode(), [("js.eval", "warning", 1)]),
    ("web/a.js", ("// \0\n" + EVAL).encode(), [("js.eval", "warning", 2)]),
    ("logo.png", PNG, []),
])
def test_code_saved_as_utf16_is_said(repo: GitFixture, capsys: pytest.CaptureFixture[str],
                                     path: str, data: bytes,
                                     expected: list[tuple[str, str, int]]) -> None:
    """A script saved as UTF-16 or UTF-32 has a NUL byte in every character: git and the
    forges show it as binary, and no rule reads `eval` between its NULs, but the browser
    runs it. The file's encoding is reported, so what nobody could read is not passed over
    in silence."""
    repo.commit("base")
    repo.write(path, data)
    repo.stage()
    main(["--repo", str(repo.root), "--offline", "--mode", "staged", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert [(f["rule_id"], f["severity"], f["start_line"]) for f in doc["findings"]] == expected
