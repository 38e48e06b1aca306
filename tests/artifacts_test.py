"""Stage artifacts are serialisations of typed objects and load back into them."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewbot.artifacts import STEPS, create_run_dir, load_artifact
from reviewbot.config import Config
from reviewbot.errors import ArtifactError
from reviewbot.git import open_repo
from reviewbot.pipeline import run_review
from reviewbot.schema import ChangeRequest, VerifiedFindings
from tests.conftest import GitFixture


def test_every_artifact_of_a_run_round_trips(repo: GitFixture, tmp_path: Path) -> None:
    repo.write("a.py", "x = 1\n")
    repo.commit()
    repo.write("a.py", "x = 2\ny = 'caf\xe9'\n")
    repo.write("b b/é.txt", b"\xff\xfe raw\r\n")
    repo.stage()

    outcome = run_review(open_repo(repo.root), ChangeRequest(mode="staged"), Config(),
                         tmp_path / "runs")
    written = sorted(p.name for p in outcome.run_dir.path.iterdir())
    assert written == ["step1_diff.json", "step2_rules.json", "step3_planner_index.json",
                       "step3_review_index.json", "step4_llm_plan.json", "step5_fused_plan.json",
                       "step6_context_bundle.json", "step7_review.json", "step8_verified.json",
                       "step9_report.json"]
    for name, (step, model) in STEPS.items():
        if f"step{step}_{name}.json" in written:
            assert type(outcome.run_dir.read(name)) is model
    assert outcome.run_dir.read("fused_plan") == outcome.state.fused
    assert outcome.run_dir.read("diff") == outcome.state.diff
    assert outcome.run_dir.read("review_index") == outcome.state.index
    assert outcome.run_dir.read("report") == outcome.report


def test_output_dir_is_git_ignored(repo: GitFixture) -> None:
    repo.write("a.py", "x = 1\n")
    repo.stage()
    run_review(open_repo(repo.root), ChangeRequest(mode="staged"), Config(),
               repo.root / ".reviewbot" / "runs")
    assert (repo.root / ".reviewbot" / "runs" / ".gitignore").is_file()
    assert repo.git("status", "--porcelain", "--untracked-files=all") == "A  a.py\n"


def test_a_broken_artifact_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "step1_diff.json"
    bad.write_text('{"units": "nope"}')
    with pytest.raises(ArtifactError, match=r"step1_diff\.json is not a valid diff artifact"):
        load_artifact(bad, "diff")
    with pytest.raises(ArtifactError, match="does not exist"):
        load_artifact(tmp_path / "missing.json", "diff")


def test_an_unwritable_output_dir_is_said_once_and_writes_nothing(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    said: list[str] = []
    run_dir = create_run_dir(blocker / "runs", "run1", notify=said.append)
    assert run_dir.problem is not None and "--output-dir" in run_dir.problem
    assert run_dir.write("verified", VerifiedFindings()) is None
    assert run_dir.write_text("error.log", "x") is None
    assert len(said) == 1 and "goes on without its artifacts" in said[0]


def test_a_streamed_element_with_a_secret_is_redacted_and_loads_back(tmp_path: Path) -> None:
    """Long lists are written an element at a time by msgspec's encoder; an element holding
    a secret goes through the redaction pass like the rest."""
    from reviewbot.redaction import Redactor
    from reviewbot.schema import DiffLine, DiffResult, Hunk, ReviewUnit

    secret = "zq-internal-value-991"
    hunk = Hunk(header="@@ -0,0 +1 @@", old_start=0, old_length=0, new_start=1, new_length=1,
                lines=(DiffLine(kind="add", text=f"TOKEN = '{secret}'", new_lineno=1),))
    clean = ReviewUnit(unit_id="u1", file_path="a.py", patch_type="add")
    diff = DiffResult(request=ChangeRequest(mode="staged"), repo_root="/r", base_rev="HEAD",
                      units=(clean, clean.replace(unit_id="u2", hunk=hunk)))
    run_dir = create_run_dir(tmp_path / "runs", "20261123T000000Z-abcdef",
                             redactor=Redactor([secret]))
    text = run_dir.write("diff", diff).read_text()
    assert secret not in text and "TOKEN = " in text
    loaded = run_dir.read("diff")
    assert isinstance(loaded, DiffResult) and loaded.units[0] == clean
    assert loaded.units[1].hunk is not None and secret not in loaded.units[1].hunk.lines[0].text
