"""The GitLab CI/CD files: the component (templates/reviewbot.yml), the job to copy
(docs/examples/gitlab-ci.yml) and the include (docs/examples/gitlab-ci-component.yml). Their
scripts run as a runner would run them (sh and bash, inputs through the job's variables), with
a `reviewbot` on PATH that records its command line."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from reviewbot.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
COMPONENT_FILE = ROOT / "templates" / "reviewbot.yml"
EXAMPLE_FILE = ROOT / "docs" / "examples" / "gitlab-ci.yml"
INCLUDE_FILE = ROOT / "docs" / "examples" / "gitlab-ci-component.yml"
HEADER, JOB_DOCUMENT = yaml.safe_load_all(COMPONENT_FILE.read_text(encoding="utf-8"))
INPUTS: dict[str, dict[str, Any]] = HEADER["spec"]["inputs"]
# `$[[ inputs.NAME ]]`, as GitLab writes an interpolation block.
BLOCK = re.compile(r"\$\[\[\s*inputs\.([A-Za-z0-9_-]+)\s*\]\]")

# The flags `reviewbot --mode gitlab` takes (the mode's contract; `--full-review` is an alias
# of `--full`).
GITLAB_MODE_FLAGS = {"--mode", "--fail-level", "--max-comments", "--inline-level", "--config",
                     "--full", "--full-review", "--codequality"}
SOURCE = "git+https://gitlab.example.com/tools/reviewbot.git@v1.0.0"


def interpolate(node: Any, given: dict[str, Any]) -> Any:
    """GitLab's interpolation: on the loaded YAML, value by value (a value that is one whole
    block keeps the input's type), so an input never changes the document's structure."""
    if isinstance(node, dict):
        return {key: interpolate(value, given) for key, value in node.items()}
    if isinstance(node, list):
        return [interpolate(item, given) for item in node]
    if not isinstance(node, str):
        return node
    whole = BLOCK.fullmatch(node)
    if whole:
        return given[whole.group(1)]
    return BLOCK.sub(lambda match: gitlab_text(given[match.group(1)]), node)


def gitlab_text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def component_job(**given: Any) -> dict[str, Any]:
    """The component's job as GitLab builds it from its defaults and the given inputs."""
    values = {name: spec["default"] for name, spec in INPUTS.items() if "default" in spec}
    missing = set(INPUTS) - set(values) - set(given)
    assert not missing, f"inputs without a default must be given: {missing}"
    return interpolate(JOB_DOCUMENT, values | given)["reviewbot"]  # type: ignore[no-any-return]


