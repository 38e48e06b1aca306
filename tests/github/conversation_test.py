"""Talking to reviewbot on a pull request: comment events and `/reviewbot` commands, through
real PyGithub against the fake GitHub (held to GitHub's REST description)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from reviewbot.cli import main
from reviewbot.deliver.commands import HELP
from reviewbot.deliver.conversation import NOT_ALLOWED
from tests.conftest import GitFixture
from tests.github.conftest import PullRequest

MAINTAINER = "maintainer"


def with_maintainers(pull: PullRequest) -> None:
    pull.github.permissions = {MAINTAINER: "write", "owner": "admin", "reader": "read"}


@pytest.fixture(autouse=True)
def maintainer(pull: PullRequest) -> None:
    with_maintainers(pull)


def review(pull: PullRequest, *args: str, offline: bool = True) -> int:
    return main(["--repo", str(pull.repo.root), "--mode", "github", "--quiet",
                 *(["--offline"] if offline else []), *args])


def say(pull: PullRequest, monkeypatch: pytest.MonkeyPatch, body: str, *,
        login: str = MAINTAINER, reply_to: dict[str, Any] | None = None,
        action: str = "created", kind: str = "User", association: str = "MEMBER",
        offline: bool = True) -> int:
    """`login` writes a comment (a reply in a review thread when `reply_to` is given) and the
    workflow runs reviewbot on its event."""
    github = pull.github
    if reply_to is not None:
        written = github.add_comment_by(login, body, review=True, path=reply_to["path"],
                                        line=reply_to["line"], kind=kind,
                                        in_reply_to=reply_to["id"])
        name, payload = "pull_request_review_comment", {
            "pull_request": json.loads(pull.event().read_text())["pull_request"]}
    else:
        written = github.add_comment_by(login, body, kind=kind)
        name, payload = "issue_comment", {"issue": {
            "number": github.number, "pull_request": {"url": f"{github.url}/pulls/7"}}}
    comment = {**written, "author_association": association}
    payload |= {"action": action, "comment": comment,
                "repository": {"full_name": github.repository}}
    path = pull.home / f"comment-{written['id']}.json"
    path.write_text(json.dumps(payload))
    monkeypatch.setenv("GITHUB_EVENT_NAME", name)
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(path))
    return review(pull, offline=offline)


def reviewed(pull: PullRequest, monkeypatch: pytest.MonkeyPatch, *args: str,
             offline: bool = True) -> int:
    """A `pull_request` run, as a push makes."""
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(pull.event()))
    return review(pull, *args, offline=offline)


def answers(pull: PullRequest) -> list[str]:
    """What reviewbot answered (comments that carry its reply marker)."""
    return [c["body"] for c in pull.github.issue_comments + pull.github.review_comments
            if "<!-- reviewbot:reply to=" in c["body"]]


def finding_comment(pull: PullRequest) -> dict[str, Any]:
    [comment] = [c for c in pull.github.review_comments if "reviewbot:fp=" in c["body"]
                 and c["user"]["login"] == pull.github.login]
    return comment


def test_help_is_answered_once(pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    assert say(pull, monkeypatch, "/reviewbot help") == 0
    [answer] = answers(pull)
    assert HELP in answer
    assert pull.github.posted_reviews() == []
    # The same event again (a re-run of the workflow): it is answered already.
    assert review(pull) == 0
    assert len(answers(pull)) == 1


def test_an_unknown_command_gets_the_help(pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    say(pull, monkeypatch, "/reviewbot frobnicate")
    [answer] = answers(pull)
    assert "reviewbot has no command `frobnicate`" in answer and HELP in answer


def test_review_on_request_posts_the_review_and_answers(
        pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert say(pull, monkeypatch, "Could you look again?\n/reviewbot review") == 1  # findings
    [posted] = pull.github.posted_reviews()
    assert [c["path"] for c in posted["comments"]] == ["app/run.py"]
    [answer] = answers(pull)
    assert f"Reviewed `{pull.head[:12]}`" in answer
    assert pull.github.summary()["html_url"] in answer


def test_a_command_from_someone_without_write_access_does_nothing(
        pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    for login in ("stranger", "reader"):
        assert say(pull, monkeypatch, "/reviewbot review", login=login,
                   association="CONTRIBUTOR") == 0
    assert pull.github.posted_reviews() == []
    asked = [c["id"] for c in pull.github.issue_comments
             if c["user"]["login"] in ("stranger", "reader")]
    assert answers(pull) == [f"{NOT_ALLOWED}\n\n<!-- reviewbot:reply to={cid} -->"
                             for cid in asked]


def test_a_fork_pull_request_takes_commands_from_maintainers_only(
        pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """An `issue_comment` run has the base repository's token, fork or not: the review is
    posted for a maintainer, and the fork's author (no write access) is refused."""
    pull.github.fork = True
    assert say(pull, monkeypatch, "/reviewbot review", login="stranger") == 0
    assert pull.github.posted_reviews() == []
    assert say(pull, monkeypatch, "/reviewbot review") == 1
    assert len(pull.github.posted_reviews()) == 1


