"""Pull-request reviews against GitHub's real contract (the validated double, real PyGithub):
the check describes the whole pull request, nothing is lost or doubled when GitHub says no,
and the bot knows its own comments whatever its token."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reviewbot.cli import main
from reviewbot.deliver.bodies import MAX_BODY
from reviewbot.github import forge
from tests.github.conftest import PullRequest

AWS = "AKIAZ7Q2MXC5LFPN3WKB"
TOKEN = "ghp_Q8mZ3xYv1Lw9Rt5Kp2Hs7Jd4Fg6Na0BcEe1T"
DEPLOY = ("import subprocess\n\n"
          f'AWS_KEY = "{AWS}"\n'
          f'GITHUB_TOKEN = "{TOKEN}"\n\n\n'
          "def deploy(host):\n"
          '    subprocess.run(f"ssh {host} ./deploy.sh", shell=True)\n\n\n'
          "def status(host):\n"
          '    return subprocess.run(f"ssh {host} uptime", shell=True)\n')
KEY = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx7Yl3QkZs9mFqkTnB2dRz\n"
       "Q2hhbmdlTWVQbGVhc2VUaGlzSXNOb3RBUmVhbEtleQ==\n-----END RSA PRIVATE KEY-----\n")


def review(pull: PullRequest, *args: str) -> int:
    return main(["--repo", str(pull.repo.root), "--mode", "github", "--offline", "--quiet",
                 *args])


def outputs(pull: PullRequest) -> dict[str, str]:
    lines = (pull.home / "output.txt").read_text().splitlines()
    found: dict[str, str] = {}
    for line in lines:  # each run appends; the last value of each counts
        name, value = line.split("=", 1)
        found[name] = value
    return found


def sarif_results(pull: PullRequest) -> list[dict[str, Any]]:
    return list(json.loads(Path(outputs(pull)["sarif"]).read_text())["runs"][0]["results"])


def ours(pull: PullRequest) -> list[dict[str, Any]]:
    return [c for c in pull.github.review_comments if "reviewbot:fp=" in c["body"]]


@pytest.fixture
def risky(pull: PullRequest) -> PullRequest:
    pull.push({"deploy.py": DEPLOY, "keys/id_rsa": KEY}, "deploy")
    return pull


# --- the check describes the whole pull request -------------------------------------------

def test_a_docs_only_push_keeps_the_check_failing(
        risky: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    assert review(risky) == 1
    first = outputs(risky)
    results = sarif_results(risky)
    comments = len(ours(risky))
    risky.push({"docs/guide.md": "# How to deploy\n"}, "docs")
    assert review(risky) == 1  # a trivial push does not turn the check green
    assert outputs(risky)["errors"] == first["errors"] and int(first["errors"]) >= 4
    assert len(sarif_results(risky)) == len(results)
    assert len(ours(risky)) == comments  # nothing posted twice
    assert not any("Resolved" in c["body"] for c in ours(risky))
    assert "0 earlier comments resolved" in risky.github.summary()["body"]


def test_a_comment_is_resolved_only_when_its_finding_is_gone(
        risky: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    review(risky)
    before = len(ours(risky))
    risky.push({"deploy.py": DEPLOY.replace("./deploy.sh", "./deploy.sh --quiet")}, "tweak")
    review(risky)
    resolved = [c for c in ours(risky) if c["body"].startswith("✅ **Resolved**")]
    assert len(resolved) == 1  # only the line that changed (its finding's code changed)
    review(risky, "--full")
    assert len(ours(risky)) == before + 1  # the changed line's new comment, nothing doubled


def test_findings_off_the_lines_stay_in_the_summary_after_a_push(
        pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    pull.push({"app/evals.py": "".join(f"def f{n}(x):\n    return eval(x)\n\n\n"
                                       for n in range(5))})
    review(pull, "--max-comments", "1")
    assert pull.github.summary()["body"].count("over the 1 comments of a review") == 5
    pull.push({"docs/a.md": "# a\n"})
    review(pull, "--max-comments", "1")
    summary = pull.github.summary()["body"]
    assert summary.count("over the 1 comments of a review") == 4  # one more got its line
    assert len(ours(pull)) == 2


# --- nothing lost or doubled when GitHub says no ------------------------------------------

def test_three_hundred_findings_fit_the_summary(pull: PullRequest,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    pull.push({"app/evals.py": "".join(f"def f{n}(x):\n    return eval(x)\n\n\n"
                                       for n in range(300))})
    assert review(pull, "--max-comments", "0") == 1
    body = pull.github.summary()["body"]
    assert len(body) <= MAX_BODY
    assert "more not shown here" in body and "the SARIF file" in body
    shown = body.count("over the 0 comments of a review")
    assert 100 < shown < 301
    assert len(sarif_results(pull)) == 301  # every finding is in the SARIF file
    assert outputs(pull)["findings"] == "301"


def test_a_leftover_pending_review_is_discarded_and_nothing_moves_to_the_summary(
        pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    pull.push({"app/calc.py": "def calc(expr):\n    return eval(expr)\n"})
    github = pull.github
    github.add_pending_review()
    assert review(pull) == 1
    [posted] = github.posted_reviews()
    assert len(posted["comments"]) == 2
    assert "Not on a line" not in github.summary()["body"]
    assert not any(r["state"] == "PENDING" for r in github.reviews)


def test_content_submitted_too_quickly_waits_a_minute_and_never_bisects(
        pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    pull.github.fail("POST", "/reviews$", 422, kind="too-quickly")
    assert review(pull) == 1
    assert pull.waits == [60.0]
    assert pull.github.count("POST", "/reviews$") == 2 and pull.github.count("DELETE") == 0


def test_the_search_for_refused_comments_is_bounded(
        pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    pull.push({"app/evals.py": "".join(f"def f{n}(x):\n    return eval(x)\n\n\n"
                                       for n in range(60))})
    pull.github.refuse_paths = {"app/evals.py"}
    assert review(pull, "--max-comments", "60") == 1
    writes = pull.github.count("POST", "/reviews$") + pull.github.count("DELETE")
    assert writes <= forge.MAX_PROBE_WRITES + 2
    summary = pull.github.summary()["body"]
    assert "GitHub refused" in summary
    [posted] = pull.github.posted_reviews()
    assert [c["path"] for c in posted["comments"]] == ["app/run.py"]


def test_a_single_500_is_retried(pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    pull.github.fail("POST", "/reviews$", 500)
    assert review(pull) == 1
    assert len(pull.github.posted_reviews()) == 1 and pull.waits == [1.0]


@pytest.mark.parametrize("how", ["a 502", "a dropped connection"])
def test_a_write_github_stored_before_failing_is_not_made_twice(
        pull: PullRequest, capsys: pytest.CaptureFixture[str], how: str) -> None:
    pull.push({"app/calc.py": "def calc(expr):\n    return eval(expr)\n"})
    drop = how == "a dropped connection"
    pull.github.fail("POST", "/reviews$", 502, stored=True, drop=drop)
    pull.github.fail("POST", "/issues/7/comments$", 502, stored=True, drop=drop)
    assert review(pull) == 1
    assert len(pull.github.posted_reviews()) == 1 and len(ours(pull)) == 2
    assert len([c for c in pull.github.issue_comments if "reviewbot:summary" in c["body"]]) == 1


def test_a_primary_limit_that_resets_in_an_hour_fails_now_with_everything_written(
        pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    pull.github.fail("POST", "/reviews$", 403, kind="primary")
    assert review(pull) == 3
    err = capsys.readouterr().err
    assert "rate limit for this token is spent until" in err and pull.waits == []
    assert Path(outputs(pull)["sarif"]).is_file() and outputs(pull)["errors"] == "1"


def test_a_secondary_limit_without_headers_waits_at_least_a_minute(
        pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    pull.github.fail("POST", "/issues/7/comments$", 403, kind="secondary-no-headers")
    assert review(pull) == 1
    assert pull.waits == [60.0]


def test_no_request_learns_the_commit_the_event_names(
        pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    review(pull)
    assert pull.github.count("GET", "/commits/") == 0
    assert pull.github.posted_reviews()[0]["commit_id"] == pull.head


# --- the bot's own comments, whatever its token --------------------------------------------

@pytest.mark.parametrize(("login", "kind", "forbidden", "named"), [
    ("octocat", "User", False, ""),                                # a personal token
    ("github-actions[bot]", "Bot", True, ""),                      # the Actions token
    ("reviewbot-app[bot]", "Bot", True, "reviewbot-app[bot]"),     # an App's token
])
def test_two_runs_never_double_a_comment(pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str], login: str,
                                         kind: str, forbidden: bool, named: str) -> None:
    """An App's token cannot read /user: the workflow names its bot (`bot-login`)."""
    pull.push({"app/calc.py": "def calc(expr):\n    return eval(expr)\n"})
    pull.github.login, pull.github.login_type = login, kind
    pull.github.user_forbidden = forbidden
    if named:
        monkeypatch.setenv("REVIEWBOT_BOT_LOGIN", named)
    review(pull)
    review(pull)
    assert len(ours(pull)) == 2 and len(pull.github.posted_reviews()) == 1
    summaries = [c for c in pull.github.issue_comments if "reviewbot:summary" in c["body"]]
    assert len(summaries) == 1


