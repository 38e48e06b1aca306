"""The pull-request author writes a check that guards nothing: its result logged or stored,
made after the file is read, inverted, in a branch that does not exit, on another value,
or in an `assert` that `python -O` removes. A check counts only where it controls the sink
(the sink is reached only when the check passed), so each twin is reported as if there were
no check at all; a check that does control the sink keeps it quiet, in every shape."""

from __future__ import annotations

import pytest

from tests.rules.conftest import Base, hits

VIEW = ("import os\nimport logging\nimport subprocess\nfrom pathlib import Path\n"
        "from flask import request, send_file, abort\n\nBASE = '/srv/files'\n\n\n"
        "@app.route('/f')\ndef files():\n"
        "    path = os.path.realpath(os.path.join(BASE, request.args['name']))\n")
PLAIN = "    return send_file(path)\n"

TWINS = {
    "the result logged": "    logging.info('inside=%s', path.startswith(BASE))\n" + PLAIN,
    "the result stored": "    inside = path.startswith(BASE)\n" + PLAIN,
    "the check after the read": "    data = send_file(path)\n"
                                "    if not path.startswith(BASE):\n        abort(404)\n"
                                "    return data\n",
    "the check inverted": "    if path.startswith(BASE):\n        abort(404)\n" + PLAIN,
    "the stored result inverted": "    outside = path.startswith(BASE)\n"
                                  "    if outside:\n        abort(404)\n" + PLAIN,
    "a branch that does not exit": "    if not path.startswith(BASE):\n"
                                   "        logging.warning('outside')\n" + PLAIN,
    "the sink in the failing branch": "    if not path.startswith(BASE):\n"
                                      "        return send_file(path)\n    abort(404)\n",
    "the sink in the else of a passing check": "    if path.startswith(BASE):\n"
                                               "        pass\n    else:\n"
                                               "        return send_file(path)\n",
    "an assert": "    assert path.startswith(BASE)\n" + PLAIN,
    "one side of an or": "    if not (path.startswith(BASE) or request.args.get('any')):\n"
                         "        abort(404)\n" + PLAIN,
    "another value checked": "    other = os.path.realpath(os.path.join(BASE, 'index'))\n"
                             "    if not other.startswith(BASE):\n        abort(404)\n" + PLAIN,
    "the value assigned again after the check": "    if not path.startswith(BASE):\n"
                                                "        abort(404)\n"
                                                "    path = request.args['name']\n" + PLAIN,
    "a raising check whose error is swallowed": "    try:\n        Path(path).relative_to(BASE)\n"
                                                "    except ValueError:\n        pass\n" + PLAIN,
    "a loop's continue, the sink after the loop": "    for part in request.args:\n"
                                                  "        if not path.startswith(BASE):\n"
                                                  "            continue\n" + PLAIN,
    "a check under a setting": "    if app.debug:\n        if not path.startswith(BASE):\n"
                               "            abort(404)\n" + PLAIN,
}

NEAR = {
    "an early abort": "    if not path.startswith(BASE):\n        abort(404)\n" + PLAIN,
    "an early raise, negated by comparison": "    if path.startswith(BASE) is False:\n"
                                             "        raise ValueError(path)\n" + PLAIN,
    "the sink in the passing branch": "    if path.startswith(BASE):\n"
                                      "        return send_file(path)\n    abort(404)\n",
    "the sink in the else of a failing check": "    if not path.startswith(BASE):\n"
                                               "        abort(404)\n    else:\n"
                                               "        return send_file(path)\n",
    "a stored result tested": "    inside = path.startswith(BASE)\n"
                              "    if not inside:\n        abort(404)\n" + PLAIN,
    "both sides of an and": "    if not (path.startswith(BASE) and os.path.isfile(path)):\n"
                            "        abort(404)\n" + PLAIN,
    "commonpath compared": "    if os.path.commonpath([path, BASE]) != BASE:\n"
                           "        return None\n" + PLAIN,
    "a raising check with an exiting handler": "    try:\n        Path(path).relative_to(BASE)\n"
                                               "    except ValueError:\n        abort(404)\n"
                                               + PLAIN,
    "is_relative_to on a resolved path": "    if not Path(path).resolve().is_relative_to(BASE):\n"
                                         "        abort(404)\n" + PLAIN,
    "the sink nested after the check": "    if not path.startswith(BASE):\n        abort(404)\n"
                                       "    with open(path) as f:\n        return f.read()\n",
}


def _path(body: str) -> set[tuple[str, str]]:
    return {hit for hit in hits("app/views.py", VIEW + body, base=Base(everything=True))
            if hit[0] == "python.path-traversal"}


