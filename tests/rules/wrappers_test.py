"""A module's own wrappers of a shell, a SQL runner or a file opener are sinks too: a finding
at the call names the wrapper, the parameter and the sink's line."""

from __future__ import annotations

import ast
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from reviewbot.cli import main
from reviewbot.config import Config
from reviewbot.diff.parse import parse_units
from reviewbot.rules import run_rules
from reviewbot.rules.imported import MAX_MODULE_CHARS
from reviewbot.rules.python_ast import enclosing_function
from reviewbot.schema.findings import Finding
from tests.conftest import GitFixture
from tests.rules.conftest import Base, findings, make_diff

SSH = '''import subprocess


class Host:
    def __init__(self, name):
        self.name = name

    def _run_ssh(self, cmd):
        return subprocess.run(f"ssh {self.name} -- {cmd}", shell=True, check=True)


    def restart(self, service):
        self._run_ssh(f"systemctl restart {service}")
'''


def at(found: list[Finding], line: int) -> list[Finding]:
    return [f for f in found if f.start_line == line]


def test_a_method_that_runs_its_parameter_through_a_shell() -> None:
    old = SSH.replace('self._run_ssh(f"systemctl restart {service}")',
                      'self._run_ssh("systemctl restart app")')
    [finding] = findings("ops/host.py", SSH, old)  # only the call changed
    assert (finding.rule_id, finding.severity, finding.start_line) == (
        "python.shell-injection", "error", 13)
    assert finding.message.startswith(
        "`self._run_ssh` passes its `cmd` parameter to `subprocess.run` (line 9), which runs "
        "it through a shell, and the command is built by string formatting")


def test_through_two_wrappers_and_keyword_arguments() -> None:
    code = ('import os\n\n\ndef run(command):\n    return os.system(command)\n\n\n'
            'def remote(host, what):\n    return run(command=what)\n\n\n'
            'def clean(host, folder):\n    remote(host, what=f"rm -rf {folder}")\n')
    old = code.replace('f"rm -rf {folder}"', '"rm -rf /tmp/x"')
    [finding] = findings("ops/clean.py", code, old)
    assert finding.start_line == 13 and finding.severity == "error"
    assert "`remote` passes its `what` parameter through `run` to `os.system` (line 5)" \
        in finding.message


def test_sql_and_paths_through_wrappers() -> None:
    code = ('import os\nfrom flask import request\n\n\nclass Store:\n'
            '    def execute_query(self, sql):\n        return self.cursor.execute(sql)\n\n'
            '    def user(self, uid):\n'
            '        return self.execute_query(f"SELECT * FROM users WHERE id = {uid}")\n\n\n'
            'def read(name):\n    with open(os.path.join("/srv/files", name)) as f:\n'
            '        return f.read()\n\n\n'
            '@app.route("/file")\ndef download():\n    return read(request.args["f"])\n')
    old = code.replace('self.execute_query(f"SELECT * FROM users WHERE id = {uid}")',
                       'self.execute_query("SELECT 1")').replace(
        'read(request.args["f"])', 'read("index.html")')
    found = findings("app/store.py", code, old)
    [sql] = at(found, 10)
    assert (sql.rule_id, sql.severity) == ("python.sql-injection", "error")
    assert "`self.execute_query` passes its `sql` parameter to `self.cursor.execute`" in (
        sql.message)
    [path] = at(found, 20)
    assert (path.rule_id, path.severity) == ("python.path-traversal", "error")
    assert "`read` passes its `name` parameter to `open` (line 14), which uses it as a file " \
        "path, and the path comes from request data" in path.message


