"""`reviewbot --mode github`: the pull request of a GitHub Actions event, reviewed and
delivered as the workflow asked (`--reporter pr-review | summary | sarif`).

Every run reviews the whole pull request (its head against its base), so the exit code, the
outputs, the SARIF file and the job summary always describe the pull request as it stands;
what earlier runs already posted is not posted again, and model results are reused from the
result cache. Whatever the reporter, the SARIF file and the job summary are written first, so
a failure to post loses nothing. A fork's pull request (read-only token, no secrets) and a
token that turns out to be read-only get the job summary and the SARIF file instead of a
review, and the run says so; a review GitHub keeps failing, or cannot be reached for, is exit
code 3, with everything else written.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from reviewbot.deliver.delivery import Delivery, Inline, PostResult
from reviewbot.deliver.forge import DeliveryFailed, ReadOnly
from reviewbot.errors import UsageError
from reviewbot.github.event import PullRequestEvent
from reviewbot.github.forge import DEFAULT_BOT_LOGIN, GithubForge
from reviewbot.report import ReportInput, render
from reviewbot.schema.units import ChangeRequest
from reviewbot.store.files import replace_file
from reviewbot.text.words import counted

REPORTERS = ("pr-review", "summary", "sarif")
# PyGithub paces requests and writes (GitHub's advice against secondary rate limits).
SECONDS_BETWEEN_REQUESTS = 0.25
SECONDS_BETWEEN_WRITES = 1.0
Notice = Callable[[str], None]
T = TypeVar("T")


# GitHub's limit for one step's job summary (1 MiB).
MAX_JOB_SUMMARY = 1_000_000


@dataclass
class GithubRun:
    event: PullRequestEvent
    request: ChangeRequest
    # Posts the review (None: the reporter, or the token, says there is no review to post).
    delivery: Delivery | None
    notes: list[str] = field(default_factory=list)


def token_of(env: Mapping[str, str]) -> str:
    return env.get("REVIEWBOT_GITHUB_TOKEN") or env.get("GITHUB_TOKEN") or ""


def bot_login_of(env: Mapping[str, str]) -> str:
    """Who reviewbot writes as when its token cannot read `/user`: the workflow's word (the
    action's bot-login input), else the Actions token's bot."""
    return (env.get("REVIEWBOT_BOT_LOGIN") or "").strip() or DEFAULT_BOT_LOGIN


def new_forge(event: PullRequestEvent, token: str, notice: Notice,
              bot_login: str = DEFAULT_BOT_LOGIN) -> GithubForge:
    """The event's pull request on GitHub, as a forge (it connects on first use)."""
    if importlib.util.find_spec("github") is None:
        raise UsageError("--mode github posts reviews with PyGithub, which is not "
                         "installed: `pip install 'reviewbot[github]'` (the action "
                         "installs it), or pass --reporter summary.")
    return GithubForge(token=token, event=event, bot_login=bot_login, notice=notice,
                       seconds_between_requests=SECONDS_BETWEEN_REQUESTS,
                       seconds_between_writes=SECONDS_BETWEEN_WRITES)


def prepare(event: PullRequestEvent, env: Mapping[str, str], reporter: str, inline: Inline,
            notice: Notice, redact: Callable[[str], str],
            delivery: Delivery | None = None) -> GithubRun:
    """The review of the event's pull request; `delivery` when a command asked for it (its
    forge is already connected)."""
    token = token_of(env)
    run_notes: list[str] = []
    if reporter == "pr-review" and delivery is None:
        # A fork's `pull_request` run has a read-only token (a command's `issue_comment` run
        # has the base repository's, and a read-only one is found out on writing).
        if event.from_fork and event.event_name == "pull_request":
            run_notes.append("this pull request comes from a fork: its token cannot comment, "
                             "so the findings are in the job summary and the SARIF file")
        elif not token:
            run_notes.append("no GitHub token (the github-token input, or GITHUB_TOKEN): "
                             "the findings are in the job summary and the SARIF file")
        else:
            forge = new_forge(event, token, notice, bot_login_of(env))
            delivery = Delivery(forge, inline=inline, redact=redact)
    for note in run_notes:
        notice(note)
    request = ChangeRequest(mode="pr", base=event.base_sha, head=event.head_sha,
                            check_history=True)
    return GithubRun(event=event, request=request,
                     delivery=delivery if reporter == "pr-review" else None, notes=run_notes)


