"""The model phase's speed and cost: a pool of conversations, the result cache, token
accounting and budgets. The fake server answers from the request itself (a responder), so
replies do not depend on the order requests arrive in. The modules are under `auth/`, so
the rules see risk in each and, with the user's `small_change_agent`, each gets the agent's
conversation (review/route.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from reviewbot.cli import main
from reviewbot.model.ledger import Ledger
from reviewbot.store.cache import ResultCache, cache_key
from tests.conftest import AGENT_ON_SMALL_CHANGES, GitFixture, write_user_config
from tests.fake_openai import FakeOpenAI, Received, Scripted, completion

FILES = 8

pytestmark = pytest.mark.usefixtures("agent_on_small_changes")


def _tool_calls(*calls: tuple[str, dict[str, Any]]) -> Scripted:
    return Scripted(body=completion(None, tool_calls=[
        {"id": f"c{n}", "type": "function",
         "function": {"name": name, "arguments": json.dumps(args)}}
        for n, (name, args) in enumerate(calls)]), delay=0.05)


def reviewer(request: Received) -> Scripted:
    """Plans nothing; records one finding on the `result = ` line of each module, then
    finishes; suggests nothing."""
    messages = request.messages
    if (messages[0]["content"] or "").startswith("You plan"):
        return Scripted(body=completion(json.dumps({"plan": []})))
    if (messages[0]["content"] or "").startswith("You write the fix"):
        return Scripted(body=completion("no"))
    if messages[-1]["role"] == "tool":
        return _tool_calls(("finish", {"summary": "done"}))
    prompt = messages[1]["content"]
    module = prompt.split("file: ", 1)[1].split("\n", 1)[0]
    return _tool_calls(("record_finding", {
        "file_path": module, "start_line": 2, "end_line": 2, "severity": "info",
        "category": "bug", "title": f"Unchecked result in {module}",
        "message": "The result is never checked.", "evidence": "result = compute(value)",
        "fix_description": ""}), ("finish", {"summary": "one"}))


@pytest.fixture
def change(repo: GitFixture, fake_openai: FakeOpenAI,
           monkeypatch: pytest.MonkeyPatch) -> GitFixture:
    for n in range(FILES):
        repo.write(f"auth/m{n}.py", f"def f{n}(value):\n    return value\n")
    repo.commit()
    for n in range(FILES):
        repo.write(f"auth/m{n}.py", f"def f{n}(value):\n    result = compute(value)\n"
                                   "    return value\n")
    repo.stage()
    fake_openai.responder = reviewer
    monkeypatch.setenv("REVIEWBOT_MODEL", "m")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    return repo


def user_config(text: str) -> None:
    """The user's config: its `[limits]` with the agent on small changes (every test here)."""
    write_user_config(text.replace("[limits]\n", "[limits]\n" + AGENT_ON_SMALL_CHANGES))


def review(change: GitFixture, capsys: pytest.CaptureFixture[str],
           *args: str) -> tuple[dict[str, Any], Path]:
    main(["--repo", str(change.root), "--format", "json", *args])
    report = json.loads(capsys.readouterr().out)
    return report, change.root / ".reviewbot" / "runs" / report["run_id"]


def _stable(run: Path) -> Any:
    review = json.loads((run / "step7_review.json").read_text())
    return [(r["unit_ids"], r["recorded"], r["turns"]) for r in review["reviews"]]


