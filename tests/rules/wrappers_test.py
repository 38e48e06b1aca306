"""A module's own wrappers of a shell, a SQL runner or a file opener are sinks too: a finding
at the call names the wrapper, the parameter and the sink's line."""

from __future__ import annotations

from reviewbot.schema import Finding
from tests.rules.conftest import findings

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