def run_script(job: dict[str, Any], tmp_path: Path, shell: str = "sh",
               exit_code: int = 0, **env: str) -> tuple[subprocess.CompletedProcess[str],
                                                        list[list[str]], dict[str, str]]:
    """The job's script in one shell, as a runner runs it, with the job's variables in the
    environment; `python` and `reviewbot` are stand-ins that record their arguments."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    calls = tmp_path / "calls.jsonl"
    for name in ("python", "reviewbot"):
        tool = bin_dir / name
        tool.write_text(
            "#!/usr/bin/env python3\nimport json, os, sys\n"
            f"with open({str(calls)!r}, 'a') as out:\n"
            "    out.write(json.dumps([os.path.basename(sys.argv[0]), *sys.argv[1:]]) + '\\n')\n"
            "    json.dump({k: v for k, v in os.environ.items() if k.startswith(('REVIEWBOT_',"
            " 'OPENAI_'))}, open(os.environ['STUB_ENV'], 'w'))\n"
            "sys.exit(int(os.environ['STUB_EXIT']) if sys.argv[0].endswith('reviewbot') else 0)\n")
        tool.chmod(0o755)
    seen = tmp_path / "env.json"
    variables = {name: gitlab_text(value) for name, value in job["variables"].items()}
    full_env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "HOME": str(tmp_path),
                "STUB_EXIT": str(exit_code), "STUB_ENV": str(seen)} | variables | env
    script = "\n".join(job["script"])
    result = subprocess.run([shell, "-e", "-c", script], cwd=tmp_path, env=full_env,
                            capture_output=True, text=True, check=False)
    lines = calls.read_text().splitlines() if calls.exists() else []
    recorded = json.loads(seen.read_text()) if seen.exists() else {}
    return result, [json.loads(line) for line in lines], recorded


def reviewbot_args(calls: list[list[str]]) -> list[str]:
    [call] = [c for c in calls if c[0] == "reviewbot"]
    return call[1:]


def test_the_component_is_a_spec_header_and_one_merge_request_job() -> None:
    """A component is `spec:` then `---` then the job; the job runs on merge requests only."""
    assert set(HEADER) == {"spec"}
    assert list(JOB_DOCUMENT) == ["reviewbot"]
    job = component_job(source=SOURCE)
    assert job["rules"] == [{"if": '$CI_PIPELINE_SOURCE == "merge_request_event"'}]
    assert job["variables"]["GIT_DEPTH"] == "0"  # the base is in the clone
    assert "CI_MERGE_REQUEST_IID" in job["cache"]["key"]
    assert job["cache"]["paths"] == [".reviewbot/cache"]
    assert job["artifacts"]["when"] == "always"
    assert "allow_failure" not in job  # exit 1, 2 and 3 all fail the job


def test_every_input_is_declared_and_used() -> None:
    """Every `$[[ inputs.x ]]` names a declared input, and every declared input is used."""
    used = set(BLOCK.findall(COMPONENT_FILE.read_text(encoding="utf-8").split("\n---\n", 1)[1]))
    assert used == set(INPUTS)


def test_no_input_is_spliced_into_a_script() -> None:
    """An input reaches the scripts only through a variable: it cannot become shell code."""
    job = JOB_DOCUMENT["reviewbot"]
    assert not any(BLOCK.search(line) for line in job["script"])
    spliced = {BLOCK.fullmatch(str(value)) for value in job["variables"].values()}
    assert {match.group(1) for match in spliced if match} == set(INPUTS) - {"stage", "image"}


def test_the_token_is_a_variable_never_an_input() -> None:
    """GITLAB_TOKEN comes from the project's masked variable: no input or job variable sets it,
    and the files never name CI_JOB_TOKEN for the API."""
    text = COMPONENT_FILE.read_text(encoding="utf-8") + EXAMPLE_FILE.read_text(encoding="utf-8")
    assert not any("token" in name.lower() for name in INPUTS)
    assert "GITLAB_TOKEN" not in JOB_DOCUMENT["reviewbot"]["variables"]
    assert "CI_JOB_TOKEN" not in text


def as_text(job: dict[str, Any]) -> dict[str, Any]:
    """A job with its variables as the strings the runner sets."""
    return job | {"variables": {k: gitlab_text(v) for k, v in job["variables"].items()}}


def test_the_example_is_the_component_with_its_defaults() -> None:
    """The job to copy is the component's job with its defaults: nothing drifts apart."""
    [(name, example)] = yaml.safe_load(EXAMPLE_FILE.read_text(encoding="utf-8")).items()
    source = example["variables"]["REVIEWBOT_SOURCE"]
    assert name == "reviewbot"
    assert as_text(example) == as_text(component_job(source=source))


def test_the_include_gives_only_declared_inputs() -> None:
    [include] = yaml.safe_load(INCLUDE_FILE.read_text(encoding="utf-8"))["include"]
    assert include["component"].endswith("/reviewbot@REF")  # templates/reviewbot.yml
    assert set(include["inputs"]) <= set(INPUTS)
    assert {name for name, spec in INPUTS.items() if "default" not in spec} \
        <= set(include["inputs"])


@pytest.mark.parametrize("shell", ["sh", "bash"])
def test_the_script_installs_with_the_gitlab_extra_and_runs_the_gitlab_mode(
        tmp_path: Path, shell: str) -> None:
    result, calls, env = run_script(component_job(source=SOURCE), tmp_path, shell)
    assert result.returncode == 0, result.stderr
    [pip] = [call for call in calls if call[0] == "python"]
    assert pip[1:4] == ["-m", "pip", "install"]
    assert pip[-1] == f"reviewbot[gitlab,model] @ {SOURCE}"
    args = reviewbot_args(calls)
    assert args[:2] == ["--mode", "gitlab"]
    flags = {arg for arg in args if arg.startswith("--")}
    assert flags <= GITLAB_MODE_FLAGS
    codequality = args[args.index("--codequality") + 1]
    assert codequality == component_job(source=SOURCE)["artifacts"]["reports"]["codequality"]
    assert "REVIEWBOT_MODEL" not in env and "OPENAI_BASE_URL" not in env  # rules alone