@pytest.mark.parametrize("twin", TWINS.values(), ids=TWINS.keys())
def test_a_check_that_guards_nothing_is_no_check(twin: str) -> None:
    plain = _path(PLAIN)
    assert plain == {("python.path-traversal", "error")}
    assert _path(twin) == plain


@pytest.mark.parametrize("near", NEAR.values(), ids=NEAR.keys())
def test_a_check_that_controls_the_sink_keeps_it_quiet(near: str) -> None:
    assert _path(near) == set()


OPTION = ("import subprocess\nfrom flask import request\n\n\n@app.route('/c')\ndef checkout():\n"
          "    rev = request.args['rev']\n")
RUN = "    subprocess.run(['git', 'checkout', rev])\n"


@pytest.mark.parametrize(("body", "expected"), [
    (RUN, {("python.option-injection", "warning")}),
    ("    logging.info('dash=%s', rev.startswith('-'))\n" + RUN,
     {("python.option-injection", "warning")}),
    (RUN + "    if rev.startswith('-'):\n        raise ValueError(rev)\n",
     {("python.option-injection", "warning")}),
    ("    if not rev.startswith('-'):\n        raise ValueError(rev)\n" + RUN,
     {("python.option-injection", "warning")}),
    ("    if rev.startswith('-'):\n        raise ValueError(rev)\n" + RUN, set()),
    ("    if rev[0] == '-':\n        abort(400)\n" + RUN, set()),
])
def test_a_leading_dash_check_counts_only_where_it_controls_the_command(
        body: str, expected: set[tuple[str, str]]) -> None:
    found = {hit for hit in hits("app/git.py", OPTION + body, base=Base(everything=True))
             if hit[0] == "python.option-injection"}
    assert found == expected


HELPERS = ("import os\nfrom flask import request, send_file, abort\n\nBASE = '/srv/files'\n\n\n"
           "def is_inside(name):\n    if not name:\n        return False\n"
           "    full = os.path.realpath(os.path.join(BASE, name))\n"
           "    return full.startswith(BASE)\n\n\n"
           "def looks_inside(name):\n    return True\n\n\n"
           "def logs_inside(name):\n    logging.info(os.path.realpath(name).startswith(BASE))\n"
           "    return True\n\n\n"
           "def ensure_inside(name):\n    if not os.path.realpath(name).startswith(BASE):\n"
           "        raise ValueError(name)\n\n\n"
           "def warn_outside(name):\n    if not os.path.realpath(name).startswith(BASE):\n"
           "        logging.warning(name)\n\n\n"
           "@app.route('/f')\ndef files():\n    name = request.args['name']\n")
SEND = "    return send_file(os.path.join(BASE, name))\n"


@pytest.mark.parametrize(("body", "quiet"), [
    (SEND, False),
    ("    if not is_inside(name):\n        abort(404)\n" + SEND, True),
    ("    ensure_inside(name)\n" + SEND, True),
    ("    if is_inside(name):\n        abort(404)\n" + SEND, False),  # inverted
    ("    if not looks_inside(name):\n        abort(404)\n" + SEND, False),  # checks nothing
    ("    if not logs_inside(name):\n        abort(404)\n" + SEND, False),  # logs its check
    ("    warn_outside(name)\n" + SEND, False),  # its failing branch does not exit
    (SEND + "    ensure_inside(name)\n", False),  # after the sink
])
def test_a_check_in_a_helper_function_counts_only_where_it_controls_the_sink(
        body: str, quiet: bool) -> None:
    found = {hit for hit in hits("app/views.py", HELPERS + body, base=Base(everything=True))
             if hit[0] == "python.path-traversal"}
    assert found == (set() if quiet else {("python.path-traversal", "error")})


ENDS = ("import os\nfrom flask import request, send_file\n\nBASE = '/srv/files'\n\n\n"
        "def abort(code):\n    pass\n\n\n"
        "def deny(code):\n    raise PermissionError(code)\n\n\n"
        "@app.route('/f')\ndef files():\n"
        "    path = os.path.realpath(os.path.join(BASE, request.args['name']))\n"
        "    if not path.startswith(BASE):\n")


@pytest.mark.parametrize(("ending", "quiet"), [
    ("        abort(404)\n", False),  # the module's own `abort` returns
    ("        deny(404)\n", True),  # the module's own function that always raises
])
def test_a_call_ends_a_branch_only_if_it_never_returns(ending: str, quiet: bool) -> None:
    found = {hit for hit in hits("app/views.py", ENDS + ending + PLAIN,
                                 base=Base(everything=True))
             if hit[0] == "python.path-traversal"}
    assert found == (set() if quiet else {("python.path-traversal", "error")})
