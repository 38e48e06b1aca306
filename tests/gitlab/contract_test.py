"""Real python-gitlab against the fake GitLab: the double keeps GitLab's documented contract for
what a merge-request reviewer does (versions, diffs, positioned discussions, notes, resolving,
roles, pages, rate limits and faults)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest
import requests
from gitlab import exceptions as errors

from tests.fake_gitlab import MAX_BODY, REPORTER, FakeGitLab
from tests.gitlab.conftest import MergeRequest

LINE_CODE_400 = ('400 Bad request - Note {:line_code=>["can\'t be blank", "must be a valid '
                 'line code"]}')


def _position(gitlab: FakeGitLab, path: str = "app/util.py", old: int | None = None,
              new: int | None = None, version: int = 0) -> dict[str, Any]:
    chosen = gitlab.versions[version]
    position: dict[str, Any] = {"position_type": "text", "base_sha": chosen.base,
                                "start_sha": chosen.start, "head_sha": chosen.head,
                                "old_path": path, "new_path": path}
    if old is not None:
        position["old_line"] = old
    if new is not None:
        position["new_line"] = new
    return position


def _send(gitlab: FakeGitLab, method: str, path: str, data: bytes | None = None,
          headers: dict[str, str] | None = None) -> tuple[int, Any]:
    request = urllib.request.Request(f"{gitlab.url}{path}", data=data,  # noqa: S310
                                     method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request) as response:  # noqa: S310 (the local double)
            return int(response.status), json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def test_versions_are_listed_newest_first_with_the_repository_shas(
        merge_request: MergeRequest) -> None:
    """A push makes a version; versions come newest first; base is the merge base, start the
    target's head, head the source's head; the merge request's diff_refs are the newest's."""
    repo = merge_request.repo
    first_head = repo.git("rev-parse", "topic").strip()
    merge_request.push({"app/more.py": "x = 1\n"})
    mr = merge_request.project_mr()
    versions = mr.diffs.list(get_all=True)
    assert [v.head_commit_sha for v in versions] == [repo.git("rev-parse", "topic").strip(),
                                                     first_head]
    newest = versions[0]
    assert newest.start_commit_sha == repo.git("rev-parse", "main").strip()
    assert newest.base_commit_sha == repo.git("merge-base", "main", "topic").strip()
    assert newest.base_commit_sha != newest.start_commit_sha
    assert mr.diff_refs == {"base_sha": newest.base_commit_sha,
                            "start_sha": newest.start_commit_sha,
                            "head_sha": newest.head_commit_sha}


def test_a_version_and_the_diffs_carry_git_diff_hunks(merge_request: MergeRequest) -> None:
    """Diff entries are GitLab's: hunks from `@@` on; an added file's old_path is its path."""
    mr = merge_request.project_mr()
    version = mr.diffs.get(mr.diffs.list(get_all=True)[0].id)
    by_path = {d["new_path"]: d for d in version.diffs}
    assert by_path["app/run.py"]["new_file"] and by_path["app/run.py"]["old_path"] == "app/run.py"
    assert by_path["app/util.py"]["diff"].startswith("@@ -")
    assert "-    return x + 2\n+    return x * 2\n" in by_path["app/util.py"]["diff"]
    assert set(by_path) == {"app/run.py", "app/util.py"}  # main's docs.md is not in the diff
    listed = mr.manager.gitlab.http_list(f"{mr.manager.path}/{mr.iid}/diffs", get_all=True)
    assert [d["new_path"] for d in listed] == [d["new_path"] for d in version.diffs]
    assert {c["new_path"] for c in mr.changes()["changes"]} == set(by_path)


@pytest.mark.parametrize(("old", "new", "kind"), [
    (None, 6, "added"), (6, None, "removed"), (5, 5, "context"), (None, 20, "added at the end"),
])
def test_a_discussion_on_a_line_of_the_diff_is_created(merge_request: MergeRequest,
                                                       old: int | None, new: int | None,
                                                       kind: str) -> None:
    """new_line alone for an added line, old_line alone for a removed one, both for context."""
    mr = merge_request.project_mr()
    position = _position(merge_request.gitlab, old=old, new=new)
    discussion = mr.discussions.create({"body": f"on a {kind} line", "position": position})
    [note] = discussion.attributes["notes"]
    assert note["type"] == "DiffNote" and note["resolvable"] and not note["resolved"]
    assert (note["position"]["old_line"], note["position"]["new_line"]) == (old, new)
    assert note["author"]["username"] == "reviewbot"


@pytest.mark.parametrize(("path", "old", "new"), [
    ("app/util.py", None, 5),    # a context line given as added
    ("app/util.py", 5, None),    # a context line given as removed
    ("app/util.py", 6, 6),       # a changed line given as context
    ("app/util.py", None, 99),   # past the file
    ("app/util.py", 1, 1),       # an unchanged line outside every hunk
    ("README.md", 1, 1),         # a file the merge request does not change
    ("app/run.py", None, None),  # no line at all
])
def test_a_position_off_the_diff_is_gitlabs_400(merge_request: MergeRequest, path: str,
                                                old: int | None, new: int | None) -> None:
    """GitLab cannot give such a note a line code, and says so in its words."""
    mr = merge_request.project_mr()
    with pytest.raises(errors.GitlabCreateError) as refused:
        mr.discussions.create({"body": "x", "position": _position(merge_request.gitlab, path,
                                                                  old, new)})
    assert refused.value.response_code == 400
    assert refused.value.error_message == LINE_CODE_400
    assert merge_request.gitlab.discussions == []


def test_a_position_needs_the_shas_of_a_version(merge_request: MergeRequest) -> None:
    """SHAs of no version are refused; an older version's are GitLab's too (an outdated note)."""
    gitlab = merge_request.gitlab
    mr = merge_request.project_mr()
    stale = {**_position(gitlab, new=6), "head_sha": gitlab.versions[0].base}
    with pytest.raises(errors.GitlabCreateError):
        mr.discussions.create({"body": "x", "position": stale})
    merge_request.push({"app/more.py": "x = 1\n"})
    older = mr.discussions.create({"body": "x", "position": _position(gitlab, new=6,
                                                                      version=1)})
    assert older.attributes["notes"][0]["position"]["head_sha"] == gitlab.versions[1].head


def test_a_curl_style_form_creates_the_same_discussion(merge_request: MergeRequest) -> None:
    """The docs' example sends `position[new_line]=6` as form fields: GitLab reads them alike."""
    gitlab = merge_request.gitlab
    fields = {"body": "form"} | {f"position[{k}]": str(v)
                                 for k, v in _position(gitlab, new=6).items()}
    data = "&".join(f"{k}={v}" for k, v in fields.items()).encode()
    status, answer = _send(gitlab, "POST", "/api/v4/projects/42/merge_requests/7/discussions",
                           data, {"PRIVATE-TOKEN": "glpat-reviewbot",
                                  "content-type": "application/x-www-form-urlencoded"})
    assert status == 201 and answer["notes"][0]["position"]["new_line"] == 6


