"""`reviewbot --mode github` with real PyGithub against the fake GitHub REST server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewbot.cli import main
from tests.github.conftest import BAD, PullRequest

EVALS = "".join(f"def f{n}(x):\n    return eval(x)\n\n\n" for n in range(100))


def review(pull: PullRequest, *args: str) -> int:
    return main(["--repo", str(pull.repo.root), "--mode", "github", "--offline", "--quiet",
                 *args])


def outputs(pull: PullRequest) -> dict[str, str]:
    lines = (pull.home / "output.txt").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines)


def test_a_first_review(pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    code = review(pull)
    err = capsys.readouterr().err
    assert code == 1  # the shell injection is an error, and in pr mode everything counts
    [posted] = pull.github.posted_reviews()
    assert posted["event"] == "COMMENT" and posted["commit_id"] == pull.head
    [comment] = posted["comments"]
    assert (comment["path"], comment["line"], comment["side"]) == ("app/run.py", 5, "RIGHT")
    assert "python.shell-injection" in comment["body"] and "reviewbot:fp=" in comment["body"]
    summary = pull.github.summary()["body"]
    assert f"<!-- reviewbot:summary head={pull.head} -->" in summary
    assert "Inline: 1 new comment, 0 already posted, 0 earlier comments resolved." in summary
    # It opens with what the pull request does.
    assert "### What this change does" in summary
    assert "| `app/run.py` | added | +5 -0 | security-sensitive, 1 error |" in summary
    assert "review posted: 1 new comment" in err
    assert outputs(pull)["errors"] == "1"
    sarif = json.loads(Path(outputs(pull)["sarif"]).read_text())
    assert sarif["runs"][0]["results"][0]["ruleId"] == "python.shell-injection"
    assert "python.shell-injection" in (pull.home / "summary.md").read_text()


def test_a_rerun_posts_nothing_new_and_edits_the_summary(
        pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    review(pull)
    writes = len(pull.github.writes)
    review(pull)
    new = pull.github.writes[writes:]
    assert [(w.method, w.path.rsplit("/", 2)[-2]) for w in new] == [("PATCH", "comments")]
    assert len(pull.github.posted_reviews()) == 1
    assert "Inline: 0 new comments, 1 already posted" in pull.github.summary()["body"]


def test_a_new_commit_posts_only_new_findings_and_resolves_the_fixed_one(
        pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    review(pull)
    pull.push({"app/run.py": BAD.replace('f"ls {path}", shell=True', '["ls", path]'),
               "app/calc.py": "def calc(expr):\n    return eval(expr)\n"}, "fix and add")
    review(pull)
    second = pull.github.posted_reviews()[-1]
    assert [c["path"] for c in second["comments"]] == ["app/calc.py"]
    fixed = next(c for c in pull.github.review_comments if c["path"] == "app/run.py")
    assert fixed["body"].startswith(f"✅ **Resolved** in `{pull.head[:12]}`")
    assert ";resolved rule=python.shell-injection -->" in fixed["body"]
    summary = pull.github.summary()["body"]
    assert "(the whole pull request)" in summary and "1 earlier comment resolved" in summary


def test_full_asks_the_model_again(pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    review(pull)
    pull.push({"app/other.py": "x = 1\n"})
    assert review(pull, "--full") == 1
    assert len(pull.github.posted_reviews()) == 1  # nothing new to post


def test_a_422_loses_nothing(pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    pull.push({"app/calc.py": "def calc(expr):\n    return eval(expr)\n"})
    # GitHub's diff for run.py says line 5 is there; the review API disagrees (it happens).
    pull.github.refuse_paths = {"app/run.py"}
    review(pull)
    [posted] = pull.github.posted_reviews()
    assert [c["path"] for c in posted["comments"]] == ["app/calc.py"]
    summary = pull.github.summary()["body"]
    assert "`app/run.py` L5 Command run through a shell" in summary
    assert "GitHub refused it on this line" in summary
    assert not any(r["state"] == "PENDING" for r in pull.github.reviews)


def test_a_read_only_token_writes_the_job_summary_and_sarif(
        pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    pull.github.read_only = True
    code = review(pull)
    err = capsys.readouterr().err
    assert code == 1  # the fail level decides, not the token
    assert "the token cannot comment on this pull request" in err
    assert "internal error" not in err
    assert Path(outputs(pull)["sarif"]).is_file()
    assert "python.shell-injection" in (pull.home / "summary.md").read_text()


def test_a_forks_pull_request_is_not_posted_to(
        pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(pull.event(fork=True)))
    review(pull)
    assert "comes from a fork" in capsys.readouterr().err
    assert pull.github.writes == []


def test_a_hundred_findings_are_capped_with_the_rest_in_the_summary(
        pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    pull.push({"app/evals.py": EVALS})
    pull.github.per_page_max = 10  # the re-run reads its 30 comments over 3 pages
    review(pull, "--max-comments", "30")
    [posted] = pull.github.posted_reviews()
    assert len(posted["comments"]) == 30
    summary = pull.github.summary()["body"]
    assert summary.count("over the 30 comments of a review") == 71
    review(pull, "--max-comments", "30")
    assert len(pull.github.posted_reviews()) == 2  # the next 30, none of the first again
    second = {c["line"] for c in pull.github.posted_reviews()[1]["comments"]}
    assert not second & {c["line"] for c in posted["comments"]}


def test_5xx_and_a_secondary_limit_on_a_write_are_retried(
        pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    pull.github.fail("POST", "/reviews$", 502)
    pull.github.fail("POST", "/reviews$", 403, kind="secondary")
    assert review(pull) == 1
    assert len(pull.github.posted_reviews()) == 1
    assert pull.waits == [1.0, 7.0]  # a short backoff, then the limit's Retry-After


def test_a_write_that_keeps_failing_is_exit_3_with_everything_else_written(
        pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    pull.github.fail("POST", "/reviews$", 502, times=10)
    assert review(pull) == 3
    err = capsys.readouterr().err
    assert "posting the review failed: GitHub kept failing a write (4 attempts; last: 502" in err
    assert Path(outputs(pull)["sarif"]).is_file()
    assert (pull.home / "summary.md").read_text()
    assert outputs(pull)["errors"] == "1"


def test_someone_elses_marker_is_not_ours(pull: PullRequest,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    review(pull)
    fingerprint = pull.github.review_comments[0]["body"].split("fp=")[1].split(" ")[0]
    pull.github.review_comments.clear()
    pull.github.add_comment_by("mallory", f"lgtm <!-- reviewbot:fp={fingerprint} -->",
                               review=True, path="app/run.py", line=5)
    pull.github.add_comment_by("mallory", f"<!-- reviewbot:summary head={pull.head} -->")
    review(pull)
    assert len(pull.github.posted_reviews()) == 2  # posted again: the imitation is not ours
    mallory = [c for c in pull.github.issue_comments if c["user"]["login"] == "mallory"]
    assert mallory[0]["body"].startswith("<!-- reviewbot:summary")  # untouched


def test_an_actions_token_that_cannot_read_user_posts_as_the_bot(
        pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    pull.github.user_forbidden = True
    pull.github.login, pull.github.login_type = "github-actions[bot]", "Bot"
    review(pull)
    review(pull)
    assert len(pull.github.posted_reviews()) == 1  # the second run recognised its comment


def test_outside_a_pull_request_event(pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GITHUB_EVENT_NAME", "push")
    assert review(pull) == 2
    assert "this run is a 'push' event" in capsys.readouterr().err
    monkeypatch.delenv("GITHUB_EVENT_PATH")
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    assert review(pull) == 2
    assert "GITHUB_EVENT_PATH is not set" in capsys.readouterr().err


def test_a_shallow_clone_says_how_to_fetch(pull: PullRequest, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    shallow = tmp_path / "shallow"
    pull.repo.git("clone", "-q", "--depth", "1", "--branch", "topic",
                  f"file://{pull.repo.root}", str(shallow))
    code = main(["--repo", str(shallow), "--mode", "github", "--offline"])
    assert code == 2
    assert "fetch-depth: 0" in capsys.readouterr().err


def test_github_flags_belong_to_github_mode(pull: PullRequest,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--repo", str(pull.repo.root), "--reporter", "summary"]) == 2
    assert "--reporter is for --mode github" in capsys.readouterr().err
    assert review(pull, "--base", "main") == 2


PRINTS = "def report(total):\n    print(total)\n    return total\n"


def test_info_findings_go_to_the_summary_collapsed_not_inline(
        pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    """An info finding is not an inline comment by default: it is listed in the summary
    comment, collapsed, with its file and line; a re-run posts it nowhere and resolves
    nothing."""
    pull.push({"app/report.py": PRINTS})
    review(pull)
    [posted] = pull.github.posted_reviews()
    assert [c["path"] for c in posted["comments"]] == ["app/run.py"]
    summary = pull.github.summary()["body"]
    assert ("<details>\n<summary>1 info finding below the inline level (warning): listed "
            "here, not on their lines</summary>\n\n- 🔵 **info** `app/report.py` L2 ") in summary
    assert summary.index("</details>") < summary.index("<!-- reviewbot:summary")
    writes = len(pull.github.writes)
    review(pull)
    assert [(w.method, w.path.rsplit("/", 2)[-2]) for w in pull.github.writes[writes:]] == [
        ("PATCH", "comments")]  # the summary, edited in place
    assert "1 info finding below the inline level" in pull.github.summary()["body"]
    assert "Inline: 0 new comments, 1 already posted, 0 earlier comments resolved." in \
        pull.github.summary()["body"]


def test_a_comment_posted_at_a_lower_level_stays_while_its_finding_does(
        pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    """A finding posted inline by a run with `--inline-level info` keeps its comment when a
    later run takes warnings only: it is not resolved, nor listed again, while it stands; it
    is resolved once it is gone."""
    pull.push({"app/report.py": PRINTS})
    review(pull, "--inline-level", "info")
    [posted] = pull.github.posted_reviews()
    assert sorted(c["path"] for c in posted["comments"]) == ["app/report.py", "app/run.py"]
    review(pull)
    assert len(pull.github.posted_reviews()) == 1
    assert not any("Resolved" in c["body"] for c in pull.github.review_comments)
    summary = pull.github.summary()["body"]
    assert "<details>" not in summary and "2 already posted" in summary
    pull.push({"app/report.py": PRINTS.replace("    print(total)\n", "")})
    review(pull)
    gone = next(c for c in pull.github.review_comments if c["path"] == "app/report.py")
    assert gone["body"].startswith("✅ **Resolved**")


def test_the_inline_level_error_keeps_warnings_off_the_lines(
        pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    pull.push({"app/report.py": PRINTS,
               "app/load.py": "import pickle\n\n\ndef load(b):\n    return pickle.loads(b)\n"})
    review(pull, "--inline-level", "error")
    [posted] = pull.github.posted_reviews()
    assert [c["path"] for c in posted["comments"]] == ["app/run.py"]
    summary = pull.github.summary()["body"]
    assert "<summary>2 warning and info findings below the inline level (error)" in summary
    assert summary.index("`app/load.py` L5") < summary.index("`app/report.py` L2")
    assert main(["--repo", str(pull.repo.root), "--inline-level", "info"]) == 2
    assert "--inline-level is for --mode github" in capsys.readouterr().err


def test_a_suppression_the_pull_request_adds_is_shown_not_silent(
        pull: PullRequest, capsys: pytest.CaptureFixture[str]) -> None:
    """"0 error" is not the whole story: the summary comment names the error the pull
    request suppresses, with its file and line; the job summary lists it; the SARIF file
    has it as a suppressed result, with the comment's words."""
    pull.push({"app/run.py": BAD.replace("shell=True)", "shell=True)  # nosec trust me")})
    assert review(pull) == 0
    summary = pull.github.summary()["body"]
    assert "**The change suppresses 1 error**" in summary
    assert "`app/run.py` L5 `python.shell-injection`" in summary
    assert "**The change suppresses 1 error**" in (pull.home / "summary.md").read_text()
    sarif = json.loads(Path(outputs(pull)["sarif"]).read_text())
    [result] = sarif["runs"][0]["results"]
    assert result["suppressions"] == [{"kind": "inSource", "justification": "trust me",
                                       "properties": {"quietening": "nosec",
                                                      "decidedBy": "change"}}]
    assert outputs(pull)["errors"] == "0"
