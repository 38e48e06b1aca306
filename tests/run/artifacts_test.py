"""Stage artifacts are serialisations of typed objects and load back into them."""

from __future__ import annotations

import errno
import itertools
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import pytest

from reviewbot.cli import main
from reviewbot.config import Config
from reviewbot.errors import ArtifactError
from reviewbot.repo.git import open_repo
from reviewbot.run.artifacts import STEPS, RunDir, create_run_dir, load_artifact
from reviewbot.run.pipeline import run_review
from reviewbot.schema.records import Frozen
from reviewbot.schema.reviews import VerifiedFindings
from reviewbot.schema.units import ChangeRequest
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
    from reviewbot.schema.units import DiffLine, DiffResult, Hunk, ReviewUnit
    from reviewbot.text.redaction import Redactor

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


# --- Artifacts are a record; the review is the product -----------------------------------

SHELL = "import os\nos.system('ls ' + input())\n"


@pytest.fixture
def full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on a 48 KB tmpfs where this machine allows a mount (root), else a folder
    whose third artifact write fails with ENOSPC."""
    folder = tmp_path / "small"
    folder.mkdir()
    mounted = os.geteuid() == 0 and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=48k", "tmpfs", str(folder)],
        capture_output=True, check=False).returncode == 0
    if not mounted:
        real, writes = RunDir._dump, itertools.count()

        def dump(self: RunDir, model: Frozen, handle: TextIO) -> None:
            if next(writes) >= 2:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            real(self, model, handle)
        monkeypatch.setattr(RunDir, "_dump", dump)
    yield folder
    if mounted:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_full_disk_prints_the_report_and_exits_by_the_findings(
        repo: GitFixture, full_disk: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write("README.md", "# x\n")
    repo.commit()
    repo.write("app.py", SHELL)
    repo.write("data.py", "".join(f"VALUE_{n} = {n} * 12345678\n" for n in range(3000)))
    repo.stage()
    code = main(["--repo", str(repo.root), "--output-dir", str(full_disk)])
    out, err = capsys.readouterr()
    assert code == 1 and "internal error" not in err
    assert "python.shell-injection" in out and "artifacts in" not in out
    assert err.count("No space left on device") == 1
    for written in full_disk.glob("*/step*.json"):  # what was written whole loads back
        name = written.stem.split("_", 1)[1]
        load_artifact(written, name)


def test_a_run_never_prunes_a_run_that_is_still_writing(
        repo: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write(".reviewbot.toml", "keep_runs = 1\n")
    repo.write("app.py", "a = 1\n")
    repo.stage()
    runs = repo.root / ".reviewbot" / "runs"
    older = create_run_dir(runs, "20200101T000000.000000Z-aaaaaa")  # a review in progress
    finished = create_run_dir(runs, "20200101T000001.000000Z-bbbbbb")
    finished.close()
    assert main(["--repo", str(repo.root), "--quiet"]) == 0
    assert older.path.is_dir() and not finished.path.exists()
    assert older.write("verified", VerifiedFindings()) is not None  # it goes on writing
    older.close()
    assert main(["--repo", str(repo.root), "--quiet"]) == 0
    assert not older.path.exists() and len(list(runs.glob("2*"))) == 1


def test_a_run_folder_git_tracks_is_never_pruned(
        repo: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write(".reviewbot.toml", "keep_runs = 1\n")
    repo.write(".reviewbot/runs/20200101T000000.000000Z-aaaaaa/notes.md", "mine\n")
    repo.git("add", "-f", ".reviewbot/runs")
    repo.commit()
    repo.write("app.py", "a = 1\n")
    repo.stage()
    for _ in range(2):
        assert main(["--repo", str(repo.root), "--quiet"]) == 0
    assert (repo.root / ".reviewbot/runs/20200101T000000.000000Z-aaaaaa/notes.md").is_file()


@pytest.mark.parametrize("how", ["output_dir in the config", "the default folder"])
def test_a_committed_symlink_cannot_lead_the_artifacts_out_of_the_repository(
        repo: GitFixture, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        how: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    if how == "the default folder":
        (repo.root / ".reviewbot").symlink_to(outside)
    else:
        (repo.root / "out").symlink_to(outside)
        repo.write(".reviewbot.toml", 'output_dir = "out"\n')
    repo.commit()
    repo.write("app.py", SHELL)
    repo.stage()
    code = main(["--repo", str(repo.root)])
    out, err = capsys.readouterr()
    assert code == 1 and "python.shell-injection" in out
    assert "leads out of the repository" in err
    assert list(outside.rglob("*")) == []


def test_a_committed_gitignore_symlink_is_never_followed(
        repo: GitFixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    victim = tmp_path / "victim"
    (repo.root / ".reviewbot" / "runs").mkdir(parents=True)
    (repo.root / ".reviewbot" / "runs" / ".gitignore").symlink_to(victim)
    repo.write("app.py", "a = 1\n")
    repo.stage()
    assert main(["--repo", str(repo.root), "--quiet"]) == 0
    assert not victim.exists()


def test_the_users_own_output_dir_may_be_anywhere(
        repo: GitFixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "mine"
    (repo.root / "link").symlink_to(tmp_path)
    repo.write("app.py", "a = 1\n")
    repo.stage()
    assert main(["--repo", str(repo.root), "--quiet", "--output-dir",
                 str(repo.root / "link" / "mine")]) == 0
    assert len(list(outside.glob("2*/step9_report.json"))) == 1
