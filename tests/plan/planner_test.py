"""Step 4: the model planner, its batches, and the heuristic planner in its place."""

from __future__ import annotations

from typing import Any

from reviewbot.plan.indexes import build_planner_index, build_review_index
from reviewbot.plan.planner import SMALL_CHANGE_LINES, batches, heuristic_item, plan
from reviewbot.schema.plans import ReviewIndex
from reviewbot.schema.units import ChangeRequest, DiffResult
from tests.fake_openai import FakeOpenAI
from tests.model.helpers import session_for as caller_for
from tests.rules.conftest import review

FILES = {
    "src/pay.py": ("def pay(amount, currency):\n    return charge(amount, currency)\n",
                   "def pay(amount):\n    return charge(amount)\n"),
    "src/fmt.py": ("def f():\n    return  1\n", "def f():\n    return 1\n"),
    # Long enough that the change is one the model plans (over SMALL_CHANGE_LINES).
    "docs/a.md": ("# A\n\n" + "new words\n" * SMALL_CHANGE_LINES, "# A\n\nwords\n"),
}


def make_index(files: dict[str, tuple[str, str]] = FILES) -> ReviewIndex:
    units = tuple(u for path, (new, old) in files.items() for u in review(path, new, old).units)
    diff = DiffResult(request=ChangeRequest(mode="staged"), repo_root="/r", base_rev="0" * 40,
                      units=units)
    return build_review_index(diff, "2026-01-01T00:00:00+00:00")


def item(unit_id: str, **kwargs: Any) -> dict[str, Any]:
    return {"unit_id": unit_id, "llm_context_level": "file_context", "extra_requests": [],
            "skip_review": False, "reason": "model says so", **kwargs}


def test_offline_is_the_heuristic_with_reason_offline() -> None:
    index = make_index()
    result = plan(index, build_planner_index(index), None)
    assert {i.reason for i in result.plan} == {"offline"}
    assert set(result.sources.values()) == {"heuristic"}
    by_path = {u.file_path: u.unit_id for u in index.units}
    skipped = {i.unit_id for i in result.plan if i.skip_review}
    # Whitespace only, prose only: nothing a review reports (the rules read prose for secrets).
    assert skipped == {by_path["src/fmt.py"], by_path["docs/a.md"]}
    pay = next(i for i in result.plan if i.unit_id == by_path["src/pay.py"])
    assert [(r.type, r.details) for r in pay.extra_requests] == [
        ("previous_version", None), ("search_callers", "pay")]


def test_model_plan_with_unknown_and_missing_units(fake_openai: FakeOpenAI) -> None:
    index = make_index()
    first, second, third = (u.unit_id for u in index.units)
    fake_openai.reply_json({"plan": [
        item(first, extra_requests=[{"type": "search_callers", "details": "pay"}]),
        item(second, skip_review=True), item("no-such-unit")]})
    caller = caller_for(fake_openai.base_url)

    result = plan(index, build_planner_index(index), caller)

    assert result.sources == {first: "model", second: "model", third: "heuristic"}
    missing = next(i for i in result.plan if i.unit_id == third)
    assert missing.reason == "missing_from_model_plan"
    assert "no-such-unit" in {i.unit_id for i in result.plan}  # fusion reports and ignores it
    [request] = fake_openai.received
    prompt = request.messages[1]["content"]
    assert prompt.startswith("<planner_index>") and "charge(" not in prompt
    # The schema sent names the batch's units and bounds the list by them (a grammar on
    # llama.cpp); the answer was still validated by the full schema, so "no-such-unit" came.
    shown = request.body["response_format"]["json_schema"]["schema"]
    assert shown["properties"]["plan"]["maxItems"] == 3
    assert shown["$defs"]["PlanItem"]["properties"]["unit_id"]["enum"] == [
        first, second, third]


def test_batches_respect_the_budget_and_the_cap_hands_over(fake_openai: FakeOpenAI) -> None:
    index = make_index()
    planner_index = build_planner_index(index)
    assert [len(b) for b in batches(planner_index, budget=1)] == [1, 1, 1]
    assert [len(b) for b in batches(planner_index)] == [3]

    first = index.units[0].unit_id
    fake_openai.reply_json({"plan": [item(first)]})
    caller = caller_for(fake_openai.base_url, max_calls=1, concurrency=1)
    result = plan(index, planner_index, caller, batch_tokens=1)
    reasons = [i.reason for i in result.plan]
    assert reasons == ["model says so", "call_cap", "call_cap"]
    assert len(result.notices) == 1 and "call_cap" in result.notices[0]


def test_a_small_change_is_planned_without_the_model(fake_openai: FakeOpenAI) -> None:
    """One review call reads a small change whole: a plan would budget nothing, so none is
    asked for."""
    small = {**FILES, "docs/a.md": ("# A\n\nnew words\n", "# A\n\nwords\n")}
    index = make_index(small)
    result = plan(index, build_planner_index(index), caller_for(fake_openai.base_url))
    assert fake_openai.received == []
    assert {i.reason for i in result.plan} == {"small_change"}
    assert set(result.sources.values()) == {"heuristic"} and result.notices == ()


def test_heuristic_item_keeps_the_rule_plan() -> None:
    unit = make_index().units[0]
    heuristic = heuristic_item(unit, "model_timeout")
    assert heuristic.llm_context_level == unit.rule_context_level
    assert heuristic.reason == "model_timeout" and not heuristic.skip_review


def test_prose_a_name_makes_of_a_file_that_runs_is_still_read() -> None:
    """A requirements `.txt` or an HTML page under docs/ is tagged documentation by its name;
    the change chooses names, so only Markdown-like prose and docstring edits skip the
    model's review."""
    index = make_index({
        "docs/a.md": ("# A\n\nnew words\n", "# A\n\nwords\n"),
        "requirements.txt": ("flask==3.0.0\n--extra-index-url https://pkgs.example/simple\n",
                             "flask==3.0.0\n"),
        "docs/page.html": ("<p>new</p>\n<script>run(location.hash)</script>\n", "<p>old</p>\n"),
    })
    result = plan(index, build_planner_index(index), None)
    by_path = {u.file_path: u.unit_id for u in index.units}
    skipped = {i.unit_id for i in result.plan if i.skip_review}
    assert by_path["docs/a.md"] in skipped
    assert by_path["requirements.txt"] not in skipped
    assert by_path["docs/page.html"] not in skipped


def test_a_dependency_bump_is_not_sent_for_review() -> None:
    """Versions bumped and nothing else: what the release changed is not in the diff. A new
    dependency beside it is read."""
    index = make_index({
        "requirements.txt": ("flask==3.0.3\n", "flask==3.0.0\n"),
        "go.mod": ("module x\n\nrequire a.example/b v1.2.0\nrequire a.example/c v0.1.0\n",
                   "module x\n\nrequire a.example/b v1.1.0\n"),
    })
    result = plan(index, build_planner_index(index), None)
    by_path = {u.file_path: u.unit_id for u in index.units}
    skipped = {i.unit_id for i in result.plan if i.skip_review}
    assert by_path["requirements.txt"] in skipped and by_path["go.mod"] not in skipped
