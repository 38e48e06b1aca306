"""`--mode gitlab`: a merge request pipeline's review, delivered. The Code Quality report is
written first (always, whatever the token), then the review is posted through
`GitlabForge`; a token that cannot write, or none (a fork's pipeline has no secrets), posts
nothing and says so in one line, and the exit code still follows the findings.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from reviewbot.deliver.delivery import Delivery, Inline, PostResult
from reviewbot.deliver.forge import DeliveryFailed, ReadOnly
from reviewbot.errors import UsageError
from reviewbot.gitlab.ci import MergeRequestPipeline
from reviewbot.gitlab.forge import GitlabForge
from reviewbot.report import ReportInput, counted, render
from reviewbot.run.artifacts import replace_file
from reviewbot.schema import ChangeRequest

Notice = Callable[[str], None]
CODEQUALITY_FILE = "gl-code-quality-report.json"
_ELSEWHERE = "the findings are in the Code Quality report and the job log"


@dataclass
class GitlabRun:
    pipeline: MergeRequestPipeline
    request: ChangeRequest
    # Posts the review (None: no token, or a fork's pipeline).
    delivery: Delivery | None
    notes: list[str] = field(default_factory=list)


def token_of(env: Mapping[str, str]) -> str:
    return (env.get("GITLAB_TOKEN") or "").strip()


def prepare(pipeline: MergeRequestPipeline, env: Mapping[str, str], inline: Inline,
            notice: Notice, redact: Callable[[str], str],
            sleep: Callable[[float], None] | None = None) -> GitlabRun:
    """The review of the pipeline's merge request, and who posts it."""
    token = token_of(env)
    notes: list[str] = []
    delivery = None
    if pipeline.from_fork:
        notes.append(f"this merge request comes from a fork: its pipeline has no GITLAB_TOKEN, "
                     f"so nothing is posted; {_ELSEWHERE}")
    elif not token:
        notes.append(f"no GitLab token (GITLAB_TOKEN: a project access token with the api "
                     f"scope): nothing is posted; {_ELSEWHERE}")
    else:
        if importlib.util.find_spec("gitlab") is None:
            raise UsageError("--mode gitlab posts with python-gitlab, which is not installed: "
                             "`pip install 'reviewbot[gitlab]'`.")
        forge = GitlabForge(token=token, pipeline=pipeline, notice=notice)
        if sleep is not None:
            forge.sleep = sleep
        delivery = Delivery(forge, inline=inline, redact=redact)
    for note in notes:
        notice(note)
    request = ChangeRequest(mode="pr", base=pipeline.base_sha, head=pipeline.head_sha,
                            check_history=True)
    return GitlabRun(pipeline=pipeline, request=request, delivery=delivery, notes=notes)


def default_codequality(pipeline: MergeRequestPipeline) -> Path:
    return pipeline.project_dir / CODEQUALITY_FILE


def deliver(run: GitlabRun, data: ReportInput, codequality: Path, notice: Notice,
            redact: Callable[[str], str]) -> bool:
    """The Code Quality report, then the review; False when posting it failed (GitLab kept
    failing, or refused something other than the token's rights)."""
    replace_file(codequality, redact(render("codequality", data)) + "\n")
    if run.delivery is None:
        return True
    delivery = run.delivery
    try:
        result = delivery.post(data, run.pipeline.head_sha, run.notes)
    except ReadOnly as exc:
        notice(f"nothing was posted to the merge request: {exc}; {_ELSEWHERE}")
        return True
    except DeliveryFailed as exc:
        notice(f"posting the review failed: {exc}; {_ELSEWHERE}")
        return False
    _said(result, notice)
    return True


def _said(result: PostResult, notice: Notice) -> None:
    notice(f"review posted: {counted(result.posted, 'new discussion')}, "
           f"{result.already_posted} already there, {result.resolved} resolved, "
           f"{result.dismissed} dismissed, {len(result.elsewhere)} in the summary, "
           f"{len(result.below_level)} below the inline level ({result.summary_url})")