def test_every_input_reaches_its_flag(tmp_path: Path) -> None:
    job = component_job(source=SOURCE, **{
        "fail-level": "warning", "max-comments": 7, "inline-level": "info",
        "config": "ci/review.toml", "full-review": True, "model": "gpt-4o-mini",
        "base-url": "http://127.0.0.1:8080/v1"})
    result, calls, env = run_script(job, tmp_path)
    assert result.returncode == 0, result.stderr
    assert reviewbot_args(calls) == [
        "--mode", "gitlab", "--codequality", "gl-code-quality-report.json",
        "--fail-level", "warning", "--max-comments", "7", "--inline-level", "info",
        "--config", "ci/review.toml", "--full"]
    assert env["REVIEWBOT_MODEL"] == "gpt-4o-mini"
    assert env["OPENAI_BASE_URL"] == "http://127.0.0.1:8080/v1"


def test_the_command_line_parses(tmp_path: Path) -> None:
    """The command line the job runs is one reviewbot's own parser takes."""
    parser = build_parser()
    [commands] = [action for action in parser._actions
                  if isinstance(action, argparse._SubParsersAction)]
    [mode] = [action for action in commands.choices["review"]._actions
              if action.dest == "mode"]
    if "gitlab" not in (mode.choices or ()):
        pytest.skip("this reviewbot has no --mode gitlab yet; its flags are checked against "
                    "the mode's contract (GITLAB_MODE_FLAGS) in the other tests")
    job = component_job(source=SOURCE, config="ci/review.toml", **{"full-review": True})
    result, calls, _ = run_script(job, tmp_path)
    assert result.returncode == 0, result.stderr
    args = parser.parse_args(["review", *reviewbot_args(calls)])
    assert args.mode == "gitlab"


@pytest.mark.parametrize(("code", "says"), [
    (0, None), (1, "findings at or above error (exit 1)"),
    (2, "a usage or configuration error, not findings (exit 2)"),
    (3, "the review did not finish, not findings (exit 3)")])
def test_the_exit_code_fails_the_job_and_says_what_it_means(tmp_path: Path, code: int,
                                                            says: str | None) -> None:
    """A configuration error or an unfinished review fails the job (a merge request cannot
    pass by breaking its review) but never reads as findings."""
    result, _, _ = run_script(component_job(source=SOURCE), tmp_path, exit_code=code)
    assert result.returncode == code
    assert (says in result.stdout) if says else result.stdout == ""
    job = component_job(source=SOURCE)
    assert job["retry"] == {"max": 1, "exit_codes": [3]}


@pytest.mark.parametrize("name", ["source", "fail-level", "inline-level", "config", "model",
                                  "base-url"])
def test_an_input_cannot_become_shell_code(tmp_path: Path, name: str) -> None:
    """An input's value is one argument or one variable, never shell code."""
    marker = tmp_path / "pwned"
    value = f'x"; touch {marker}; $(touch {marker}) `touch {marker}`'
    result, calls, env = run_script(component_job(**{"source": SOURCE, name: value}), tmp_path)
    assert not marker.exists()
    assert result.returncode == 0, result.stderr
    args = reviewbot_args(calls)
    flag = {"fail-level": "--fail-level", "inline-level": "--inline-level",
            "config": "--config"}.get(name)
    if flag:
        assert args[args.index(flag) + 1] == value
    elif name == "source":
        assert calls[0][-1] == f"reviewbot[gitlab,model] @ {value}"
    else:
        assert value in env.values()


def gitlab_schema() -> dict[str, Any]:
    """GitLab's own JSON schema for .gitlab-ci.yml (its `ci.json`), as check-jsonschema
    vendors it; read as a file, without importing the tool."""
    spec = importlib.util.find_spec("check_jsonschema")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("check-jsonschema is not installed: pip install -e '.[test]'")
    path = Path(spec.submodule_search_locations[0]) / "builtin_schemas" / "vendor" / \
        "gitlab-ci.json"
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@pytest.mark.parametrize("document", ["header", "job", "job with defaults", "example",
                                      "include"])
def test_gitlab_schema_accepts_the_files(document: str) -> None:
    """Each file is valid .gitlab-ci.yml by GitLab's schema."""
    validator = jsonschema.Draft7Validator(gitlab_schema())
    instance = {
        "header": HEADER, "job": JOB_DOCUMENT,
        "job with defaults": {"reviewbot": component_job(source=SOURCE)},
        "example": yaml.safe_load(EXAMPLE_FILE.read_text(encoding="utf-8")),
        "include": yaml.safe_load(INCLUDE_FILE.read_text(encoding="utf-8")),
    }[document]
    errors = [f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
              for error in validator.iter_errors(instance)]
    assert errors == []


def yaml_blocks(text: str) -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", text, flags=re.DOTALL)


