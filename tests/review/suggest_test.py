"""Fix suggestions: asked in plain text, attached only when they check out."""

from __future__ import annotations

from reviewbot.review.suggest import check_replacement, suggest, wants_suggestion
from reviewbot.schema.findings import Finding
from tests.fake_openai import FakeOpenAI
from tests.model.helpers import session_for

FILE = "def load(path):\n    handle = open(path)\n    return handle.read()\n"
FINDING = Finding(file_path="io.py", start_line=2, end_line=3, severity="warning",
                  category="bug", rule_id="model.bug", title="Leaked handle",
                  message="never closed", suggestion="use with", source="model")
LINES = FILE.split("\n")


def test_a_good_replacement_is_attached() -> None:
    result = check_replacement("    with open(path) as handle:\n        return handle.read()\n",
                               LINES, FINDING, "python")
    assert result.outcome == "attached"
    assert result.replacement == "    with open(path) as handle:\n        return handle.read()"


def test_replacements_that_do_not_check_out() -> None:
    assert check_replacement("   ", LINES, FINDING, "python").outcome == "empty"
    same = "    handle = open(path)\n    return handle.read()"
    assert check_replacement(same, LINES, FINDING, "python").outcome == "unchanged"
    broken = "    with open(path) as handle\n        return handle.read()"
    assert check_replacement(broken, LINES, FINDING, "python").outcome == "does_not_parse"
    assert check_replacement(broken, LINES, FINDING, "javascript").outcome == "attached"
    assert check_replacement("x\n" * 40, LINES, FINDING, "text").outcome == "too_long"


def test_only_local_fixes_of_model_findings_in_the_diff_are_asked_for() -> None:
    assert wants_suggestion(FINDING)
    assert not wants_suggestion(FINDING.replace(source="rule"))
    assert not wants_suggestion(FINDING.replace(in_diff=False))
    assert not wants_suggestion(FINDING.replace(suggestion=""))
    assert not wants_suggestion(FINDING.replace(end_line=40))


def test_the_call_is_plain_text_and_a_fence_is_accepted(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_text("```python\n    with open(path) as handle:\n"
                           "        return handle.read()\n```")
    result = suggest(session_for(fake_openai.base_url), FINDING, FILE, "python")
    assert result.outcome == "attached" and result.replacement is not None
    [request] = fake_openai.received
    assert "response_format" not in request.body and "tools" not in request.body
    prompt = request.messages[1]["content"]
    assert "Write the new text for lines 2-3 only." in prompt and "    2 |" in prompt
