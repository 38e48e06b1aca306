"""Step 3: review_index and planner_index, checked against golden JSON."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewbot.diff.parse import collect
from reviewbot.plan.indexes import build_planner_index, build_review_index
from reviewbot.repo.git import open_repo
from reviewbot.schema.units import ChangeRequest, DiffResult
from tests.conftest import GitFixture, assert_golden

GOLDEN = Path(__file__).parents[1] / "golden"
TIMESTAMP = "2026-01-01T00:00:00+00:00"


@pytest.fixture
def mixed_change(repo: GitFixture) -> DiffResult:
    repo.write("src/pay.py", "def pay(amount):\n    return charge(amount)\n")
    repo.write("docs/old.md", "# old\n")
    repo.write("assets/logo.png", b"\x89PNG\x00\x01")
    repo.commit()
    repo.write("src/pay.py", "def pay(amount, currency):\n    return charge(amount, currency)\n")
    repo.git("mv", "docs/old.md", "docs/new.md")
    repo.git("rm", "-q", "assets/logo.png")
    repo.write("src/api.ts", "export const x = 1;\n")
    repo.stage()
    return collect(open_repo(repo.root), ChangeRequest(mode="staged"))


def test_review_index_golden(mixed_change: DiffResult) -> None:
    index = build_review_index(mixed_change, TIMESTAMP)
    assert_golden(GOLDEN / "review_index.json", index.to_json(indent=2))


def test_planner_index_golden_has_no_diff_text_or_notes(mixed_change: DiffResult) -> None:
    planner = build_planner_index(build_review_index(mixed_change, TIMESTAMP))
    data = planner.to_json(indent=2)
    assert_golden(GOLDEN / "planner_index.json", data)
    assert "charge(" not in data and "rule_notes" not in data


def test_summary_counts(mixed_change: DiffResult) -> None:
    index = build_review_index(mixed_change, TIMESTAMP)
    meta, summary = index.review_metadata, index.summary
    assert (meta.mode, meta.base_branch, meta.total_files, meta.total_changes) == (
        "staged", "main", 4, 4)
    assert summary.changes_by_type == {"add": 1, "modify": 1, "delete": 0, "rename": 1,
                                       "binary": 1, "mode": 0}
    assert (summary.total_lines.added, summary.total_lines.removed) == (3, 2)
