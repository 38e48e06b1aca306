"""What to review when pre-commit runs reviewbot: the pushed range, or what `--all-files` means.

pre-commit exports the pushed range as PRE_COMMIT_FROM_REF/PRE_COMMIT_TO_REF only when the
remote already has an ancestor of it. On the first push of a repository (the range starts at
the root commit) it sets only PRE_COMMIT_LOCAL_BRANCH, and `pre-commit run --all-files` (or
`--hook-stage pre-push` by hand) sets neither. A hook must not fail for a reason the user
cannot act on, and must not pass silently having read nothing, so each case gets a review.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from reviewbot.errors import GitError
from reviewbot.repo.git import GitRepo
from reviewbot.schema.units import ChangeRequest


class HookRequest(msgspec.Struct, frozen=True):
    request: ChangeRequest
    # One line for the user when the review is not what the hook usually does.
    notice: str | None = None


def pre_push_request(repo: GitRepo, env: Mapping[str, str]) -> HookRequest:
    """The pushed commits, each of them checked for secrets as well as the net change."""
    to_ref = env.get("PRE_COMMIT_TO_REF") or env.get("PRE_COMMIT_ORIGIN")
    from_ref = env.get("PRE_COMMIT_FROM_REF") or env.get("PRE_COMMIT_SOURCE")
    if to_ref and from_ref:
        for name, ref in (("PRE_COMMIT_FROM_REF", from_ref), ("PRE_COMMIT_TO_REF", to_ref)):
            if repo.rev_parse(ref) is None:  # said in pre-commit's words, not --base's
                raise GitError(f"{name}={ref} (the pushed range, from pre-commit) is not a "
                               "commit in this repository: fetch the remote (`git fetch`) "
                               "and push again.")
        return HookRequest(ChangeRequest(mode="pr", base=from_ref, head=to_ref,
                                         check_history=True))
    local = env.get("PRE_COMMIT_LOCAL_BRANCH")
    if local and repo.rev_parse(local):
        return HookRequest(
            ChangeRequest(mode="pr", head=local, base_is_root=True, check_history=True),
            f"nothing on the remote to compare {_short(local)} with (a first push): "
            "reviewing every pushed commit")
    return all_files_request(repo, "no pushed range was given")


def all_files_request(repo: GitRepo, why: str) -> HookRequest:
    """The branch against its upstream or the remote's default branch; with neither (or
    nothing ahead of it), every tracked file as the working tree has it."""
    base = repo.upstream_or_default()
    if base is not None and repo.head() and repo.count_commits(f"{base}..HEAD"):
        return HookRequest(ChangeRequest(mode="pr", base=base, head="HEAD", check_history=True),
                           f"{why}: reviewing this branch against {base}")
    return HookRequest(ChangeRequest(mode="working", base_is_root=True),
                       f"{why}, and {_nothing_ahead(repo, base)}: reviewing every tracked file")


def _nothing_ahead(repo: GitRepo, base: str | None) -> str:
    """Why the branch has no change of its own to review, as the user can check it."""
    if repo.head() is None:
        return "no commit yet"
    if base is None:
        return "no upstream branch or origin/HEAD to compare with"
    branch = repo.current_branch() or "HEAD"
    if repo.rev_parse(base) == repo.head():
        return f"{branch} is at {base} (no commit of its own)"
    return f"{branch} has no commit that {base} lacks"


def _short(ref: str) -> str:
    return ref.removeprefix("refs/heads/")