def test_near_misses_stay_quiet() -> None:
    code = ('import subprocess\n\n\nclass A:\n    def run(self, cmd):\n'
            '        subprocess.run(cmd, shell=True)\n\n\nclass B:\n    def run(self, cmd):\n'
            '        print(cmd)\n\n\nclass C(A):\n    def go(self, x):\n'
            '        self.run(f"ls {x}")\n\n\n'
            'def log(message):\n    print(message)\n    subprocess.run("uptime", shell=True)\n\n\n'
            'def report(x):\n    log(f"report {x}")\n\n\n'
            'def wrapped(x):\n    run_it(x)\n\n\n'
            'def run_it(cmd):\n    subprocess.run(cmd, shell=True)\n')
    old = (code.replace('self.run(f"ls {x}")', 'self.run("ls")')
           .replace('log(f"report {x}")', 'log("report")').replace("run_it(x)", "run_it(None)"))
    # `run` is defined twice and only one runs a shell; `log` never passes its parameter on;
    # `wrapped` passes a parameter along (its own caller builds the value).
    assert findings("app/a.py", code, old) == []


def test_a_recursive_wrapper_ends() -> None:
    code = ('import os\n\n\ndef walk(cmd, depth):\n    if depth:\n        walk(cmd, depth - 1)\n'
            '    os.system(cmd)\n\n\ndef go(x):\n    walk(f"echo {x}", 3)\n')
    old = code.replace('f"echo {x}"', '"echo"')
    [finding] = findings("app/walk.py", code, old)
    assert finding.start_line == 11 and "`walk` passes its `cmd` parameter to `os.system`" in (
        finding.message)


# --- functions imported from the project's other modules ----------------------------------

UTILS = ('import subprocess\n\n\ndef run_command(command, check=True):\n'
         '    return subprocess.run(command, shell=True, check=check)\n\n\n'
         'def quiet(command):\n    return run_command(command, check=False)\n')


class Project(Base):
    """The reviewed side's other files, and every batch of paths the rules asked for."""

    def __init__(self, files: dict[str, str]) -> None:
        super().__init__()
        self.files = files
        self.asked: list[list[str]] = []

    def readable_files(self) -> frozenset[str]:
        return frozenset(self.files)

    def rules_texts(self, paths: Sequence[str]) -> dict[str, str | None]:
        self.asked.append(list(paths))
        return {path: self.files.get(path) for path in paths}


def _imported(path: str, new: str, old: str, project: Project) -> list[Finding]:
    units = parse_units(make_diff(path, new, old))
    return list(run_rules(units, lambda p: new if p == path else None, Config(),
                          project=project).findings)


@pytest.mark.parametrize(("path", "imports", "call", "module"), [
    ("pkg/cli.py", "from pkg import utils", "utils.run_command", "pkg/utils.py"),
    ("pkg/cli.py", "from pkg.utils import run_command", "run_command", "pkg/utils.py"),
    ("pkg/cli.py", "import pkg.utils", "pkg.utils.run_command", "pkg/utils.py"),
    ("pkg/cli.py", "from . import utils", "utils.run_command", "pkg/utils.py"),
    ("pkg/sub/cli.py", "from ..utils import quiet", "quiet", "pkg/utils.py"),
    ("src/pkg/cli.py", "from pkg.utils import run_command as run", "run", "src/pkg/utils.py"),
    ("pkg/cli.py", "from pkg import utils", "utils.run_command", "pkg/utils/__init__.py"),
])
def test_a_function_imported_from_the_project_is_a_sink(path: str, imports: str, call: str,
                                                         module: str) -> None:
    new = f"{imports}\n\n\ndef restart(service):\n    {call}(f'systemctl restart {{service}}')\n"
    old = new.replace("f'systemctl restart {service}'", "'systemctl restart app'")
    project = Project({module: UTILS})
    [finding] = _imported(path, new, old, project)
    assert (finding.rule_id, finding.severity, finding.start_line) == (
        "python.shell-injection", "error", 5)
    name = call.rsplit(".", 1)[-1]
    sink = "to `subprocess.run` (line 5 of " if name != "quiet" else \
        "through `run_command` to `subprocess.run` (line 5 of "
    assert f"passes its `command` parameter {sink}{module})" in finding.message, \
        finding.message
    assert len(project.asked) == 1  # one batch for the module, whatever the rules ask


