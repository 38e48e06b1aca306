"""What the job's clone must hold for a merge request's review, in GitLab's words.

The review diffs the merge request's head with its base and reads the config at the base.
In a merged results pipeline or a merge train the job checks out GitLab's merge commit,
whose second parent is the head, so a full clone holds the head; a shallow one may not, and
the head is then fetched by its id (GitLab serves any commit by id), else by the merge
request's own ref, `refs/merge-requests/IID/head`, which GitLab keeps in the merge request's
project for every merge request, a fork's too. Both are fixed by GitLab's variables (a commit
id, a number), never by a name the merge request's author chose, and git fetches objects only:
nothing is checked out. A base that is missing, or a history too short to find the merge
base, is an error that says how the job gets the whole history (`GIT_DEPTH: "0"`).
"""

from __future__ import annotations

from collections.abc import Callable

from reviewbot.errors import GitError
from reviewbot.gitlab.ci import MergeRequestPipeline
from reviewbot.repo.git import GitRepo

REMOTE = "origin"
_DEPTH = ('give the job the whole history: `GIT_DEPTH: "0"` in its `variables:` (the '
          'component and the job in docs/GITLAB.md set it; a project\'s "Git shallow clone" '
          "setting is overridden by it)")


def prepare_clone(repo: GitRepo, pipeline: MergeRequestPipeline,
                  notice: Callable[[str], None]) -> None:
    """The head and the base are commits here, with a merge base: fetched if need be, else
    a GitError that says what the job must set."""
    if repo.rev_parse(pipeline.head_sha) is None:
        _fetch_head(repo, pipeline, notice)
    shallow = repo.is_shallow()
    clone = "this shallow clone" if shallow else "this clone"
    if repo.rev_parse(pipeline.base_sha) is None:
        raise GitError(f"the merge request's base {pipeline.base_sha[:12]} "
                       f"(CI_MERGE_REQUEST_DIFF_BASE_SHA) is not in {clone}: {_DEPTH}.")
    if repo.merge_base(pipeline.base_sha, pipeline.head_sha) is None:
        if shallow:
            raise GitError(f"the merge request's base and head have no merge base in {clone} "
                           f"(its history is cut short): {_DEPTH}.")
        raise GitError("the merge request's base and head have no common history; there is "
                       "no merge base to diff from.")


def _fetch_head(repo: GitRepo, pipeline: MergeRequestPipeline,
                notice: Callable[[str], None]) -> None:
    head = pipeline.head_sha
    if REMOTE not in repo.remotes():
        raise GitError(f"the merge request's head {head[:12]} "
                       f"({_head_variable(pipeline)}) is not in this clone, which has no "
                       f"{REMOTE} remote to fetch it from: {_DEPTH}.")
    notice(f"fetching the merge request's head {head[:12]} from {REMOTE} (this clone lacks "
           "it)")
    ref = f"refs/merge-requests/{pipeline.iid}/head"
    for wanted in (head, f"+{ref}:refs/reviewbot/merge-requests/{pipeline.iid}/head"):
        if repo.fetch(REMOTE, wanted) and repo.rev_parse(head) is not None:
            return
    raise GitError(f"the merge request's head {head[:12]} ({_head_variable(pipeline)}) is not "
                   f"in this clone, and fetching it (and {ref}) from {REMOTE} failed: "
                   f"{_DEPTH}.")


def _head_variable(pipeline: MergeRequestPipeline) -> str:
    return "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA" if pipeline.merged else "CI_COMMIT_SHA"
