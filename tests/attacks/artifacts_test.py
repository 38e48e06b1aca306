"""What the run writes to disk holds no secret the rules found, in clear: not the diff's
artifact (step 1), written before the rules ran in an earlier design, and not the copies a
rerun makes of an earlier run's artifacts. A value only detect-secrets knows (a bare
high-entropy string with no credential word, no known prefix) is the hard case: the
redaction pass's own patterns do not find it, only the rules' findings name it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewbot.cli import main
from reviewbot.text.redaction import Redactor
from tests.conftest import GitFixture

# Random base64 of 40 characters: past detect-secrets' entropy limit, no word or prefix.
BARE = "Xf9Lq2Zr8Tb4Wm1Ny7Kc3Vd6Hp0Js5Ga8Eu2Ro4Ti"


def _written(run: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace")
                     for p in sorted(run.iterdir()) if p.is_file())


def test_a_value_only_the_rules_know_is_in_no_artifact(repo: GitFixture,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    assert Redactor().text(f'blob = "{BARE}"') == f'blob = "{BARE}"'  # the hard case
    repo.write("app/blob.py", f'BLOB = "{BARE}"\n')
    repo.stage()
    main(["--repo", str(repo.root), "--offline", "--format", "json"])
    run = sorted((repo.root / ".reviewbot" / "runs").glob("2*"))[-1]
    rules = json.loads((run / "step2_rules.json").read_text())
    assert any(f["rule_id"] == "secrets.hardcoded" for f in rules["findings"])
    assert (run / "step1_diff.json").is_file() and BARE not in _written(run)
    # A rerun from the plan copies the earlier run's artifacts into its own folder.
    monkeypatch.chdir(repo.root)
    main(["rerun", str(run), "--from", "plan", "--offline", "--format", "json"])
    again = sorted((repo.root / ".reviewbot" / "runs").glob("2*"))[-1]
    assert again != run and BARE not in _written(again)