def test_without_the_permission_api_only_the_owner_commands(
        pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    pull.github.permission_forbidden = True
    say(pull, monkeypatch, "/reviewbot help", association="MEMBER")
    assert NOT_ALLOWED in answers(pull)[0]
    say(pull, monkeypatch, "/reviewbot help", login="owner", association="OWNER")
    assert HELP in answers(pull)[1]


def test_bots_and_plain_comments_are_not_answered(
        pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert say(pull, monkeypatch, "/reviewbot review", login="helper[bot]", kind="Bot") == 0
    assert say(pull, monkeypatch, "Looks good to me.") == 0
    assert say(pull, monkeypatch, "/reviewbot review", action="edited") == 0
    err = capsys.readouterr().err
    assert "never answers bots" in err and "no /reviewbot command" in err
    assert "answers new comments only" in err
    assert pull.github.writes == []


def test_ignore_dismisses_the_finding_for_good(
        pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    reviewed(pull, monkeypatch)
    ours = finding_comment(pull)
    assert say(pull, monkeypatch, "/reviewbot ignore the path is a constant here",
               reply_to=ours) == 0
    dismissed = finding_comment(pull)["body"]
    assert dismissed.startswith("🚫 **Dismissed** by `@maintainer`: the path is a "
                                "constant here.")
    assert ";dismissed rule=python.shell-injection -->" in dismissed
    [answer] = answers(pull)
    assert answer.startswith("Dismissed: reviewbot will not post this finding again")
    # The next review posts nothing for it, says so, and the check still counts it: the
    # repository's config decides what fails a pull request.
    assert reviewed(pull, monkeypatch, "--full") == 1
    assert len(pull.github.posted_reviews()) == 1
    assert "1 dismissed" in pull.github.summary()["body"]
    assert not finding_comment(pull)["body"].startswith("✅")  # not marked resolved either
    # Asked again: already dismissed.
    say(pull, monkeypatch, "/reviewbot ignore", reply_to=ours)
    assert answers(pull)[-1].startswith("This finding was already dismissed.")


def test_a_dismissal_is_only_reviewbots_own(pull: PullRequest,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Someone who imitates a dismissed marker silences nothing; the reason shown back can
    neither forge a marker nor mention anyone."""
    reviewed(pull, monkeypatch)
    ours = finding_comment(pull)
    fp = ours["body"].split("reviewbot:fp=")[1].split(" ")[0]
    pull.github.add_comment_by("stranger", f"<!-- reviewbot:fp={fp};dismissed -->",
                               review=True, path="app/run.py", line=5)
    pull.push({"app/extra.py": "x = 1\n"})
    reviewed(pull, monkeypatch)
    assert "dismissed" not in pull.github.summary()["body"]
    say(pull, monkeypatch, "/reviewbot ignore @everyone <!-- reviewbot:fp=abc -->",
        reply_to=ours)
    body = finding_comment(pull)["body"]
    assert "`@everyone`" in body and body.count("<!-- reviewbot:fp=") == 1


def test_thread_commands_need_a_reviewbot_comment(
        pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    human = pull.github.add_comment_by("colleague", "Is this right?", review=True,
                                       path="app/run.py", line=5)
    say(pull, monkeypatch, "/reviewbot ignore", reply_to=human)
    say(pull, monkeypatch, "/reviewbot explain")
    assert sorted(a.split("\n")[0] for a in answers(pull)) == [
        "`/reviewbot explain` works in reply to one of reviewbot's comments on a line of the "
        "diff.", "`/reviewbot ignore` works in reply to one of reviewbot's comments on a "
                 "line of the diff."]


def test_explain_answers_in_the_thread_without_a_model(
        pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    reviewed(pull, monkeypatch)
    ours = finding_comment(pull)
    assert say(pull, monkeypatch, "/reviewbot explain", reply_to=ours) == 0
    [answer] = answers(pull)
    reply = next(c for c in pull.github.review_comments if c["body"] == answer)
    assert reply["in_reply_to_id"] == ours["id"]
    assert "(`python.shell-injection`)" in answer and "**Why:**" in answer
    assert 'subprocess.run(f"ls {path}", shell=True)' in answer
    assert "**Fix:**" in answer and "/reviewbot ignore" in answer
    assert len(pull.github.posted_reviews()) == 1  # explaining posts no review


def test_explain_after_the_fix(pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    reviewed(pull, monkeypatch)
    ours = finding_comment(pull)
    pull.push({"app/run.py": "def run(path):\n    return path\n"})
    say(pull, monkeypatch, "/reviewbot explain", reply_to=ours)
    assert answers(pull)[0].startswith(f"reviewbot no longer reports this at "
                                       f"`{pull.head[:12]}`")


def test_a_read_only_token_is_said_not_failed(
        pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A `pull_request_review_comment` run from a fork has a read-only token."""
    reviewed(pull, monkeypatch)
    pull.github.read_only = True
    assert say(pull, monkeypatch, "/reviewbot ignore", reply_to=finding_comment(pull)) == 0
    assert "the token cannot comment" in capsys.readouterr().err


def test_a_comment_on_an_issue_is_not_for_reviewbot(
        pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = pull.home / "issue.json"
    path.write_text(json.dumps({"action": "created", "issue": {"number": 3},
                                "comment": {"id": 1, "body": "/reviewbot review",
                                            "user": {"login": MAINTAINER, "type": "User"}},
                                "repository": {"full_name": pull.github.repository}}))
    monkeypatch.setenv("GITHUB_EVENT_NAME", "issue_comment")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(path))
    assert review(pull) == 0
    assert "on an issue, not a pull request" in capsys.readouterr().err
    assert pull.github.requests == []


def test_a_command_run_fetches_the_pull_requests_commits(
        pull: PullRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """An `issue_comment` run checks out the default branch: the pull request's commits are
    fetched from `refs/pull/N/head` as objects, and nothing of them is checked out."""
    pull.repo.git("update-ref", f"refs/pull/{pull.github.number}/head", pull.head)
    workspace = tmp_path / "workspace"
    # file:// sends only what the branch reaches, as a fetch from GitHub does.
    subprocess.run(["git", "clone", "-q", "--single-branch", "--branch", "main",
                    pull.repo.root.as_uri(), str(workspace)], check=True)
    missing = subprocess.run(["git", "cat-file", "-e", pull.head], cwd=workspace, check=False)
    assert missing.returncode != 0
    pull.repo = GitFixture(workspace)
    assert say(pull, monkeypatch, "/reviewbot review") == 1
    assert "fetching pull request #7's commits from origin" in capsys.readouterr().err
    [posted] = pull.github.posted_reviews()
    assert [c["path"] for c in posted["comments"]] == ["app/run.py"]
    assert not (workspace / "app" / "run.py").exists()


def test_when_github_fails_the_answer_the_run_says_so(
        pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    pull.github.fail("POST", r"/issues/7/comments$", status=502, times=4)
    assert say(pull, monkeypatch, "/reviewbot help") == 3
    assert "answering the comment failed: GitHub kept failing a write" in (
        capsys.readouterr().err)


def test_no_token_no_answer_and_a_broken_payload_is_a_usage_error(
        pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("GITHUB_TOKEN")
    assert say(pull, monkeypatch, "/reviewbot help") == 0
    assert "reviewbot cannot answer the comment" in capsys.readouterr().err
    path = pull.home / "broken.json"
    path.write_text(json.dumps({"action": "created", "issue": {"number": 7}}))
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(path))
    assert review(pull) == 2
    assert "the issue_comment event payload lacks 'comment'" in capsys.readouterr().err


def test_a_reply_to_a_deleted_comment(pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    gone = {"id": 99999, "path": "app/run.py", "line": 5}
    say(pull, monkeypatch, "/reviewbot explain", reply_to=gone)
    assert answers(pull)[0].startswith("`/reviewbot explain` works in reply to")


def dismissed_elsewhere(pull: PullRequest, numbers: tuple[int, ...],
                        rule: str = "python.shell-injection", path: str = "app/other.py") -> None:
    for number in numbers:
        pull.github.add_other_comment(
            number, f"🚫 **Dismissed** by @\u200bsomeone.\n\n<!-- reviewbot:fp={number:032x}"
                    f";dismissed rule={rule} -->", path)


def test_repeated_dismissals_propose_the_setting_that_stops_them(
        pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Dismissed in `app/*` on two earlier pull requests and now this one: the answer holds
    the exact `.reviewbot.toml` lines, and once committed they silence the rule there."""
    dismissed_elsewhere(pull, (3, 5))
    # Neither a person's imitation nor another rule or place counts.
    pull.github.other_comments.append({**pull.github.other_comments[0], "user": {
        **pull.github.other_comments[0]["user"], "login": "mallory", "type": "User"},
        "pull_request_url": f"{pull.github.url}/repos/acme/shop/pulls/9"})
    dismissed_elsewhere(pull, (11,), rule="python.eval-exec")
    dismissed_elsewhere(pull, (12,), path="tools/x.py")
    reviewed(pull, monkeypatch)
    say(pull, monkeypatch, "/reviewbot ignore", reply_to=finding_comment(pull))
    [answer] = answers(pull)
    assert "`python.shell-injection` has now been dismissed in `app/*` on 3 pull requests " \
           "(#3, #5, #7)" in answer
    snippet = answer.split("```toml\n", 1)[1].split("\n```", 1)[0]
    assert snippet == ('[[path_rules]]\npath = "app/*"\n'
                       'rules = { "python.shell-injection" = "off" }')
    # Committed to the base branch, the next review of the pull request no longer reports it.
    pull.repo.git("checkout", "-q", "main")
    pull.repo.write(".reviewbot.toml", snippet + "\n")
    pull.base = pull.repo.commit("accept the proposal")
    pull.repo.git("checkout", "-q", "topic")
    pull.repo.git("merge", "-q", "--no-edit", "main")
    pull.head = pull.repo.git("rev-parse", "HEAD").strip()
    pull.sync()
    assert reviewed(pull, monkeypatch) == 0


def test_no_proposal_below_the_threshold(
        pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    dismissed_elsewhere(pull, (3,))
    reviewed(pull, monkeypatch)
    ours = finding_comment(pull)
    say(pull, monkeypatch, "/reviewbot ignore", reply_to=ours)
    assert "has now been dismissed" not in answers(pull)[0]  # 2 of 3


def test_the_repository_config_sets_the_threshold(
        pull: PullRequest, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    pull.repo.git("checkout", "-q", "main")
    pull.repo.write(".reviewbot.toml", "dismissals_to_propose = 1\n")
    pull.base = pull.repo.commit("propose at once")
    pull.repo.git("checkout", "-q", "topic")
    pull.repo.git("merge", "-q", "--no-edit", "main")
    pull.head = pull.repo.git("rev-parse", "HEAD").strip()
    pull.sync()
    reviewed(pull, monkeypatch)
    say(pull, monkeypatch, "/reviewbot ignore", reply_to=finding_comment(pull))
    assert "on 1 pull requests (#7)" in answers(pull)[0]
