"""The pull-request author who knows the secrets, workflow and guard rules spells the same
danger another way: a key in escapes or built from constants the language puts together, a
pull request's code checked out by its number's refs, `gh pr checkout` or under another
privileged trigger, a guard kept in place with a false constant joined to its check. Each
twin is reported at the plain case's severity; the near misses stay quiet."""

from __future__ import annotations

import pytest

from tests.rules.conftest import Base, hits

SECRET = {("secrets.hardcoded", "error")}
AWS = "AKIA" + "Z7QWERTYUIOPASDF"


def _secrets(path: str, text: str) -> set[tuple[str, str]]:
    return {hit for hit in hits(path, text) if hit[0] == "secrets.hardcoded"}


SECRET_TWINS = {
    "hex escapes": "K = '" + "".join(f"\\x{ord(c):02x}" for c in AWS) + "'\n",
    "unicode escapes": "K = '" + "".join(f"\\u{ord(c):04x}" for c in AWS[:6]) + AWS[6:] + "'\n",
    "octal escapes": "K = '" + "".join(f"\\{ord(c):03o}" for c in AWS[:4]) + AWS[4:] + "'\n",
    "a joined list": f"K = ''.join(['{AWS[:4]}', '{AWS[4:10]}', '{AWS[10:]}'])\n",
    "a joined tuple": f'K = "".join(("{AWS[:4]}", "{AWS[4:]}"))\n',
    "%": f"K = '{AWS[:4]}%s' % '{AWS[4:]}'\n",
    "% of a tuple": f"K = '%s{AWS[4:]}' % ('{AWS[:4]}',)\n",
    ".format": f"K = '{AWS[:4]}{{}}'.format('{AWS[4:]}')\n",
    "JavaScript escapes": "const k = '" + "".join(f"\\x{ord(c):02x}" for c in AWS) + "';\n",
}


@pytest.mark.parametrize("twin", SECRET_TWINS.values(), ids=SECRET_TWINS.keys())
def test_a_key_spelled_another_way_is_the_key(twin: str) -> None:
    assert _secrets("app/c.py", f"K = '{AWS}'\n") == SECRET
    path = "src/k.js" if twin.startswith("const") else "app/c.py"
    assert _secrets(path, twin) == SECRET


@pytest.mark.parametrize("near", [
    "MSG = 'caf\\u00e9 ol\\xe9'\n",
    "SEP = ''.join(['a', 'b', 'c'])\n",
    "LINE = '%s items' % 'many'\n",
    "TITLE = 'Hello {}'.format('world')\n",
    "NUL = '\\x00\\x01\\x02'\n",
])
def test_escapes_and_constant_text_stay_quiet(near: str) -> None:
    assert _secrets("app/c.py", near) == set()


@pytest.mark.parametrize("path", ["app/c.py", "src/k.js"])
def test_an_escape_that_spells_a_lone_surrogate_stops_no_review(path: str) -> None:
    """`"\\ud800"` decodes to a character no UTF-8 holds (pip's own code has one): the hook
    crashed on it (exit 3) before reading the rest. The key beside it is still found."""
    lone = "X = '\\ud800\\x41'\nY = '\\udc80'\n"
    assert _secrets(path, lone) == set()
    assert _secrets(path, lone + f"K = '{AWS}'\n") == SECRET


WORKFLOW = ".github/workflows/x.yml"
CHECKOUT = "gha.pull-request-target-checkout"
PLAIN_CHECKOUT = ("on: pull_request_target\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                  "      - uses: actions/checkout@v4\n        with:\n"
                  "          ref: ${{ github.event.pull_request.head.sha }}\n      - run: make\n")
CHECKOUT_TWINS = {
    "refs/pull/N/merge with N an expression":
        PLAIN_CHECKOUT.replace("${{ github.event.pull_request.head.sha }}",
                               "refs/pull/${{ github.event.number }}/merge"),
    "the fork as the repository":
        PLAIN_CHECKOUT.replace("ref: ${{ github.event.pull_request.head.sha }}",
                               "repository: ${{ github.event.pull_request.head.repo.full_name }}"),
    "git fetch pull/N/head":
        "on: pull_request_target\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n      - run: |\n"
        "          git fetch origin pull/${{ github.event.pull_request.number }}/head:pr\n"
        "          git checkout pr && make\n",
    "gh pr checkout under issue_comment":
        "on: issue_comment\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n"
        "      - run: gh pr checkout ${{ github.event.issue.number }} && make\n",
    "workflow_run's head":
        "on:\n  workflow_run:\n    workflows: [ci]\njobs:\n  a:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - uses: actions/checkout@v4\n        with:\n"
        "          ref: ${{ github.event.workflow_run.head_sha }}\n      - run: make\n",
}


def _checkout(text: str) -> set[tuple[str, str]]:
    return {hit for hit in hits(WORKFLOW, text) if hit[0] == CHECKOUT}


@pytest.mark.parametrize("twin", CHECKOUT_TWINS.values(), ids=CHECKOUT_TWINS.keys())
def test_a_pull_requests_code_checked_out_another_way_is_the_same_error(twin: str) -> None:
    assert _checkout(PLAIN_CHECKOUT) == {(CHECKOUT, "error")}
    assert _checkout(twin) == {(CHECKOUT, "error")}


@pytest.mark.parametrize("near", [
    "on:\n  workflow_run:\n    workflows: [ci]\njobs:\n  a:\n"
    "    if: github.event.workflow_run.head_branch == 'main'\n    runs-on: ubuntu-latest\n"
    "    steps:\n      - uses: actions/checkout@v4\n      - run: make\n",
    "on: pull_request_target\njobs:\n  a:\n"
    "    if: github.event.pull_request.head.repo.full_name == github.repository\n"
    "    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n",
    "on: issue_comment\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
    "      - uses: actions/checkout@v4\n      - run: make\n",
])
def test_a_privileged_workflow_on_its_own_code_stays_quiet(near: str) -> None:
    assert _checkout(near) == set()


GUARDED = ("import os\nfrom flask import request, abort\n\n\ndef view():\n"
           "    path = os.path.join('/srv', request.args['n'])\n")
GUARD = "    if not os.path.realpath(path).startswith('/srv/'):\n        abort(404)\n"
USE = "    return open(path).read()\n"


def _removed(new_guard: str) -> set[tuple[str, str]]:
    return {hit for hit in hits("app/views.py", GUARDED + new_guard + USE, GUARDED + GUARD + USE,
                                base=Base(everything=True)) if hit[0] == "guard-removed"}


@pytest.mark.parametrize("twin", [
    "    if False and not os.path.realpath(path).startswith('/srv/'):\n        abort(404)\n",
    "    if not os.path.realpath(path).startswith('/srv/') and 0:\n        abort(404)\n",
    "    if (not os.path.realpath(path).startswith('/srv/')) and None:\n        abort(404)\n",
])
def test_a_guard_a_false_constant_decides_is_removed(twin: str) -> None:
    assert _removed("") == {("guard-removed", "warning")}
    assert _removed(twin) == {("guard-removed", "warning")}


@pytest.mark.parametrize("near", [
    "    if not os.path.realpath(path).startswith('/srv/') or False:\n        abort(404)\n",
    "    if DEBUG and not os.path.realpath(path).startswith('/srv/'):\n        abort(404)\n"
    "    if not os.path.realpath(path).startswith('/srv/'):\n        abort(404)\n",
])
def test_a_guard_still_made_stays_quiet(near: str) -> None:
    assert _removed(near) == set()
