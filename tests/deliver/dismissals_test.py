"""Which dismissals count together, and what is proposed for them."""

from __future__ import annotations

from reviewbot.deliver.dismissals import Dismissal, place_of, proposal


def test_the_kind_of_place_is_the_top_folder_or_the_extension() -> None:
    assert place_of("tests/unit/test_a.py") == "tests/*"
    assert place_of("setup.py") == "*.py"
    assert place_of("Makefile") == "Makefile"


def test_a_model_finding_gets_guidance_not_a_rule_setting() -> None:
    found = [Dismissal("model.performance", "app/a.py", n) for n in (1, 2)]
    text = proposal(found, "model.performance", "app/b.py", 2)
    assert text is not None and "[[path_instructions]]" in text
    assert "'performance'" in text and 'path = "app/*"' in text


def test_nothing_for_a_place_that_would_need_quoting() -> None:
    found = [Dismissal("python.eval-exec", "we`ird/a.py", n) for n in (1, 2, 3)]
    assert proposal(found, "python.eval-exec", "we`ird/b.py", 3) is None
    assert proposal(found, "python.eval-exec", "we`ird/b.py", 0) is None