def test_notes_come_in_pages_of_gitlabs_size(merge_request: MergeRequest) -> None:
    """per_page 20 unless asked, at most 100; x-total, x-total-pages and Link as GitLab."""
    gitlab = merge_request.gitlab
    for n in range(45):
        gitlab.add_note_by("author", f"note {n}")
    mr = merge_request.project_mr()
    pages = mr.notes.list(iterator=True)
    assert (pages.total, pages.total_pages, pages.per_page) == (45, 3, 20)
    assert len(list(pages)) == 45 and gitlab.count("GET", "/notes$") == 3
    assert len(mr.notes.list(per_page=500, page=1)) == 45
    assert gitlab.requests[-1].query["per_page"] == "500"
    status, _ = _send(gitlab, "GET", "/api/v4/projects/42/merge_requests/7/notes?per_page=10"
                                     "&page=5", headers={"PRIVATE-TOKEN": "glpat-reviewbot"})
    assert status == 200


def test_system_notes_are_listed_and_belong_to_no_one(merge_request: MergeRequest) -> None:
    """GitLab lists its own notes ("added 1 commit") with the comments; nobody edits them."""
    gitlab = merge_request.gitlab
    system = gitlab.add_system_note("added 1 commit")
    mr = merge_request.project_mr("glpat-author")
    [listed] = [n for n in mr.notes.list(get_all=True) if n.id == system["id"]]
    assert listed.system
    listed.body = "rewritten"
    with pytest.raises(errors.GitlabUpdateError) as refused:
        listed.save()
    assert refused.value.response_code == 403


def test_a_note_is_edited_and_deleted_by_its_author_only(merge_request: MergeRequest) -> None:
    gitlab = merge_request.gitlab
    mr = merge_request.project_mr()
    mine = mr.notes.create({"body": "first"})
    mine.body = "second"
    mine.save()
    assert [n["body"] for n in gitlab.notes()] == ["second"]
    theirs = mr.notes.get(gitlab.add_note_by("author", "theirs")["id"])
    theirs.body = "hijacked"
    with pytest.raises(errors.GitlabUpdateError) as refused:
        theirs.save()
    assert refused.value.response_code == 403
    with pytest.raises(errors.GitlabDeleteError):
        theirs.delete()
    mine.delete()
    assert [n["body"] for n in gitlab.notes()] == ["theirs"]


