"""`reviewbot --mode github`: the pull request of a GitHub Actions event, reviewed and
delivered as the workflow asked (`--reporter pr-review | summary | sarif`).

Whatever the reporter, the SARIF file and the job summary are written first, so a failure
to post loses nothing. A fork's pull request (read-only token, no secrets) and a token that
turns out to be read-only get the job summary and the SARIF file instead of a review, and
the run says so; a review GitHub keeps failing is exit code 3, with everything else written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from reviewbot.git import GitRepo
from reviewbot.github.event import PullRequestEvent, read_event
from reviewbot.github.poster import Poster, PostingFailed, ReadOnlyToken
from reviewbot.report import ReportInput, render
from reviewbot.schema import ChangeRequest

REPORTERS = ("pr-review", "summary", "sarif")
# PyGithub paces requests and writes (GitHub's advice against secondary rate limits).
SECONDS_BETWEEN_REQUESTS = 0.25
SECONDS_BETWEEN_WRITES = 1.0
Notice = Callable[[str], None]


@dataclass
class GithubRun:
    event: PullRequestEvent
    request: ChangeRequest
    poster: Poster | None
    # "since <sha>" when only the commits after the last review are reviewed.
    scope_note: str = ""
    notes: list[str] = field(default_factory=list)


def prepare(repo: GitRepo, env: Mapping[str, str], reporter: str, max_comments: int,
            full: bool, notice: Notice, redact: Callable[[str], str]) -> GithubRun:
    event = read_event(env)
    token = env.get("REVIEWBOT_GITHUB_TOKEN") or env.get("GITHUB_TOKEN") or ""
    poster = None
    run_notes: list[str] = []
    if reporter == "pr-review":
        if event.from_fork:
            run_notes.append("this pull request comes from a fork: its token cannot comment, "
                             "so the findings are in the job summary and the SARIF file")
        elif not token:
            run_notes.append("no GitHub token (the github-token input, or GITHUB_TOKEN): "
                             "the findings are in the job summary and the SARIF file")
        else:
            poster = Poster(token=token, event=event, max_comments=max_comments,
                            seconds_between_requests=SECONDS_BETWEEN_REQUESTS,
                            seconds_between_writes=SECONDS_BETWEEN_WRITES, redact=redact)
    for note in run_notes:
        notice(note)
    base, scope = event.base_sha, ""
    if poster is not None and not full:
        last = _last_head(poster, notice)
        if last and last != event.head_sha and repo.is_ancestor(last, event.head_sha):
            base, scope = last, f"since {last[:12]}"
            notice(f"reviewing the commits since the last review ({last[:12]}); "
                   "--full (full-review: true) reviews the whole pull request")
    request = ChangeRequest(mode="pr", base=base, head=event.head_sha, check_history=True)
    return GithubRun(event=event, request=request, poster=poster, scope_note=scope,
                     notes=run_notes)


def _last_head(poster: Poster, notice: Notice) -> str | None:
    from github import GithubException

    try:
        return poster.last_reviewed_head()
    except GithubException as exc:
        notice(f"could not read the pull request's comments ({exc.status}); reviewing all of "
               "it")
        return None


def deliver(run: GithubRun, data: ReportInput, sarif: Path, env: Mapping[str, str],
            notice: Notice, redact: Callable[[str], str]) -> bool:
    """SARIF, job summary, review, outputs; False when posting the review failed."""
    sarif.write_text(redact(render("sarif", data)) + "\n", encoding="utf-8")
    _append(env.get("GITHUB_STEP_SUMMARY"), redact(render("markdown", data)) + "\n")
    ok = True
    if run.poster is not None:
        ok = _post(run, data, notice)
    counts = data.report.stats.findings
    _append(env.get("GITHUB_OUTPUT"), "".join(
        f"{name}={value}\n" for name, value in (
            ("errors", counts.get("error", 0)), ("warnings", counts.get("warning", 0)),
            ("infos", counts.get("info", 0)), ("findings", len(data.report.findings)),
            ("sarif", sarif.resolve()))))
    return ok


def _post(run: GithubRun, data: ReportInput, notice: Notice) -> bool:
    from github import GithubException

    assert run.poster is not None  # noqa: S101 (deliver checks)
    scope = ({u.file_path for u in data.report.units} if run.scope_note else None)
    try:
        result = run.poster.post(data, scope=scope, scope_note=run.scope_note,
                                 notes=run.notes)
    except ReadOnlyToken as exc:
        notice(f"the token cannot comment on this pull request ({exc}): the findings are in "
               "the job summary and the SARIF file")
        return True
    except (PostingFailed, GithubException) as exc:
        notice(f"posting the review failed: {exc}. The findings are in the SARIF file, the "
               "job summary and the run's artifacts.")
        return False
    notice(f"review posted: {result.posted} new comments, {result.already_posted} already "
           f"there, {result.resolved} resolved, {len(result.elsewhere)} in the summary "
           f"({result.summary_url})")
    return True


def _append(path: str | None, text: str) -> None:
    if path:
        with Path(path).open("a", encoding="utf-8") as handle:
            handle.write(text)


def default_sarif(env: Mapping[str, str]) -> Path:
    workspace = env.get("GITHUB_WORKSPACE")
    return (Path(workspace) if workspace else Path.cwd()) / "reviewbot.sarif"
