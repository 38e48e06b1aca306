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
from reviewbot.report import ReportInput, render
from reviewbot.schema.units import ChangeRequest
from reviewbot.store.files import replace_file
from reviewbot.text.words import counted

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
        notes.append(fork_note(pipeline, bool(token)))
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


def fork_note(pipeline: MergeRequestPipeline, token: bool) -> str:
    """Why a fork's merge request gets no review posted, as it happened: where its pipeline
    runs decides whose GITLAB_TOKEN it has, if any."""
    said = (f"this merge request comes from a fork (project {pipeline.fork_project}) and is "
            f"not posted to")
    here = pipeline.project_id
    if pipeline.pipeline_project != here:
        whose = ("its GITLAB_TOKEN is the fork's own variable, not a token of project "
                 f"{here}" if token else f"it has none of project {here}'s CI/CD variables "
                 "(no GITLAB_TOKEN)")
        return (f"{said}: this pipeline runs in project {pipeline.pipeline_project}, the fork, "
                f"where {whose}; {_ELSEWHERE}")
    if token:
        return (f"{said}: reviewbot posts nothing to a fork's merge request, also from a "
                f"pipeline of project {here} that has GITLAB_TOKEN; {_ELSEWHERE}")
    return f"{said}, and this pipeline has no GITLAB_TOKEN; {_ELSEWHERE}"


def default_codequality(pipeline: MergeRequestPipeline) -> Path:
    return pipeline.project_dir / CODEQUALITY_FILE


def unreviewed(codequality: Path, notice: Notice) -> None:
    """An empty Code Quality report where the review did not run: the job's report artifact
    exists (GitLab says "no matching files" otherwise), and lists nothing it did not find."""
    replace_file(codequality, "[]\n")
    notice(f"the review did not run: {codequality.name} lists no findings")


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