def test_an_app_token_without_its_bot_login_stops_and_says_which(
        pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    """A write GitHub puts under another login than reviewbot's is said, with the setting
    that fixes it, and the run fails: its comments would not be known as its own."""
    pull.github.user_forbidden = True
    pull.github.login, pull.github.login_type = "reviewbot-app[bot]", "Bot"
    assert review(pull) == 3
    err = capsys.readouterr().err
    assert "set the action's bot-login input (REVIEWBOT_BOT_LOGIN) to 'reviewbot-app[bot]'" \
        in err
    assert len(pull.github.posted_reviews()) == 1 and pull.github.issue_comments == []


def test_a_person_imitating_the_markers_is_not_the_bot(
        pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    """With an installation token, whatever a *person* writes is not the bot's."""
    pull.github.user_forbidden = True
    pull.github.login, pull.github.login_type = "github-actions[bot]", "Bot"
    review(pull)
    mark = ours(pull)[0]["body"].split("fp=")[1].split(" ")[0]
    pull.github.review_comments.clear()
    pull.github.add_comment_by("mallory", f"lgtm <!-- reviewbot:fp={mark} -->", review=True,
                               path="app/run.py", line=5)
    review(pull)
    assert len(pull.github.posted_reviews()) == 2


# --- GitHub out of reach --------------------------------------------------------------------

def test_an_unreachable_api_is_exit_3_with_everything_written(
        pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GITHUB_API_URL", "http://127.0.0.1:9")  # nothing listens there
    assert review(pull) == 3
    err = capsys.readouterr().err
    assert "GitHub could not be reached" in err and "internal error" not in err
    assert Path(outputs(pull)["sarif"]).is_file() and outputs(pull)["errors"] == "1"
    assert "python.shell-injection" in (pull.home / "summary.md").read_text()


def test_without_pygithub_the_error_names_the_extra(
        pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "github" else real(name, *a))
    assert review(pull) == 2
    err = capsys.readouterr().err
    assert "pip install 'reviewbot[github]'" in err and "Traceback" not in err


# --- bodies ----------------------------------------------------------------------------------


def test_the_token_never_leaves_in_a_comment_or_the_reports(
        pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    """The token reviewbot posts with is a secret whatever its shape: a change that writes
    its value into a line reviewbot quotes cannot make reviewbot post it, print it, or write
    it in the SARIF file or the job summary."""
    token = "ghs_testtoken"  # the test workflow's token: too short for GitHub's format
    pull.push({"deploy.py": "import subprocess\n\n\ndef deploy(host):\n"
                            f'    subprocess.run(f"ssh {{host}} x", shell=True)  # {token}\n'})
    review(pull)
    summary = (pull.home / "summary.md").read_text()
    written = [c["body"] for c in ours(pull)], pull.github.summary()["body"], summary, \
        Path(outputs(pull)["sarif"]).read_text(), *capsys.readouterr()
    assert ours(pull) and token not in repr(written)