def test_a_note_is_at_most_a_million_characters(merge_request: MergeRequest) -> None:
    mr = merge_request.project_mr()
    mr.notes.create({"body": "x" * MAX_BODY})
    with pytest.raises(errors.GitlabCreateError) as refused:
        mr.notes.create({"body": "x" * (MAX_BODY + 1)})
    assert refused.value.error_message == (
        '400 Bad request - Note {:note=>["is too long (maximum is 1000000 characters)"]}')


def test_a_discussion_is_replied_to_resolved_and_unresolved(merge_request: MergeRequest) -> None:
    gitlab = merge_request.gitlab
    mr = merge_request.project_mr()
    created = mr.discussions.create({"body": "look", "position": _position(gitlab, new=6)})
    discussion = mr.discussions.get(created.id)
    reply = discussion.notes.create({"body": "fixed?"})
    reply.body = "fixed."
    reply.save()
    discussion.resolved = True
    discussion.save()
    stored = gitlab.discussions[0]["notes"]
    assert [n["body"] for n in stored] == ["look", "fixed."]
    assert all(n["resolved"] and n["resolved_by"]["username"] == "reviewbot" for n in stored)
    discussion.resolved = False
    discussion.save()
    assert not any(n["resolved"] for n in gitlab.discussions[0]["notes"])
    status, _ = _send(gitlab, "PUT", f"/api/v4/projects/42/merge_requests/7/discussions/"
                                     f"{created.id}?resolved=true",
                      headers={"PRIVATE-TOKEN": "glpat-reviewbot"})
    assert status == 200 and gitlab.discussions[0]["notes"][0]["resolved"]


def test_a_reporter_reads_and_comments_but_may_not_resolve(merge_request: MergeRequest) -> None:
    """GitLab's roles: a Reporter may comment on a merge request; resolving a thread takes a
    Developer (or the merge request's author)."""
    gitlab = merge_request.gitlab
    opened = merge_request.project_mr().discussions.create({"body": "b"})
    mr = merge_request.project_mr("glpat-reporter")
    assert mr.diff_refs["head_sha"] == gitlab.versions[0].head
    mr.notes.create({"body": "a reporter's comment"})
    discussion = mr.discussions.get(opened.id)
    discussion.resolved = True
    with pytest.raises(errors.GitlabUpdateError) as refused:
        discussion.save()
    assert refused.value.response_code == 403
    gitlab.users["author"].access = REPORTER
    as_author = merge_request.project_mr("glpat-author").discussions.get(opened.id)
    as_author.resolved = True
    as_author.save()
    assert gitlab.discussions[0]["notes"][0]["resolved"]


@pytest.mark.parametrize("token", ["", "glpat-unknown", "job-reviewbot"])
def test_no_token_a_bad_one_or_a_job_token_is_401(merge_request: MergeRequest,
                                                  token: str) -> None:
    """A CI job token opens only the routes GitLab lists for it: none of these."""
    from gitlab import Gitlab

    client = (Gitlab(merge_request.gitlab.url) if not token
              else merge_request.client(token))
    with pytest.raises(errors.GitlabAuthenticationError) as refused:
        client.projects.get("acme/shop", lazy=True).mergerequests.get(7)
    assert refused.value.response_code == 401
    assert merge_request.gitlab.requests[-1].auth == (
        "none" if not token else "job-token" if token.startswith("job") else "private-token")


def test_a_user_who_is_no_member_sees_no_project(merge_request: MergeRequest) -> None:
    with pytest.raises(errors.GitlabGetError) as refused:
        merge_request.project_mr("glpat-outsider")
    assert (refused.value.response_code, refused.value.error_message) == (
        404, "404 Project Not Found")


def test_the_token_user_and_its_role(merge_request: MergeRequest) -> None:
    client = merge_request.client("oauth-reviewbot")
    client.auth()
    assert client.user is not None
    assert (client.user.username, client.user.bot) == ("reviewbot", True)
    assert merge_request.gitlab.requests[-1].auth == "bearer"
    members = client.projects.get(42, lazy=True).members_all
    assert members.get(3).access_level == REPORTER
    with pytest.raises(errors.GitlabGetError):
        members.get(4)


def test_a_throttled_write_is_retried_after_retry_after(merge_request: MergeRequest) -> None:
    """python-gitlab's own retry obeys GitLab's Retry-After on a 429."""
    gitlab = merge_request.gitlab
    gitlab.fail("POST", "/notes$", 429, kind="throttle", retry_after=7)
    merge_request.project_mr().notes.create({"body": "once"})
    assert merge_request.waits == [7]
    assert gitlab.count("POST", "/notes$") == 2 and len(gitlab.notes()) == 1


