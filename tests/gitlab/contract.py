"""GitLab's REST v4 contract for the routes a merge-request reviewer uses, held against the test
double (tests/fake_gitlab.py).

GitLab publishes no complete machine-readable description of REST v4 (its `openapi_v2.yaml`
covers a few areas and none of these routes; no registry ships one), so the contract is the
routes' own parameter declarations, transcribed from GitLab's Grape endpoints (`lib/api/
merge_requests.rb`, `discussions.rb`, `notes.rb`, `members.rb`, `users.rb`, `projects.rb`,
`helpers/pagination.rb`) and checked against docs.gitlab.com's API pages (docs/GITLAB.md, "The
test double", names them). `check` answers what Grape answers for a request that breaks them
(400 `{"error": "body is missing"}`), and says why, for the double to record as a violation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # string | integer | boolean | hash
    required: bool = False
    values: tuple[str, ...] = ()
    children: tuple[Param, ...] = ()


@dataclass(frozen=True)
class Route:
    method: str
    # The path under /api/v4, `:name` for a segment.
    template: str
    params: tuple[Param, ...] = ()
    # Grape's `exactly_one_of`.
    exactly_one_of: tuple[str, ...] = ()
    pattern: re.Pattern[str] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        regex = re.sub(r":(\w+)", r"(?P<\1>[^/]+)", self.template)
        object.__setattr__(self, "pattern", re.compile(f"/api/v4{regex}"))


PAGINATION = (Param("page", "integer"), Param("per_page", "integer"))
POSITION = Param("position", "hash", children=(
    Param("base_sha", "string", required=True),
    Param("start_sha", "string", required=True),
    Param("head_sha", "string", required=True),
    Param("position_type", "string", required=True, values=("text", "image")),
    Param("new_path", "string"), Param("new_line", "integer"),
    Param("old_path", "string"), Param("old_line", "integer"),
    Param("width", "integer"), Param("height", "integer"),
    Param("x", "integer"), Param("y", "integer"),
    Param("line_range", "hash", children=tuple(
        Param(end, "hash", children=(Param("line_code", "string"), Param("type", "string"),
                                     Param("old_line", "string"), Param("new_line", "string")))
        for end in ("start", "end")))))
MR = "/projects/:id/merge_requests/:merge_request_iid"
DISCUSSION = f"{MR}/discussions/:discussion_id"
ROUTES: tuple[Route, ...] = (
    Route("GET", "/user"),
    Route("GET", "/projects/:id", (Param("statistics", "boolean"), Param("license", "boolean"),
                                   Param("with_custom_attributes", "boolean"))),
    Route("GET", "/projects/:id/members/all/:user_id"),
    Route("GET", MR, (Param("render_html", "boolean"),
                      Param("include_diverged_commits_count", "boolean"),
                      Param("include_rebase_in_progress", "boolean"))),
    Route("GET", f"{MR}/changes", (Param("access_raw_diffs", "boolean"),
                                   Param("unidiff", "boolean"))),
    Route("GET", f"{MR}/diffs", (*PAGINATION, Param("unidiff", "boolean"))),
    Route("GET", f"{MR}/versions", PAGINATION),
    Route("GET", f"{MR}/versions/:version_id", (Param("unidiff", "boolean"),)),
    Route("GET", f"{MR}/notes", (*PAGINATION,
                                 Param("order_by", "string", values=("created_at",
                                                                     "updated_at")),
                                 Param("sort", "string", values=("asc", "desc")),
                                 Param("activity_filter", "string",
                                       values=("all_notes", "only_comments",
                                               "only_activity")))),
    Route("POST", f"{MR}/notes", (Param("body", "string", required=True),
                                  Param("confidential", "boolean"), Param("internal", "boolean"),
                                  Param("created_at", "string"),
                                  Param("merge_request_diff_head_sha", "string"))),
    Route("GET", f"{MR}/notes/:note_id"),
    Route("PUT", f"{MR}/notes/:note_id", (Param("body", "string"),
                                          Param("confidential", "boolean"))),
    Route("DELETE", f"{MR}/notes/:note_id"),
    Route("GET", f"{MR}/discussions", PAGINATION),
    Route("POST", f"{MR}/discussions", (Param("body", "string", required=True),
                                        Param("created_at", "string"),
                                        Param("commit_id", "string"), POSITION)),
    Route("GET", DISCUSSION),
    Route("PUT", DISCUSSION, (Param("resolved", "boolean", required=True),)),
    Route("GET", f"{DISCUSSION}/notes"),
    Route("POST", f"{DISCUSSION}/notes", (Param("body", "string", required=True),
                                          Param("created_at", "string"))),
    Route("GET", f"{DISCUSSION}/notes/:note_id"),
    Route("PUT", f"{DISCUSSION}/notes/:note_id", (Param("body", "string"),
                                                  Param("resolved", "boolean")),
          exactly_one_of=("body", "resolved")),
    Route("DELETE", f"{DISCUSSION}/notes/:note_id"),
)
# Path segments Grape declares as Integer (`requires :note_id, type: Integer`).
INTEGER_SEGMENTS = frozenset({"merge_request_iid", "note_id", "user_id", "version_id"})


def route(method: str, path: str) -> tuple[Route, dict[str, str]] | None:
    for candidate in ROUTES:
        if candidate.method == method and (m := candidate.pattern.fullmatch(path)):
            return candidate, m.groupdict()
    return None


def check(found: Route, segments: dict[str, str], params: dict[str, Any]) -> list[str]:
    """What Grape refuses in this request, in its words ("body is missing"); empty: nothing."""
    problems = [f"{name} is invalid" for name, value in segments.items()
                if name in INTEGER_SEGMENTS and not value.isdigit()]
    problems += _params(found.params, params, "")
    if found.exactly_one_of:
        given = [name for name in found.exactly_one_of if params.get(name) is not None]
        if len(given) != 1:
            names = ", ".join(found.exactly_one_of)
            problems.append(f"{names} are missing, exactly one parameter must be provided"
                            if not given else f"{names} are mutually exclusive")
    return problems


def unknown(found: Route, params: dict[str, Any]) -> list[str]:
    """Parameters the route does not declare: Grape drops them without a word, so a client
    that sends one believes GitLab got something it never reads."""
    return _unknown(found.params, params, "")


def _params(declared: tuple[Param, ...], given: dict[str, Any], prefix: str) -> list[str]:
    problems = []
    for param in declared:
        name = f"{prefix}[{param.name}]" if prefix else param.name
        value = given.get(param.name)
        if value is None:
            if param.required:
                problems.append(f"{name} is missing")
            continue
        if not _is(param.kind, value):
            problems.append(f"{name} is invalid")
        elif param.values and value not in param.values:
            problems.append(f"{name} does not have a valid value")
        elif param.kind == "hash":
            problems += _params(param.children, value, name)
    return problems


def _unknown(declared: tuple[Param, ...], given: dict[str, Any], prefix: str) -> list[str]:
    names = {p.name: p for p in declared} | {p.name: p for p in PAGINATION}
    found = []
    for key, value in given.items():
        name = f"{prefix}[{key}]" if prefix else key
        if key not in names:
            found.append(name)
        elif names[key].kind == "hash" and isinstance(value, dict):
            found += _unknown(names[key].children, value, name)
    return found


def _is(kind: str, value: Any) -> bool:
    """Grape's coercion: a query string is coerced to the declared type when it can be."""
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, str) and value.lstrip("-").isdigit())
    if kind == "boolean":
        return isinstance(value, bool) or value in ("true", "false", "1", "0")
    if kind == "hash":
        return isinstance(value, dict)
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def boolean(value: Any) -> bool:
    return value is True or value in ("true", "1")


# GitLab's error bodies. Grape's own refusals (a missing or invalid parameter, an unknown route)
# say `error`; the endpoints' `bad_request!`, `forbidden!`, `not_found!` say `message`.
def grape_error(status: int, text: str) -> tuple[int, dict[str, Any]]:
    return status, {"error": text}


def message(status: int, text: str) -> tuple[int, dict[str, Any]]:
    return status, {"message": text}


def note_invalid(errors: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
    """`bad_request!("Note #{note.errors.messages}")`: the model's errors as Ruby prints a hash
    (observed: `400 Bad request - Note {:line_code=>["can't be blank", "must be a valid line
    code"]}`)."""
    shown = ", ".join(f":{key}=>[{', '.join(_ruby_string(v) for v in values)}]"
                      for key, values in errors.items())
    return message(400, f"400 Bad request - Note {{{shown}}}")


def _ruby_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
