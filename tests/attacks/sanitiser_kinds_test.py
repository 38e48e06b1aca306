"""The pull-request author wraps input in a sanitiser of another kind: `shlex.quote` on a
path, `os.path.basename` or `secure_filename` on a shell command, `html.escape` on SQL, a
path or code. A sanitiser makes a value safe for its own kind of sink only (shell: quoting;
SQL: parameters; paths: containment and a single file name; HTML: escaping; code: none), so
each twin is reported by the plain case's rule at the plain case's severity, and the right
sanitiser stays quiet."""

from __future__ import annotations

import pytest

from tests.rules.conftest import Base, hits

VIEW = ("import os\nimport html\nimport shlex\nimport subprocess\n"
        "from flask import request, send_file\nfrom markupsafe import Markup\n"
        "from werkzeug.utils import secure_filename\n\n\ndef view(cursor):\n"
        "    name = request.args['name']\n")

# (rule, the plain sink, the sink with the wrong sanitiser in two shapes, the right one)
CASES = {
    "a path quoted for a shell": (
        "python.path-traversal", "    return open(name)\n",
        ["    return open(shlex.quote(name))\n",
         "    quoted = shlex.quote(name)\n    return send_file(quoted)\n"],
        "    return open(os.path.join('/srv', secure_filename(name)))\n"),
    "a path escaped for HTML": (
        "python.path-traversal", "    return send_file(os.path.join('/srv', name))\n",
        ["    return send_file(os.path.join('/srv', html.escape(name)))\n",
         "    safe = html.escape(name)\n    return send_file(os.path.join('/srv', safe))\n"],
        "    return send_file(os.path.join('/srv', os.path.basename(name)))\n"),
    "a shell command of a file name": (
        "python.shell-injection", "    os.system(name)\n",
        ["    os.system(os.path.basename(name))\n",
         "    base = os.path.basename(name)\n    os.system(base)\n"],
        "    os.system('ls -- ' + shlex.quote(name))\n"),
    "a formatted shell command of a cleaned name": (
        "python.shell-injection", "    os.system('convert ' + name)\n",
        ["    os.system('convert ' + secure_filename(name))\n",
         "    clean = secure_filename(name)\n    os.system(f'convert {clean}')\n"],
        "    os.system('convert ' + shlex.quote(name))\n"),
    "SQL escaped for HTML": (
        "python.sql-injection", "    cursor.execute(name)\n",
        ["    cursor.execute(html.escape(name))\n",
         "    query = html.escape(name)\n    cursor.execute(query)\n"],
        "    cursor.execute('SELECT * FROM t WHERE a = %s', (name,))\n"),
    "code escaped for HTML or quoted for a shell": (
        "python.eval-exec", "    eval(name)\n",
        ["    eval(html.escape(name))\n", "    code = shlex.quote(name)\n    eval(code)\n"],
        "    eval('1')\n"),
    "HTML quoted for a shell": (
        "python.xss", "    return Markup(name)\n",
        ["    return Markup(shlex.quote(name))\n",
         "    clean = secure_filename(name)\n    return Markup(f'<b>{clean}</b>')\n"],
        "    return Markup(f'<b>{html.escape(name)}</b>')\n"),
    "an option quoted for a shell": (
        "python.option-injection", "    subprocess.run(['git', 'clone', name])\n",
        ["    subprocess.run(['git', 'clone', shlex.quote(name)])\n",
         "    url = html.escape(name)\n    subprocess.run(['git', 'clone', url])\n"],
        "    subprocess.run(['git', 'clone', '--', name])\n"),
}


def _found(body: str, rule: str) -> set[tuple[str, str]]:
    return {hit for hit in hits("app/views.py", VIEW + body, base=Base(everything=True))
            if hit[0] == rule}


@pytest.mark.parametrize(("rule", "plain", "twins", "right"), CASES.values(), ids=CASES.keys())
def test_a_sanitiser_of_another_kind_changes_nothing(rule: str, plain: str, twins: list[str],
                                                     right: str) -> None:
    expected = _found(plain, rule)
    assert len(expected) == 1
    for twin in twins:
        assert _found(twin, rule) == expected, twin
    assert _found(right, rule) == set()


def test_a_conversion_is_safe_for_every_sink() -> None:
    """A number is no path, no command, no SQL: `int(...)` stays a sanitiser everywhere."""
    body = ("    n = int(name)\n    os.system(f'sleep {n}')\n    open(f'/srv/{n}.txt')\n"
            "    cursor.execute(n)\n")
    found = hits("app/views.py", VIEW + body, base=Base(everything=True))
    assert {rule for rule, _ in found} & {"python.path-traversal", "python.sql-injection"} \
        == set()
    assert ("python.shell-injection", "error") not in found


OWN = ("import os\nfrom flask import request, send_file\n"
       "from werkzeug.utils import secure_filename as library_secure_filename\n\n\n"
       "def secure_filename(name):\n    return name\n\n\n"
       "def clean(name):\n    return library_secure_filename(name)\n\n\n"
       "@app.route('/f')\ndef files():\n    name = request.args['name']\n")


@pytest.mark.parametrize(("body", "quiet"), [
    ("    return send_file(os.path.join('/srv', name))\n", False),
    # the module's own function under a sanitiser's name, returning its argument
    ("    return send_file(os.path.join('/srv', secure_filename(name)))\n", False),
    # the module's own function returning the library's sanitiser
    ("    return send_file(os.path.join('/srv', clean(name)))\n", True),
])
def test_a_function_is_a_sanitiser_by_what_it_returns_not_by_its_name(body: str,
                                                                       quiet: bool) -> None:
    found = {hit for hit in hits("app/views.py", OWN + body, base=Base(everything=True))
             if hit[0] == "python.path-traversal"}
    assert found == (set() if quiet else {("python.path-traversal", "error")})
