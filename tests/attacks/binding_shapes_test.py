"""The pull-request author who knows the Python rules binds a dangerous value, or the sink
itself, in a shape the flow did not follow: a walrus, a comprehension's target, a method's
`self.` field, a function defined inside another or a lambda bound to a name, a module's
namespace read by key (`sys.modules["os"]`), `pty.spawn` with an argument list, asyncpg's
`fetch`. Each twin is reported by the plain case's rule at its severity; the near misses
(constants, quoted values, a checked path) stay quiet."""

from __future__ import annotations

import pytest

from tests.rules.conftest import Base, hits

VIEW = ("import os\nimport sys\nimport pty\nimport subprocess\nimport sqlite3\n"
        "from flask import request, abort\n\n\ndef view():\n    host = request.args['h']\n")


def _found(body: str, rule: str, head: str = VIEW) -> set[tuple[str, str]]:
    return {hit for hit in hits("app/views.py", head + body, base=Base(everything=True))
            if hit[0] == rule}


SHELL = "python.shell-injection"
SHELL_PLAIN = "    os.system(f'ping {host}')\n"
SHELL_TWINS = {
    "a walrus in an if": "    if (cmd := f'ping {host}'):\n        os.system(cmd)\n",
    "a walrus alone": "    (cmd := f'ping {host}')\n    os.system(cmd)\n",
    "a comprehension's target": "    [os.system(c) for c in [f'ping {host}']]\n",
    "a generator's target": "    any(os.system(c) for c in (f'ping {h}' for h in [host]))\n",
    "a set comprehension over request data":
        "    {os.system(c) for c in request.args.getlist('c')}\n",
    "a function defined inside": "    def run(c):\n        os.system(c)\n    run(f'ping {host}')\n",
    "a decorated function inside": "    def deco(f):\n        return f\n\n    @deco\n"
                                   "    def run(c):\n        os.system(c)\n"
                                   "    run(f'ping {host}')\n",
    "a lambda bound to a name": "    run = lambda c: os.system(c)\n    run(f'ping {host}')\n",
    "sys.modules": "    sys.modules['os'].system(f'ping {host}')\n",
    "vars() of the module": "    vars(os)['system'](f'ping {host}')\n",
    "the module's __dict__": "    os.__dict__['system'](f'ping {host}')\n",
    "pty.spawn of sh -c": "    pty.spawn(['sh', '-c', f'ping {host}'])\n",
}


@pytest.mark.parametrize("twin", SHELL_TWINS.values(), ids=SHELL_TWINS.keys())
def test_a_command_bound_in_another_shape_is_the_same_error(twin: str) -> None:
    plain = _found(SHELL_PLAIN, SHELL)
    assert plain == {(SHELL, "error")}
    assert (SHELL, "error") in _found(twin, SHELL)


def test_a_field_of_the_handler_is_followed_within_its_method() -> None:
    head = "import os\nfrom flask import request\n\n\nclass Ping:\n    def get(self):\n"
    plain = _found("        os.system('ping ' + request.args['h'])\n", SHELL, head)
    twin = _found("        self.cmd = 'ping ' + request.args['h']\n        os.system(self.cmd)\n",
                  SHELL, head)
    assert plain == twin == {(SHELL, "error")}


def test_a_lambda_at_module_level_is_a_wrapper() -> None:
    body = "    run(f'ping {host}')\n\n\nrun = lambda c: os.system(c)\n"
    plain = "    run(f'ping {host}')\n\n\ndef run(c):\n    os.system(c)\n"
    assert _found(body, SHELL) == _found(plain, SHELL)
    assert (SHELL, "error") in _found(body, SHELL)


@pytest.mark.parametrize("near", [
    "    [os.system(c) for c in ['ls', 'pwd'] if host]\n",
    "    import shlex\n    if (cmd := 'ping ' + shlex.quote(host)):\n        os.system(cmd)\n",
    "    run = lambda: os.system('ls')\n    run()\n",
    "    sys.modules['os'].system('ls')\n",
    "    pty.spawn(['ls', '-la', host])\n",
])
def test_a_shaped_binding_of_safe_text_stays_quiet(near: str) -> None:
    assert (SHELL, "error") not in _found(near, SHELL)


SQL = "python.sql-injection"
SQL_PLAIN = "    sqlite3.connect('x').execute(f'SELECT * FROM t WHERE a = {host}')\n"
SQL_TWINS = {
    "a walrus": "    if (q := f'SELECT * FROM t WHERE a = {host}'):\n"
                "        sqlite3.connect('x').execute(q)\n",
    "a lambda runner": "    run = lambda q: sqlite3.connect('x').execute(q)\n"
                       "    run(f'SELECT * FROM t WHERE a = {host}')\n",
    "asyncpg's fetch": "    async def g(conn):\n"
                       "        await conn.fetch(f'SELECT * FROM t WHERE a = {host}')\n",
    "asyncpg's fetchrow": "    async def g(conn):\n"
                          "        await conn.fetchrow('SELECT * FROM t WHERE a = ' + host)\n",
}


@pytest.mark.parametrize("twin", SQL_TWINS.values(), ids=SQL_TWINS.keys())
def test_a_query_bound_in_another_shape_is_the_same_error(twin: str) -> None:
    plain = _found(SQL_PLAIN, SQL)
    assert plain == {(SQL, "error")}
    assert (SQL, "error") in _found(twin, SQL)


@pytest.mark.parametrize("near", [
    "    async def g(conn):\n        await conn.fetch('SELECT * FROM t WHERE a = $1', host)\n",
    "    async def g(client):\n        await client.fetch(f'https://{host}/select')\n",
])
def test_a_fetch_with_parameters_or_no_sql_stays_quiet(near: str) -> None:
    assert _found(near, SQL) == set()


PATH = "python.path-traversal"


def test_a_path_bound_by_a_walrus_is_the_plain_error() -> None:
    plain = _found("    open(os.path.join('/srv', host)).read()\n", PATH)
    twin = _found("    if (p := os.path.join('/srv', host)):\n        open(p).read()\n", PATH)
    assert plain == twin == {(PATH, "error")}


def test_a_path_a_walrus_binds_and_checks_stays_quiet() -> None:
    body = ("    base = '/srv'\n"
            "    if not (p := os.path.realpath(os.path.join(base, host))).startswith(base + '/'):\n"
            "        abort(404)\n    return open(p).read()\n")
    assert _found(body, PATH) == set()


def test_member_names_a_comprehension_opens_are_zip_slip() -> None:
    head = VIEW + "    import zipfile\n    z = zipfile.ZipFile(host)\n"
    plain = _found("    for n in z.namelist():\n        open(os.path.join('/tmp', n), 'wb')\n",
                   PATH, head)
    twin = _found("    [open(os.path.join('/tmp', n), 'wb') for n in z.namelist()]\n", PATH, head)
    assert plain == twin
    assert plain


def test_eval_through_a_walrus_is_the_plain_error() -> None:
    plain = _found("    eval(host)\n", "python.eval-exec")
    assert plain == _found("    if (c := host):\n        eval(c)\n", "python.eval-exec")
    assert plain == _found("    __builtins__['eval'](host)\n", "python.eval-exec")
