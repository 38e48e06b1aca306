"""The text of what reviewbot posts: bodies within a forge's limits."""

from __future__ import annotations

from reviewbot.deliver.bodies import MAX_BODY, finding_body
from reviewbot.schema import Finding


def _model_finding(replacement: str) -> Finding:
    return Finding(file_path="app/run.py", start_line=5, end_line=5, severity="warning",
                   category="bug", rule_id="model.bug", title="t", message="m",
                   suggestion="use a list", source="model", replacement=replacement)


def test_a_suggestion_is_posted_whole_or_not_at_all() -> None:
    long_line = "    subprocess.run([" + ", ".join(f'"arg{n}"' for n in range(60)) + "])"
    lines = "\n".join(f"{long_line}  # {n}" for n in range(30))
    body = finding_body(_model_finding(lines), "f" * 32)
    assert f"```suggestion\n{lines}\n```" in body and "more characters" not in body
    huge = "\n".join("x = 1  # " + "y" * 3000 for _ in range(30))
    body = finding_body(_model_finding(huge), "f" * 32)
    assert "```suggestion" not in body and "too long for a comment" in body
    assert len(body) <= MAX_BODY
