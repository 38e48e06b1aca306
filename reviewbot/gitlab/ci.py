"""The merge request a GitLab CI job is about, from the job's predefined variables.

`--mode gitlab` runs in a merge-request pipeline (`CI_PIPELINE_SOURCE` is
`merge_request_event`): it reviews `CI_COMMIT_SHA` against `CI_MERGE_REQUEST_DIFF_BASE_SHA`
(the merge request's base, as its "Changes" tab shows it) and writes to merge request
`CI_MERGE_REQUEST_IID` of project `CI_MERGE_REQUEST_PROJECT_ID` (else `CI_PROJECT_ID`)
through `CI_API_V4_URL` (GitLab.com or a self-managed instance). The variables are
GitLab's, set by the runner: trusted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from reviewbot.errors import UsageError

MERGE_REQUEST_EVENT = "merge_request_event"
REQUIRED = ("CI_API_V4_URL", "CI_PROJECT_ID", "CI_MERGE_REQUEST_IID",
            "CI_MERGE_REQUEST_DIFF_BASE_SHA", "CI_COMMIT_SHA")


@dataclass(frozen=True)
class MergeRequestPipeline:
    api_url: str
    project_id: int
    iid: int
    base_sha: str
    head_sha: str
    # The merge request comes from a fork: its pipeline has none of the project's secrets.
    from_fork: bool
    project_dir: Path


def read_pipeline(env: Mapping[str, str]) -> MergeRequestPipeline:
    """The job's merge request, or a UsageError saying what is wrong with the environment."""
    source = env.get("CI_PIPELINE_SOURCE", "")
    if source != MERGE_REQUEST_EVENT:
        shown = repr(source) if source else "not set (is this a GitLab CI job?)"
        raise UsageError(
            f"--mode gitlab reviews merge requests in a merge request pipeline, and "
            f"CI_PIPELINE_SOURCE is {shown}. Run the job with `rules: - if: "
            "$CI_PIPELINE_SOURCE == \"merge_request_event\"`; elsewhere use --mode pr --base REV.")
    missing = [name for name in REQUIRED if not env.get(name)]
    if missing:
        raise UsageError(f"--mode gitlab needs GitLab CI's {', '.join(missing)}: this job does "
                         "not look like a merge request pipeline.")
    # The merge request's project: the target's, also when the pipeline runs in the fork
    # (there CI_PROJECT_ID is the fork).
    project = env.get("CI_MERGE_REQUEST_PROJECT_ID") or env["CI_PROJECT_ID"]
    try:
        project_id, iid = int(project), int(env["CI_MERGE_REQUEST_IID"])
    except ValueError as exc:
        raise UsageError(f"CI_PROJECT_ID and CI_MERGE_REQUEST_IID are numbers: {exc}") from exc
    source_project = env.get("CI_MERGE_REQUEST_SOURCE_PROJECT_ID", "")
    return MergeRequestPipeline(
        api_url=env["CI_API_V4_URL"].rstrip("/"), project_id=project_id, iid=iid,
        base_sha=env["CI_MERGE_REQUEST_DIFF_BASE_SHA"], head_sha=env["CI_COMMIT_SHA"],
        from_fork=bool(source_project) and source_project != str(project_id),
        project_dir=Path(env.get("CI_PROJECT_DIR") or Path.cwd()))


def server_url(api_url: str) -> str:
    """python-gitlab's URL of the instance: CI_API_V4_URL without its `/api/v4` (a
    self-managed instance under a path keeps its path)."""
    return api_url.rstrip("/").removesuffix("/api/v4")
