"""The pull-request author knows that a zizmor finding the base's workflow already had is the
base's, and adds only a trigger: the `run:` line that expands `${{ github.event.issue.title }}`
is unchanged, but the injection it holds was latent (nothing filled the field) and is now
anyone's who can open an issue. The finding is the change's, with real zizmor."""

from __future__ import annotations

import pytest

from reviewbot.rules import scanners
from tests.rules.conftest import findings

STEPS = ("permissions: {}\njobs:\n  hi:\n    runs-on: ubuntu-latest\n    steps:\n"
         '      - run: echo "${{ github.event.issue.title }}"\n')
DISPATCH = "on:\n  workflow_dispatch:\n"


def _zizmor(new: str, old: str | None) -> set[tuple[str, int]]:
    assert scanners.find_executable("zizmor") is not None, \
        "zizmor comes with the test extra (pip install -e '.[test]')"
    return {(f.title, f.start_line) for f in findings(".github/workflows/greet.yml", new, old)
            if f.rule_id == "zizmor"}


@pytest.mark.parametrize("added", [
    "on:\n  workflow_dispatch:\n  issues:\n    types: [opened]\n",
    "on:\n  workflow_dispatch:\n  issue_comment:\n",
    "on: [workflow_dispatch, issues]\n",
    "on: issues\n",
])
def test_a_trigger_that_makes_a_latent_injection_reachable(added: str) -> None:
    """The plain case: the expression added to a workflow issues start. The twin: the
    expression was there, latent, and the change adds the trigger. Both report zizmor's
    template injection on the `run:` line."""
    plain = _zizmor("on:\n  issues:\n" + STEPS, "on:\n  issues:\n" + STEPS.split("      - run")[0]
                    + "      - run: echo hi\n")
    assert {title for title, _ in plain} == {"zizmor template-injection"}
    twin = _zizmor(added + STEPS, DISPATCH + STEPS)
    # (`issue_comment` brings zizmor's dangerous-triggers too, on its own added line.)
    assert ("zizmor template-injection", STEPS.count("\n") + added.count("\n")) in twin


@pytest.mark.parametrize(("old", "new"), [
    # The base already let issues start it: the injection is the base's.
    ("on:\n  issues:\n" + STEPS, "on:\n  issues:\n  workflow_dispatch:\n" + STEPS),
    # A trigger that fills nothing the expression reads.
    (DISPATCH + STEPS, "on:\n  workflow_dispatch:\n  schedule:\n    - cron: '0 0 * * *'\n"
     + STEPS),
])
def test_near_a_trigger_that_changes_nothing_the_expression_reads(old: str, new: str) -> None:
    assert not any(title == "zizmor template-injection" for title, _ in _zizmor(new, old))
