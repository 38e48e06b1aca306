"""The merge request a GitLab CI job is about, from the job's predefined variables.

`--mode gitlab` runs in a merge-request pipeline (`CI_PIPELINE_SOURCE` is
`merge_request_event`) and writes to merge request `CI_MERGE_REQUEST_IID` of project
`CI_MERGE_REQUEST_PROJECT_ID` (else `CI_PROJECT_ID`) through `CI_API_V4_URL` (GitLab.com or a
self-managed instance). It reviews the merge request's head against
`CI_MERGE_REQUEST_DIFF_BASE_SHA` (its base, as its "Changes" tab shows it). The head is
`CI_COMMIT_SHA` in a plain merge request pipeline (`CI_MERGE_REQUEST_EVENT_TYPE` `detached`);
in a merged results pipeline or a merge train (`merged_result`, `merge_train`) `CI_COMMIT_SHA`
is GitLab's merge of the head into the target branch, so the head is
`CI_MERGE_REQUEST_SOURCE_BRANCH_SHA`, which GitLab sets only there. The variables are
GitLab's, set by the runner: trusted (they are still checked to be commit ids before git sees
them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from reviewbot.errors import UsageError
from reviewbot.lazy_re import lazy_re

MERGE_REQUEST_EVENT = "merge_request_event"
REQUIRED = ("CI_API_V4_URL", "CI_PROJECT_ID", "CI_MERGE_REQUEST_IID",
            "CI_MERGE_REQUEST_DIFF_BASE_SHA", "CI_COMMIT_SHA")
# CI_MERGE_REQUEST_EVENT_TYPE: the pipelines whose CI_COMMIT_SHA is GitLab's merge commit.
MERGED = ("merged_result", "merge_train")
# A commit id, SHA-1 or SHA-256: nothing else reaches git as a revision or a fetch.
_SHA = lazy_re(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True)
class MergeRequestPipeline:
    api_url: str
    project_id: int
    iid: int
    base_sha: str
    # The merge request's own head, what is reviewed and what positions are read from.
    head_sha: str
    # The commit the job checked out (CI_COMMIT_SHA): the head itself, or GitLab's merge of
    # it in a merged results pipeline or a merge train.
    checkout_sha: str
    # CI_MERGE_REQUEST_EVENT_TYPE: detached, merged_result, merge_train ("" when not set).
    event_type: str
    # The merge request's source project, when it is another project than the merge
    # request's (a fork); None otherwise.
    fork_project: int | None
    # The project the pipeline runs in (CI_PROJECT_ID): a fork's pipeline runs in the fork
    # unless someone runs it in the merge request's project.
    pipeline_project: int
    project_dir: Path

    @property
    def from_fork(self) -> bool:
        return self.fork_project is not None

    @property
    def merged(self) -> bool:
        """The job checked out GitLab's merge commit, not the merge request's head."""
        return self.head_sha != self.checkout_sha


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
    project = _number(env, "CI_MERGE_REQUEST_PROJECT_ID",
                      env.get("CI_MERGE_REQUEST_PROJECT_ID") or env["CI_PROJECT_ID"])
    source_project = env.get("CI_MERGE_REQUEST_SOURCE_PROJECT_ID", "")
    fork = _number(env, "CI_MERGE_REQUEST_SOURCE_PROJECT_ID", source_project) \
        if source_project else project
    checkout = _sha(env, "CI_COMMIT_SHA")
    return MergeRequestPipeline(
        api_url=env["CI_API_V4_URL"].rstrip("/"), project_id=project,
        iid=_number(env, "CI_MERGE_REQUEST_IID", env["CI_MERGE_REQUEST_IID"]),
        base_sha=_sha(env, "CI_MERGE_REQUEST_DIFF_BASE_SHA"), head_sha=_head(env, checkout),
        checkout_sha=checkout, event_type=env.get("CI_MERGE_REQUEST_EVENT_TYPE", ""),
        fork_project=fork if fork != project else None,
        pipeline_project=_number(env, "CI_PROJECT_ID", env["CI_PROJECT_ID"]),
        project_dir=Path(env.get("CI_PROJECT_DIR") or Path.cwd()))


def _head(env: Mapping[str, str], checkout: str) -> str:
    """The merge request's head: CI_MERGE_REQUEST_SOURCE_BRANCH_SHA wherever GitLab sets it
    (merged results and merge trains), else the commit checked out."""
    event = env.get("CI_MERGE_REQUEST_EVENT_TYPE", "")
    if env.get("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"):
        return _sha(env, "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA")
    if event in MERGED:
        raise UsageError(
            f"this is a {event.replace('_', ' ')} pipeline (CI_MERGE_REQUEST_EVENT_TYPE), where "
            "CI_COMMIT_SHA is GitLab's merge commit, and CI_MERGE_REQUEST_SOURCE_BRANCH_SHA, "
            "the merge request's own head, is not set: reviewbot would review the target "
            "branch's changes as the merge request's. Is the job's environment overridden?")
    return checkout


def _sha(env: Mapping[str, str], name: str) -> str:
    value = env[name].strip().lower()
    if not _SHA.fullmatch(value):
        raise UsageError(f"{name} is {env[name][:80]!r}, not a commit id: this job does not "
                         "look like a GitLab merge request pipeline.")
    return value


def _number(env: Mapping[str, str], name: str, value: str) -> int:
    try:
        return int(value)
    except ValueError as exc:
        raise UsageError(f"{name} is {value[:80]!r}, not a number: this job does not look "
                         "like a GitLab merge request pipeline.") from exc


def server_url(api_url: str) -> str:
    """python-gitlab's URL of the instance: CI_API_V4_URL without its `/api/v4` (a
    self-managed instance under a path keeps its path)."""
    return api_url.rstrip("/").removesuffix("/api/v4")