def test_a_concurrent_run_reports_what_a_serial_run_does(
        change: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    user_config("[limits]\nconcurrency = 1\n")
    serial, serial_run = review(change, capsys, "--no-cache")
    user_config("[limits]\nconcurrency = 8\n")
    parallel, parallel_run = review(change, capsys, "--no-cache")
    assert len([f for f in serial["findings"] if f["source"] == "model"]) == FILES
    assert serial["findings"] == parallel["findings"]
    assert _stable(serial_run) == _stable(parallel_run)
    assert serial["stats"]["model"]["calls"] == parallel["stats"]["model"]["calls"]


def test_an_unchanged_rerun_makes_no_model_calls(change: GitFixture, fake_openai: FakeOpenAI,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    first, _ = review(change, capsys)
    calls = len(fake_openai.received)
    second, run = review(change, capsys)
    assert len(fake_openai.received) == calls  # nothing asked the second time
    assert second["findings"] == first["findings"]
    stats = second["stats"]["model"]
    assert (stats["calls"], stats["cached_units"], stats["reviewed_units"]) == (0, FILES, FILES)
    model_calls = json.loads((run / "step9_model_calls.json").read_text())
    assert model_calls["calls"] == [] and model_calls["totals"]["requests"] == 0


def test_a_changed_unit_and_only_it_is_reviewed_again(
        change: GitFixture, fake_openai: FakeOpenAI,
        capsys: pytest.CaptureFixture[str]) -> None:
    review(change, capsys)
    change.write("auth/m3.py", "def f3(value):\n    result = compute(value)\n"
                              "    return result\n")
    change.stage()
    fake_openai.received.clear()
    _, run = review(change, capsys)
    reviews = json.loads((run / "step7_review.json").read_text())["reviews"]
    fresh = [r["file_path"] for r in reviews if not r["cached"]]
    assert fresh == ["auth/m3.py"]
    assert len(fake_openai.received) == 1  # m3's conversation, one turn (a small change: no plan)


def test_failures_are_never_cached(change: GitFixture, fake_openai: FakeOpenAI,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    user_config("[limits]\nmax_model_calls = 4\n")
    first, _ = review(change, capsys)
    # Four one-turn conversations spend the four calls (a small change: no plan).
    assert first["stats"]["model"]["skipped_units"] == {"call_cap": FILES - 4}
    entries, _ = ResultCache(change.root / ".reviewbot" / "cache").size()
    assert entries == 4  # nothing for the refused ones


def test_the_token_budget_ends_the_model_phase_cleanly(
        change: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    user_config("[limits]\nmax_run_tokens = 40\nconcurrency = 1\n"
                "[model.prices]\ninput_per_million = 1.0\noutput_per_million = 4.0\n")
    report, run = review(change, capsys, "--no-cache")
    stats = report["stats"]["model"]
    assert stats["skipped_units"].get("token_budget", 0) >= FILES - 3
    assert stats["tokens_in"] + stats["tokens_out"] <= 40 + 18  # one reply may cross it
    assert stats["cost"] == pytest.approx((stats["tokens_in"] * 1 + stats["tokens_out"] * 4)
                                          / 1e6)
    assert "token_budget" in (run / "step7_review.json").read_text()


def test_one_rate_limit_slows_every_worker() -> None:
    clock = [100.0]
    ledger = Ledger(max_calls=10, deadline_s=60, clock=lambda: clock[0])
    slept: list[float] = []
    ledger.pause(2.0)
    threads = [threading.Thread(target=ledger.wait, args=(slept.append,)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert slept == [2.0, 2.0, 2.0]
    clock[0] += 5
    ledger.wait(slept.append)
    assert len(slept) == 3


def test_the_cache_survives_concurrent_writers(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path / "cache")
    key = cache_key("same")
    errors: list[BaseException] = []

    def hammer(n: int) -> None:
        try:
            for round_ in range(50):
                cache.put("review", key, {"writer": n, "round": round_, "pad": "x" * 2000})
                cache.put("review", cache_key(str(n), str(round_)), {"writer": n})
                value = cache.get("review", key)
                assert value is None or set(value) == {"writer", "round", "pad"}
        except BaseException as exc:  # collected for the main thread
            errors.append(exc)

    threads = [threading.Thread(target=hammer, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    entries, _ = cache.size()
    assert entries == 1 + 6 * 50
    assert not list((tmp_path / "cache").rglob(".tmp-*"))


def test_two_processes_share_one_cache(change: GitFixture, fake_openai: FakeOpenAI,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Two hooks at once on one repository: both finish, and the cache they filled serves a
    third run completely."""
    command = [sys.executable, "-m", "reviewbot", "--repo", str(change.root), "--quiet"]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for _ in range(2)]
    results = [run.communicate(timeout=60) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], results
    fake_openai.received.clear()
    report, _ = review(change, capsys)
    assert fake_openai.received == [] and report["stats"]["model"]["cached_units"] == FILES


def test_eviction_keeps_the_cache_within_its_size(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path / "cache", max_bytes=10_000)
    for n in range(30):
        cache.put("review", cache_key(str(n)), {"pad": "x" * 1000})
    entries, size = cache.size()
    assert size <= 10_000 and entries < 30
    assert cache.get("review", cache_key("29")) is not None  # the newest stay
    assert cache.clear() == entries and cache.size() == (0, 0)


def test_cache_command(change: GitFixture, capsys: pytest.CaptureFixture[str]) -> None:
    review(change, capsys)
    assert main(["cache", "--repo", str(change.root)]) == 0
    assert f"{FILES} cached results" in capsys.readouterr().out
    assert main(["cache", "--repo", str(change.root), "--clear"]) == 0
    assert f"removed {FILES} cached results" in capsys.readouterr().out


@pytest.mark.parametrize("how", ["committed entries", "a symlink out"])
def test_a_repository_cannot_hand_the_run_its_own_model_answers(
        change: GitFixture, fake_openai: FakeOpenAI, tmp_path: Path,
        capsys: pytest.CaptureFixture[str], how: str) -> None:
    """A pull request that commits `.reviewbot/cache` entries (whose keys it can compute)
    would decide what "the model" said about its own code: such a cache is not used."""
    review(change, capsys)
    cache = change.root / ".reviewbot" / "cache"
    if how == "committed entries":
        change.git("add", "-f", ".reviewbot/cache")
    else:
        outside = tmp_path / "elsewhere"
        cache.rename(outside)
        cache.symlink_to(outside)
    fake_openai.received.clear()
    main(["--repo", str(change.root), "--format", "json"])
    out, err = capsys.readouterr()
    assert "the model-result cache is not used for this run" in err
    assert json.loads(out)["stats"]["model"]["cached_units"] == 0 and fake_openai.received


def test_a_spent_call_cap_builds_no_more_requests(
        change: GitFixture, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """With the cap reached, each remaining unit ends at once: no request is redacted and
    built for it (10,000 units spent minutes there, and on finding their rule findings)."""
    from reviewbot.model.session import ModelSession

    user_config("[limits]\nmax_model_calls = 1\nconcurrency = 1\n")
    built = 0
    real = ModelSession._redacted

    def counting(self: ModelSession, message: Any) -> Any:
        nonlocal built
        built += 1
        return real(self, message)

    monkeypatch.setattr(ModelSession, "_redacted", counting)
    report, _ = review(change, capsys, "--no-cache")
    assert report["stats"]["model"]["skipped_units"] == {"call_cap": FILES - 1}
    assert built == 2  # the first conversation's system and user messages, nothing after