@pytest.mark.parametrize(("imports", "call"), [
    ("import shlex", "shlex.split"),  # the standard library is never read
    ("from pkg import utils", "utils.run_command"),  # handed a constant: nothing to follow
    ("", "run_command"),  # not imported
])
def test_calls_not_followed_read_nothing(imports: str, call: str) -> None:
    new = f"{imports}\n\n\ndef restart(service):\n    {call}('systemctl restart app')\n" \
        f"    shlex.split(f'x {{service}}')\n"
    old = new.replace("restart app", "stop app")
    project = Project({"pkg/utils.py": UTILS})
    assert _imported("pkg/cli.py", new, old, project) == []
    assert project.asked == []


def test_a_module_that_is_not_the_projects_is_never_read() -> None:
    new = ("import requests\n\n\ndef get(name):\n    requests.get(f'https://x/{name}')\n"
           "    requests.post(f'https://x/{name}')\n")
    old = new.replace("{name}", "a")
    project = Project({"app.py": new})
    assert _imported("pkg/cli.py", new, old, project) == []
    assert project.asked == []


def test_a_files_calls_into_many_modules_are_each_followed_in_one_batch() -> None:
    """No budget is shared by the calls: a file calling 20 project modules has every one
    followed, and the modules are read in one batch."""
    count = 20
    calls = "".join(f"    mod{n}.run_command(f'x {{name}}')\n" for n in range(count))
    imports = "".join(f"import mod{n}\n" for n in range(count))
    new = f"{imports}\n\ndef go(name):\n{calls}"
    old = new.replace("{name}", "a")
    project = Project({f"mod{n}.py": UTILS for n in range(count)})
    found = _imported("app.py", new, old, project)
    assert len(found) == count
    assert {f.rule_id for f in found} == {"python.shell-injection"}
    assert len(project.asked) == 1


def test_a_module_too_large_to_parse_has_its_function_read_alone() -> None:
    """A wrapper module padded past the size parsed whole still has the called function
    read; one that is not Python is not followed."""
    new = "from pkg import big, bad\n\n\ndef go(name):\n    big.run_command(f'x {name}')\n" \
        "    bad.run_command(f'x {name}')\n"
    old = new.replace("{name}", "a")
    project = Project({"pkg/big.py": UTILS + "#" * MAX_MODULE_CHARS + "\nX = 1\n",
                       "pkg/bad.py": UTILS + "def (:\n"})
    [finding] = _imported("pkg/cli.py", new, old, project)
    assert (finding.rule_id, finding.severity, finding.start_line) == (
        "python.shell-injection", "error", 5)
    assert "to `subprocess.run` (line 5 of pkg/big.py)" in finding.message