@pytest.mark.parametrize("kind", ["throttle-no-headers", "endpoint"])
def test_a_429_without_retry_after_backs_off(merge_request: MergeRequest, kind: str) -> None:
    gitlab = merge_request.gitlab
    gitlab.fail("POST", "/notes$", 429, kind=kind, times=2)
    merge_request.project_mr().notes.create({"body": "once"})
    assert merge_request.waits == [0.1, 0.2] and len(gitlab.notes()) == 1


def test_a_5xx_is_retried_only_when_asked(merge_request: MergeRequest) -> None:
    gitlab = merge_request.gitlab
    gitlab.fail("POST", "/notes$", 502)
    with pytest.raises(errors.GitlabCreateError) as refused:
        merge_request.project_mr().notes.create({"body": "x"})
    assert refused.value.response_code == 502 and gitlab.notes() == []
    gitlab.fail("POST", "/notes$", 500)
    merge_request.project_mr(retry_transient_errors=True).notes.create({"body": "x"})
    assert len(gitlab.notes()) == 1 and merge_request.waits == [0.1]


@pytest.mark.parametrize("fault", [{"status": 502, "stored": True},
                                   {"drop": True, "stored": True}])
def test_a_write_stored_before_the_failure_is_stored_twice_by_a_retry(
        merge_request: MergeRequest, fault: dict[str, Any]) -> None:
    """GitLab may store a note and fail after: a blind retry duplicates it (what the adapter
    must look for before it writes again)."""
    gitlab = merge_request.gitlab
    gitlab.fail("POST", "/notes$", **fault)
    merge_request.project_mr(retry_transient_errors=True).notes.create({"body": "x"})
    assert [n["body"] for n in gitlab.notes()] == ["x", "x"]
    assert len(gitlab.writes) == 2


def test_a_dropped_connection_before_the_write_stores_nothing(
        merge_request: MergeRequest) -> None:
    gitlab = merge_request.gitlab
    gitlab.fail("POST", "/discussions$", drop=True)
    mr = merge_request.project_mr()
    # python-gitlab lets requests' own error through when it does not retry.
    with pytest.raises(requests.ConnectionError):
        mr.discussions.create({"body": "x"})
    assert gitlab.discussions == []


@pytest.mark.parametrize(("method", "path", "body", "said"), [
    ("GET", "/api/v4/projects/42/merge_requests/7/reviews", None, "no such GitLab route"),
    ("POST", "/api/v4/projects/42/merge_requests/7/notes", {}, "body is missing"),
    ("POST", "/api/v4/projects/42/merge_requests/7/discussions",
     {"body": "b", "position": {"position_type": "text", "base_sha": "a", "start_sha": "a",
                                "head_sha": "a", "new_line": "six"}},
     "position[new_line] is invalid"),
    ("POST", "/api/v4/projects/42/merge_requests/7/discussions",
     {"body": "b", "position": {"position_type": "line", "base_sha": "a", "start_sha": "a"}},
     "position[head_sha] is missing, position[position_type] does not have a valid value"),
    ("POST", "/api/v4/projects/42/merge_requests/7/notes", {"body": "b", "line": 3},
     "GitLab ignores line"),
    ("PUT", "/api/v4/projects/42/merge_requests/7/notes/abc", {"body": "b"},
     "note_id is invalid"),
])
def test_a_request_gitlab_would_refuse_is_a_violation(gitlab: FakeGitLab, method: str,
                                                      path: str, body: Any, said: str) -> None:
    data = None if body is None else json.dumps(body).encode()
    _send(gitlab, method, path, data, {"PRIVATE-TOKEN": "glpat-reviewbot",
                                       "content-type": "application/json"})
    assert len(gitlab.violations) == 1 and said in gitlab.violations[0]
    gitlab.violations.clear()


def test_grape_refusals_say_error_and_endpoint_refusals_say_message(gitlab: FakeGitLab) -> None:
    headers = {"PRIVATE-TOKEN": "glpat-reviewbot", "content-type": "application/json"}
    assert _send(gitlab, "POST", "/api/v4/projects/42/merge_requests/7/notes", b"{}",
                 headers) == (400, {"error": "body is missing"})
    assert _send(gitlab, "GET", "/api/v4/nowhere", None, headers) == (
        404, {"error": "404 Not Found"})
    assert _send(gitlab, "GET", "/api/v4/user", None, {}) == (401, {"message": "401 Unauthorized"})
    gitlab.violations.clear()
