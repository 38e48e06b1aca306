"""The agent's tools: bounded, inside the repository, errors as answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewbot.context.search import SearchBudget, Searcher
from reviewbot.diff.parse import collect
from reviewbot.model.messages import ToolCall
from reviewbot.repo.git import open_repo
from reviewbot.repo.source import RepoSource
from reviewbot.review.tools import Toolbox, safe_path
from reviewbot.schema.units import ChangeRequest
from tests.conftest import GitFixture


@pytest.fixture
def toolbox(repo: GitFixture, tmp_path: Path) -> Toolbox:
    (tmp_path / "outside.txt").write_text("root:x:0:0:secret outside\n")
    repo.write("app/db.py", "".join(f"line {n}\n" for n in range(1, 301)))
    repo.write("app/util.py", "def get_user(id):\n    return id\n")
    (repo.root / "app" / "escape.txt").symlink_to(tmp_path / "outside.txt")
    repo.commit()
    repo.write("app/util.py", "def get_user(id):\n    return db.get(id)\n")
    repo.stage()
    git = open_repo(repo.root)
    source = RepoSource(git, collect(git, ChangeRequest(mode="staged")))
    return Toolbox(source=source, searcher=Searcher(source, "app/util.py", SearchBudget(1)))


def run(toolbox: Toolbox, name: str, **arguments: object) -> str:
    return toolbox.run(ToolCall(id="c1", name=name, arguments=json.dumps(arguments)))


def test_read_file_hunk_is_capped(toolbox: Toolbox) -> None:
    text = run(toolbox, "read_file_hunk", path="app/db.py", start=10, end=400)
    assert text.startswith("app/db.py L10-L209 of 300")
    assert "   10 | line 10" in text and "line 210" not in text


@pytest.mark.parametrize("path", ["../../etc/passwd", "/etc/passwd", "app/../../x",
                                  "app\\..\\x", "nope.py"])
def test_nothing_outside_the_repository_is_read(toolbox: Toolbox, path: str) -> None:
    text = run(toolbox, "read_file_hunk", path=path, start=1, end=5)
    assert json.loads(text)["error"] and "root:x" not in text


def test_a_symlink_out_is_its_target_name_never_the_target(toolbox: Toolbox) -> None:
    text = run(toolbox, "read_file_hunk", path="app/escape.txt", start=1, end=5)
    assert "outside.txt" in text and "root:x" not in text


def test_list_files_only_lists_tracked_files(toolbox: Toolbox) -> None:
    listing = run(toolbox, "list_files", dir="app").split("\n")
    assert listing == ["app/db.py", "app/escape.txt", "app/util.py"]
    # "/" is the root of what the model sees: the repository, never the machine.
    assert run(toolbox, "list_files", dir="/") == run(toolbox, "list_files") == "\n".join(
        listing)
    assert run(toolbox, "list_files", dir="../..").startswith('{"error"')


def test_search_finds_and_respects_the_budget(toolbox: Toolbox) -> None:
    assert "app/util.py:1 (definition)" in run(toolbox, "search", query="get_user")
    assert "searches are spent" in run(toolbox, "search", query="db")


def test_bad_calls_are_answered_not_raised(toolbox: Toolbox) -> None:
    assert "there is no tool 'rm'" in toolbox.run(ToolCall(id="c", name="rm", arguments="{}"))
    assert "not valid JSON" in toolbox.run(ToolCall(id="c", name="search", arguments="{x"))
    assert "must be a JSON object" in toolbox.run(ToolCall(id="c", name="search",
                                                           arguments="[1]"))
    assert "invalid arguments: query" in run(toolbox, "search", query="")
    assert "invalid arguments" in run(toolbox, "record_finding", file_path="a.py")


def test_record_and_finish(toolbox: Toolbox) -> None:
    answer = run(toolbox, "record_finding", file_path="app/util.py", start_line=2, end_line=2,
                 severity="error", category="bug", title="db is undefined",
                 message="`db` is not imported", evidence="return db.get(id)")
    assert json.loads(answer) == {"recorded": "F1"}
    assert run(toolbox, "finish", summary="done") == '{"finished": true}'
    assert toolbox.finished and toolbox.summary == "done" and len(toolbox.findings) == 1


def test_safe_path() -> None:
    assert safe_path("./app/x.py") == "app/x.py"
    assert safe_path("a\x00b") is None and safe_path("") is None and safe_path(".") is None