def test_staged_in_a_real_repository(repo: GitFixture, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    repo.write("tools/utils.py", UTILS)
    repo.write("tools/deploy.py", "from tools.utils import run_command\n\n\n"
                                  "def deploy(tag):\n    run_command('make deploy')\n")
    repo.commit("base")
    repo.write("tools/deploy.py", "from tools.utils import run_command\n\n\n"
                                  "def deploy(tag):\n    run_command(f'make deploy TAG={tag}')\n")
    repo.stage()
    main(["--repo", str(repo.root), "--mode", "staged", "--offline", "--format", "json",
          "--output-dir", str(tmp_path / "runs")])
    [finding] = json.loads(capsys.readouterr().out)["findings"]
    assert finding["rule_id"] == "python.shell-injection"
    assert "`tools.utils.run_command` passes its `command` parameter to `subprocess.run` " \
        "(line 5 of tools/utils.py)" in finding["message"]


def test_a_wrapper_that_only_makes_folders_is_not_a_file_opener() -> None:
    code = ('import os\nfrom flask import request\n\n\ndef ensure_dir(path):\n'
            '    os.makedirs(path, exist_ok=True)\n\n\n@app.route("/x")\ndef make():\n'
            '    ensure_dir(os.path.join("/srv", request.args["d"]))\n')
    old = code.replace('request.args["d"]', '"static"')
    assert [f for f in findings("app/dirs.py", code, old) if "passes its" in f.message] == []


def test_a_parameter_used_as_an_index_or_a_condition_does_not_reach_the_sink() -> None:
    # reviewbot's own prune_runs: `keep` picks which folders go, it is not one of them
    code = ('import shutil\nfrom flask import request\n\n\ndef prune(root, keep):\n'
            '    runs = sorted(root.iterdir())\n'
            '    doomed = [f for f in (runs[:-keep] if keep > 0 else runs) if f.is_dir()]\n'
            '    for folder in doomed:\n        shutil.rmtree(folder)\n\n\n'
            '@app.route("/prune")\ndef clean():\n    prune(ROOT, request.args["keep"])\n')
    old = code.replace('request.args["keep"]', "3")
    assert findings("app/prune.py", code, old) == []


def test_a_class_built_from_formatted_text_is_not_followed() -> None:
    new = "from pkg import errors\n\n\ndef fail(name):\n    raise errors.Failed(f'no {name}')\n"
    old = new.replace("{name}", "x")
    project = Project({"pkg/errors.py": UTILS})
    assert _imported("pkg/cli.py", new, old, project) == []
    assert project.asked == []


@pytest.mark.parametrize("body", [
    "        cmd = f'systemctl restart {service}'\n        utils.run_command(cmd)\n",
    "        try:\n            pass\n        except OSError:\n"
    "            cmd = 'restart ' + request.args['s']\n            utils.run_command(cmd)\n",
])
def test_a_name_holding_formatted_text_or_input_is_followed(body: str) -> None:
    new = ("from flask import request\nfrom pkg import utils\n\n\nclass Ops:\n"
           f"    def restart(self, service):\n{body}")
    old = new.replace("utils.run_command(cmd)", "utils.run_command('true')")
    project = Project({"pkg/utils.py": UTILS})
    [finding] = _imported("pkg/ops.py", new, old, project)
    assert "`pkg.utils.run_command` passes its `command` parameter" in finding.message


def test_enclosing_function() -> None:
    tree = ast.parse("x = 1\n\n\nclass A:\n    def f(self):\n        if x:\n"
                     "            def g():\n                return 1\n        return 2\n")
    assert enclosing_function(tree, 1) is None
    assert getattr(enclosing_function(tree, 8), "name", None) == "g"
    assert getattr(enclosing_function(tree, 9), "name", None) == "f"


@pytest.mark.parametrize(("annotation", "expected"), [
    ("ChangeRequest", 0), ("", 1), ("HttpRequest", 1), ("web.Request", 1), ("IRequest", 1),
    ("Optional[HttpRequest]", 1),
])
def test_a_request_parameter_annotated_as_something_else_is_no_web_request(
        annotation: str, expected: int) -> None:
    shown = f": {annotation}" if annotation else ""
    code = ('import shutil\n\n\ndef wipe(folder):\n    shutil.rmtree(folder)\n\n\n'
            f'def reset(request{shown}, folder):\n    wipe(folder + "/cache")\n')
    old = code.replace('folder + "/cache"', '"/tmp/cache"')
    assert len([f for f in findings("app/reset.py", code, old)
                if f.rule_id == "python.path-traversal"]) == expected


def test_a_module_is_searched_only_for_the_kinds_of_sink_its_text_names() -> None:
    from reviewbot.rules.python_sinks import _kinds_in

    assert _kinds_in("x = 1\nopen(x)\n") == {"path"}
    assert _kinds_in("from os import system as go\n") == {"path", "shell"}
    assert _kinds_in("run(cmd, shell = True)\ncur.executemany(q, rows)\n") == {
        "path", "shell", "sql"}
    code = ('from os import system as go\n\n\ndef run(cmd):\n    go(cmd)\n\n\n'
            'def clean(name):\n    run(f"rm {name}")\n')
    old = code.replace('f"rm {name}"', '"rm x"')
    [finding] = findings("app/clean.py", code, old)
    assert "`run` passes its `cmd` parameter to `os.system`" in finding.message
