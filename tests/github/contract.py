"""GitHub's official REST description, held against the test double (tests/fake_github.py).

The description is the part of npm `@octokit/openapi` (its generated description of the public
API, a file in the package, read from disk and never fetched; the version pinned in .ci/run)
that reviewbot's GitHub adapter uses: its operations and every component
they reference, committed as `github-rest.json` beside this file so the contract holds on a
machine without npm. `contract_test.py` extracts it again from the npm package when it is
installed (CI installs it) and fails when the two differ. To regenerate after a version bump:

    npm install --prefix .ci/node @octokit/openapi@VERSION
    .venv/bin/python -m tests.github.contract

Every request the double receives and every response it gives are validated with openapi-core;
`sample` builds objects with every field GitHub's schemas require, for the double to answer.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / ".ci" / "node" / "node_modules" / "@octokit" / "openapi" / "generated"


def _dotcom_description(folder: Path) -> Path:
    """The package's description of GitHub.com's REST API: the one file that is neither for
    an Enterprise edition (`ghec`, `ghes-*`) nor dereferenced. Read from disk, never fetched."""
    found = [p for p in sorted(folder.glob("*.json"))
             if not p.name.startswith(("ghec", "ghes")) and ".deref." not in p.name]
    return found[0] if len(found) == 1 else folder / "missing-description.json"


PACKAGE = _dotcom_description(GENERATED)
SUBSET = Path(__file__).with_name("github-rest.json")
# The operations reviewbot uses (and the ones the double serves), by path template.
OPERATIONS: dict[str, tuple[str, ...]] = {
    "/user": ("get",),
    "/repos/{owner}/{repo}": ("get",),
    "/repos/{owner}/{repo}/pulls/{pull_number}": ("get",),
    "/repos/{owner}/{repo}/pulls/{pull_number}/files": ("get",),
    "/repos/{owner}/{repo}/pulls/{pull_number}/comments": ("get",),
    "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies": ("post",),
    "/repos/{owner}/{repo}/pulls/{pull_number}/reviews": ("get", "post"),
    "/repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}": ("delete",),
    "/repos/{owner}/{repo}/issues/{issue_number}/comments": ("get", "post"),
    "/repos/{owner}/{repo}/issues/comments/{comment_id}": ("patch", "delete"),
    "/repos/{owner}/{repo}/pulls/comments": ("get",),
    "/repos/{owner}/{repo}/pulls/comments/{comment_id}": ("get", "patch", "delete"),
    "/repos/{owner}/{repo}/collaborators/{username}/permission": ("get",),
}
# The double's address. The description's own server and its prose (descriptions, summaries,
# examples, documentation links) are left out of the subset (a description is kept empty,
# where the format requires one): validation needs none of it, and the tests then name no
# host but the local one.
SERVER = "http://127.0.0.1"
_PROSE = frozenset({"description", "summary", "externalDocs", "example", "examples"})


def extract(full: dict[str, Any]) -> dict[str, Any]:
    """The operations above and the components they reference, from the whole description."""
    paths: dict[str, Any] = {}
    for path, methods in OPERATIONS.items():
        item = full["paths"][path]
        paths[path] = {method: item[method] for method in methods}
        if "parameters" in item:
            paths[path]["parameters"] = item["parameters"]
    found: set[str] = set()
    _references(paths, full, found)
    components: dict[str, dict[str, Any]] = {}
    for ref in sorted(found):
        _, _, kind, name = ref.split("/")
        components.setdefault(kind, {})[name] = full["components"][kind][name]
    return _without_prose({"openapi": full["openapi"], "info": {"title": full["info"]["title"],
                                                                "version": full["info"]["version"]},
                           "servers": [{"url": SERVER}], "paths": paths,
                           "components": components})


def _without_prose(node: Any, naming: bool = False) -> Any:
    """The description without its prose keys; a schema's `properties` (and the component
    maps) name fields, so a field called `description` stays."""
    if isinstance(node, list):
        return [_without_prose(value) for value in node]
    if not isinstance(node, dict):
        return node
    return {key: "" if key == "description" and not naming  # required in a response
            else _without_prose(value, key in ("properties", "schemas", "responses",
                                               "parameters", "headers", "examples"))
            for key, value in node.items()
            if naming or key not in _PROSE or key == "description"}


def _references(node: Any, full: dict[str, Any], found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref not in found:
            found.add(ref)
            _references(_resolve(full, ref), full, found)
        for value in node.values():
            _references(value, full, found)
    elif isinstance(node, list):
        for value in node:
            _references(value, full, found)


def _resolve(spec: dict[str, Any], ref: str) -> Any:
    target: Any = spec
    for part in ref.removeprefix("#/").split("/"):
        target = target[part]
    return target


def render(spec: dict[str, Any]) -> str:
    return json.dumps(spec, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


@cache
def description() -> dict[str, Any]:
    return json.loads(SUBSET.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@cache
def _api() -> Any:
    from openapi_core import OpenAPI

    return OpenAPI.from_dict(copy.deepcopy(description()))


def check_request(method: str, path: str, query: dict[str, str], body: bytes) -> list[str]:
    """What in this request GitHub's description does not allow (empty: nothing)."""
    try:
        _api().validate_request(_request(method, path, query, body))
    except Exception as exc:  # openapi-core's errors: the request is not GitHub's
        return [f"request {_where(method, path, query)}: {_cause(exc)}"]
    return []