def deliver(run: GithubRun, data: ReportInput, sarif: Path, env: Mapping[str, str],
            notice: Notice, redact: Callable[[str], str]) -> bool:
    """SARIF, job summary, outputs, then the review; False when posting it failed."""
    replace_file(sarif, redact(render("sarif", data)) + "\n")
    _append(env.get("GITHUB_STEP_SUMMARY"), job_summary(redact(render("markdown", data))))
    counts = data.report.stats.findings
    _append(env.get("GITHUB_OUTPUT"), "".join(
        f"{name}={value}\n" for name, value in (
            ("errors", counts.get("error", 0)), ("warnings", counts.get("warning", 0)),
            ("infos", counts.get("info", 0)), ("findings", len(data.report.findings)),
            ("sarif", sarif.resolve()))))
    return _post(run, data, notice) if run.delivery is not None else True


def _post(run: GithubRun, data: ReportInput, notice: Notice) -> bool:
    assert run.delivery is not None  # noqa: S101 (deliver checks)
    delivery = run.delivery
    result = guarded(notice, "posting the review",
                     lambda: delivery.post(data, run.event.head_sha, run.notes))
    if isinstance(result, PostResult):
        notice(f"review posted: {counted(result.posted, 'new comment')}, "
               f"{result.already_posted} already "
               f"there, {result.resolved} resolved, {result.dismissed} dismissed, "
               f"{len(result.elsewhere)} in the summary, {len(result.below_level)} below the "
               f"inline level ({result.summary_url})")
    return result is not FAILED


class _Failed:
    """A write to GitHub failed (said by a notice)."""


FAILED = _Failed()
READ_ONLY = _Failed()


def guarded(notice: Notice, what: str, action: Callable[[], T],
            elsewhere: str = " The findings are in the SARIF file, the job summary and the "
                             "run's artifacts.") -> T | _Failed:
    """What `action` returns, or FAILED (GitHub kept failing or could not be reached) or
    READ_ONLY (the token may not write here), each said by a notice (with `elsewhere`: where
    the findings still are)."""
    try:
        return action()
    except ReadOnly as exc:
        notice(f"the token cannot comment on this pull request ({exc})."
               + (" The findings are in the job summary and the SARIF file." if elsewhere
                  else ""))
        return READ_ONLY
    except DeliveryFailed as exc:
        notice(f"{what} failed: {exc}.{elsewhere}")
        return FAILED


def job_summary(markdown: str) -> str:
    """The Markdown report within GitHub's limit for a job summary: cut at a finding, with
    where the rest is."""
    if len(markdown.encode("utf-8")) <= MAX_JOB_SUMMARY:
        return markdown + "\n"
    cut = markdown.encode("utf-8")[:MAX_JOB_SUMMARY - 1_000].decode("utf-8", "ignore")
    cut = cut[:max(cut.rfind("\n- "), 0)]
    return (cut + "\n- … the rest of the findings do not fit in a job summary: they are in "
            "the SARIF file (the action's `sarif` output) and the run's artifacts.\n")


def _append(path: str | None, text: str) -> None:
    if path:
        with Path(path).open("a", encoding="utf-8") as handle:
            handle.write(text)


def default_sarif(env: Mapping[str, str]) -> Path:
    workspace = env.get("GITHUB_WORKSPACE")
    return (Path(workspace) if workspace else Path.cwd()) / "reviewbot.sarif"