def test_the_docs_show_exactly_these_files() -> None:
    """docs/GITLAB.md's set-up blocks and README's GitLab block are the files the tests run."""
    docs = (ROOT / "docs" / "GITLAB.md").read_text(encoding="utf-8")
    setup = docs.split("## Set up", 1)[1].split("\n## ", 1)[0]
    assert yaml_blocks(setup) == [INCLUDE_FILE.read_text(encoding="utf-8"),
                                  EXAMPLE_FILE.read_text(encoding="utf-8")]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## GitLab", 1)[1].split("\n## ", 1)[0]
    assert yaml_blocks(section) == [INCLUDE_FILE.read_text(encoding="utf-8")]


CODEQUALITY_FILE = ROOT / "docs" / "examples" / "gitlab-codequality.yml"


def test_the_codequality_job_is_shown_and_stands_beside_the_review_job() -> None:
    """docs/GITLAB.md's "Code Quality report" block is this file: a job of its own name (one
    named `reviewbot` merges into the review job), valid by GitLab's schema, that installs
    reviewbot and runs in merge request pipelines and on the default branch alike."""
    docs = (ROOT / "docs" / "GITLAB.md").read_text(encoding="utf-8")
    section = docs.split("## Code Quality report", 1)[1].split("\n## ", 1)[0]
    text = CODEQUALITY_FILE.read_text(encoding="utf-8")
    assert yaml_blocks(section) == [text]
    document = yaml.safe_load(text)
    [(name, job)] = document.items()
    assert name != "reviewbot" and name not in JOB_DOCUMENT
    assert "pip install" in job["script"][0] and "reviewbot" in job["script"][0]
    assert [rule["if"] for rule in job["rules"]] == [
        '$CI_PIPELINE_SOURCE == "merge_request_event"',
        "$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH"]
    errors = list(jsonschema.Draft7Validator(gitlab_schema()).iter_errors(document))
    assert errors == []


def codequality_job(repo: Any, tmp_path: Path, **env: str) -> list[dict[str, Any]]:
    """The job's script as a runner runs it, in the repository's work tree, with the real
    reviewbot (pip's install is a stand-in); the report it writes."""
    [(_, job)] = yaml.safe_load(CODEQUALITY_FILE.read_text(encoding="utf-8")).items()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "python").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "python").chmod(0o755)
    path = f"{bin_dir}:{Path(sys.executable).parent}:{os.environ['PATH']}"
    variables = {name: gitlab_text(value) for name, value in job["variables"].items()}
    result = subprocess.run(["sh", "-e", "-c", "\n".join(job["script"])], cwd=repo.root,
                            env={**os.environ, "PATH": path, **variables, **env},
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    report = repo.root / "gl-code-quality-report.json"
    found = json.loads(report.read_text())
    report.unlink()
    return found  # type: ignore[no-any-return]


def test_the_widget_lists_what_the_merge_request_changed_and_nothing_else(
        repo: Any, tmp_path: Path) -> None:
    """GitLab's comparison (new: the merge request's fingerprints the target branch's report
    lacks; resolved: the other way) of the job's two reports: the finding the merge request
    adds is new, the one it fixes resolved, the one it never touched neither; a config the
    merge request adds to ignore everything does not count (read at its base)."""
    shell = "import os\n\n\ndef run(name):\n    os.system('ls ' + name)\n"
    weak = "import hashlib\n\n\ndef digest(data):\n    return hashlib.md5(data).hexdigest()\n"
    repo.write("app/run.py", shell)
    repo.write("app/old.py", shell.replace("run(", "old("))
    base = repo.commit("base")
    target = codequality_job(repo, tmp_path, CI_COMMIT_BRANCH="main", CI_DEFAULT_BRANCH="main",
                             CI_PIPELINE_SOURCE="push")
    repo.git("checkout", "-q", "-b", "topic")
    repo.write("app/old.py", "def old(name):\n    return name\n")
    repo.write("app/digest.py", weak)
    repo.write(".reviewbot.toml", 'ignore = ["*"]\n')
    repo.commit("the merge request")
    head = codequality_job(repo, tmp_path, CI_PIPELINE_SOURCE="merge_request_event",
                           CI_MERGE_REQUEST_DIFF_BASE_SHA=base, CI_DEFAULT_BRANCH="main")
    before = {issue["fingerprint"]: issue["location"]["path"] for issue in target}
    after = {issue["fingerprint"]: issue["location"]["path"] for issue in head}
    assert sorted(after[f] for f in set(after) - set(before)) == ["app/digest.py"]
    assert sorted(before[f] for f in set(before) - set(after)) == ["app/old.py"]
    assert "app/run.py" in before.values() and "app/run.py" in after.values()