def check_response(method: str, path: str, query: dict[str, str], body: bytes, status: int,
                   answer: bytes) -> list[str]:
    """What in this answer to a valid request GitHub's description does not allow."""
    from openapi_core.testing import MockResponse

    where = _where(method, path, query)
    operation = _operation(method, path)
    if operation is not None and str(status) in operation["responses"]:
        response = MockResponse(answer, status_code=status, content_type="application/json")
        try:
            _api().validate_response(_request(method, path, query, body), response)
        except Exception as exc:
            return [f"response {status} to {where}: {_cause(exc)}"]
        return []
    if status >= 400:
        # A status the operation does not document (a 5xx, a rate limit): GitHub's error shape.
        data = json.loads(answer or b"null")
        if not (isinstance(data, dict) and isinstance(data.get("message"), str)
                and isinstance(data.get("documentation_url"), str)):
            return [f"response {status} to {where}: not GitHub's error shape"]
        return []
    return [f"response {status} to {where}: not a documented status"]


def _request(method: str, path: str, query: dict[str, str], body: bytes) -> Any:
    from openapi_core.testing import MockRequest

    return MockRequest(SERVER, method.lower(), path, args=query, data=body or None,
                       content_type="application/json")


def _where(method: str, path: str, query: dict[str, str]) -> str:
    return f"{method} {path}" + (f"?{urlencode(query)}" if query else "")


def _operation(method: str, path: str) -> dict[str, Any] | None:
    wanted = path.strip("/").split("/")
    for template, item in description()["paths"].items():
        parts = template.strip("/").split("/")
        if len(parts) == len(wanted) and all(
                p.startswith("{") or p == w for p, w in zip(parts, wanted, strict=True)):
            return item.get(method.lower())  # type: ignore[no-any-return]
    return None


def _cause(exc: BaseException) -> str:
    text = str(exc)
    inner = exc.__cause__ or exc.__context__
    while inner is not None:
        text += f" <- {inner}"
        inner = inner.__cause__ or inner.__context__
    return text[:2000]


def sample(name: str, /, **overrides: Any) -> dict[str, Any]:
    """An object of the named schema with every required field, then the overrides."""
    spec = description()
    value = _sample(spec["components"]["schemas"][name], spec)
    assert isinstance(value, dict)
    return _merged(value, overrides)


def _sample(schema: dict[str, Any], spec: dict[str, Any]) -> Any:
    if "$ref" in schema:
        return _sample(_resolve(spec, schema["$ref"]), spec)
    if "allOf" in schema:
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            merged = _merged(merged, _sample(part, spec))
        return merged
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return _sample(schema[key][0], spec)
    if schema.get("nullable"):
        return None
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type", "object")
    if kind == "object":
        properties = schema.get("properties", {})
        return {key: _sample(properties.get(key, {"type": "string"}), spec)
                for key in schema.get("required", [])}
    return {"string": _string(schema), "integer": 1, "number": 1, "boolean": False,
            "array": []}[kind]


def _string(schema: dict[str, Any]) -> str:
    return {"date-time": "2026-01-01T00:00:00Z", "uri": f"{SERVER}/x",
            "email": "bot@example.invalid", "uri-template": f"{SERVER}/{{x}}"}.get(
        schema.get("format", ""), "x")


def _merged(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merged(merged[key], value)
        else:
            merged[key] = value
    return merged


def main() -> None:
    full = json.loads(PACKAGE.read_text(encoding="utf-8"))
    SUBSET.write_text(render(extract(full)), encoding="utf-8")
    print(f"wrote {SUBSET} ({SUBSET.stat().st_size:,} bytes) from {PACKAGE}")


if __name__ == "__main__":
    main()
