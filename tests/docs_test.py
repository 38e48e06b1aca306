"""The documentation's samples are what reviewbot prints: the sample finding of the README
and of docs/USAGE.md, run on the change they show."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reviewbot.cli import main
from tests.conftest import GitFixture

ROOT = Path(__file__).resolve().parents[1]
# Where each page shows the hook stopping a commit.
SAMPLES = {"README.md": "A commit with a problem is stopped:",
           "docs/USAGE.md": "A commit with a problem is stopped (a real run):"}
# The change the README's sample commits: the secret on line 3, the shell call on line 7.
DEPLOY = ('import subprocess\n\nAWS_KEY = "AKIAZ3MSJV4WWNKWW5FG"\n\n\n'
          'def deploy(host):\n    subprocess.run(f"ssh {host} ./deploy.sh", shell=True)\n')
HOOKS = ("repos:\n- repo: /path/to/reviewbot\n  rev: 0123456789abcdef0123456789abcdef01234567\n"
         "  hooks:\n  - id: reviewbot\n  - id: reviewbot-push\n")
RUN_ID = re.compile(r"\d{8}T\d{6}\.\d{6}Z-[0-9a-f]{6}")
SUMMARY = re.compile(r"findings: (?P<counts>.+) \(\d+ ms\); artifacts in (?P<runs>\S+)/"
                     r"(?P<run_id>[^/]+)")


def sample_block(page: str) -> list[str]:
    """A page's "A commit with a problem is stopped" block, line by line."""
    text = (ROOT / page).read_text(encoding="utf-8")
    block = text.split(f"{SAMPLES[page]}\n\n```\n", 1)[1]
    return block.split("\n```\n", 1)[0].splitlines()


@pytest.mark.parametrize("page", SAMPLES)
def test_the_sample_finding_is_what_a_run_prints(
        repo: GitFixture, capsys: pytest.CaptureFixture[str], page: str) -> None:
    """A page's sample finding is reviewbot's output for the change it commits, word for
    word (the time and the run folder aside, whose shape it shows)."""
    sample = sample_block(page)
    assert sample[0] == ('$ git add deploy.py .pre-commit-config.yaml && '
                         'git commit -m "add deploy script"')
    repo.write("README.md", "# demo\n")
    repo.commit("initial")
    repo.write("deploy.py", DEPLOY)
    repo.write(".pre-commit-config.yaml", HOOKS)
    repo.stage()

    code = main(["--repo", str(repo.root), "--offline"])

    printed = capsys.readouterr().out.splitlines()
    assert code == 1
    findings = sample[sample.index("deploy.py"):]
    assert printed[:-1] == findings[:-1]
    shown, real = SUMMARY.fullmatch(findings[-1]), SUMMARY.fullmatch(printed[-1])
    assert shown is not None and real is not None, (findings[-1], printed[-1])
    assert shown["counts"] == real["counts"]
    assert shown["runs"].endswith("/.reviewbot/runs") and real["runs"].endswith(
        "/.reviewbot/runs")
    assert RUN_ID.fullmatch(real["run_id"]) and RUN_ID.fullmatch(shown["run_id"])
