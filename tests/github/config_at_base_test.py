"""The Action's `config` input (`--config`) in the github flow: read at the pull request's
base, as .reviewbot.toml is, never from the checked-out head."""

from __future__ import annotations

from pathlib import Path

from tests.github.action_test import ACTION, inputs, run_step
from tests.github.conftest import PullRequest

RULE_OFF = '[rules]\n"python.shell-injection" = "off"\n'


def base_with(pull: PullRequest, files: dict[str, str]) -> None:
    """A new base commit on main holding `files`, merged into the pull request's branch."""
    pull.repo.git("checkout", "-q", "main")
    for path, text in files.items():
        pull.repo.write(path, text)
    pull.base = pull.repo.commit("the base's config")
    pull.repo.git("checkout", "-q", "topic")
    pull.repo.git("merge", "-q", "--no-edit", "main")


def review_step(pull: PullRequest, config: str) -> tuple[int, str]:
    step = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "review")
    result = run_step(step, inputs(config=config), pull.repo.root)
    return result.returncode, result.stderr


def test_a_pull_request_cannot_rewrite_the_actions_config_file(pull: PullRequest) -> None:
    """The file the workflow names in `config` is read at the base: a pull request that
    rewrites it cannot switch off the rule that catches its own code."""
    base_with(pull, {"cfg/rb.toml": 'fail_level = "error"\n'})
    pull.push({"cfg/rb.toml": RULE_OFF})
    code, err = review_step(pull, "cfg/rb.toml")
    assert code == 1, err
    [posted] = pull.github.posted_reviews()
    assert any("python.shell-injection" in c["body"] for c in posted["comments"])


def test_a_pull_request_cannot_bring_the_actions_config_file(pull: PullRequest) -> None:
    """A `config` file that only the pull request has is an error that says what to do,
    never the pull request's own policy."""
    pull.push({"cfg/rb.toml": RULE_OFF})
    code, err = review_step(pull, "cfg/rb.toml")
    assert code == 2
    assert (f"cfg/rb.toml (given with --config) is not in {pull.base} (the base): commit it "
            "to the base branch first") in err
    assert pull.github.posted_reviews() == []


def test_a_committed_sarif_symlink_is_replaced_never_written_through(
        pull: PullRequest, tmp_path: Path) -> None:
    """The SARIF file goes into the workspace, the pull request's checkout: a
    `reviewbot.sarif` the pull request commits as a symlink (to `.git/config`, to a file in
    the runner's home) is replaced by the report, and what it pointed at is untouched."""
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    # The workspace (GITHUB_WORKSPACE) stands for the checkout here.
    (pull.home / "reviewbot.sarif").symlink_to(victim)
    code, err = review_step(pull, "")
    assert code == 1, err
    assert victim.read_text() == "keep me\n"
    sarif = pull.home / "reviewbot.sarif"
    assert not sarif.is_symlink() and '"version": "2.1.0"' in sarif.read_text()
