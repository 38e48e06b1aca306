"""The model session against a real HTTP peer on 127.0.0.1, with the real openai client:
structured answers, retries, backoff, fallbacks, the call cap, format step-downs."""

from __future__ import annotations

import socket

import pytest
from pydantic import BaseModel

from reviewbot.model import ModelSession, ModelUnavailable
from reviewbot.model.messages import user
from reviewbot.model.session import BACKOFF_S
from tests.fake_openai import FakeOpenAI, Scripted, completion
from tests.model.helpers import KEY, session_for


class Answer(BaseModel):
    verdict: str
    score: int


def caller_for(server_url: str, sleeps: list[float] | None = None,
               **settings: object) -> ModelSession:
    return session_for(server_url, sleeps, **settings)


def ask(caller: ModelSession) -> Answer:
    return caller.ask("test", [user("rate it")], Answer)


def test_valid_reply(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_json({"verdict": "ok", "score": 3})
    caller = caller_for(fake_openai.base_url)

    assert ask(caller) == Answer(verdict="ok", score=3)

    [request] = fake_openai.received
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "primary" and request.body["temperature"] == 0
    assert request.body["response_format"]["json_schema"]["schema"]["required"] == [
        "verdict", "score"]
    assert request.headers["authorization"] == f"Bearer {KEY}"
    [call] = caller.ledger.calls
    assert (call.outcome, call.model, call.tokens_in, call.tokens_out) == ("ok", "primary", 11, 7)


def test_invalid_reply_is_retried_once_with_the_error_fed_back(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_json({"verdict": "ok", "score": "three"})
    fake_openai.reply_json({"verdict": "ok", "score": 3})
    caller = caller_for(fake_openai.base_url)

    assert ask(caller).score == 3

    retry = fake_openai.received[1].messages
    assert retry[-2]["role"] == "assistant" and "three" in retry[-2]["content"]
    assert retry[-1]["role"] == "user" and "score" in retry[-1]["content"]
    assert "did not match the required JSON schema" in retry[-1]["content"]
    assert [c.outcome for c in caller.ledger.calls] == ["invalid_output", "ok"]


def test_garbage_twice_moves_to_the_fallback_model(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_text("I think it is fine!")
    fake_openai.reply_text("{not json")
    fake_openai.reply_json({"verdict": "fine", "score": 1})
    caller = caller_for(fake_openai.base_url, fallback_models=("backup",))

    assert ask(caller).verdict == "fine"
    assert [r.body["model"] for r in fake_openai.received] == ["primary", "primary", "backup"]


def test_garbage_everywhere_is_unavailable_with_reason_invalid_output(
        fake_openai: FakeOpenAI) -> None:
    for _ in range(4):
        fake_openai.reply_text("no")
    caller = caller_for(fake_openai.base_url, fallback_models=("backup",))
    with pytest.raises(ModelUnavailable) as exc:
        ask(caller)
    assert exc.value.reason == "invalid_output"
    assert len(fake_openai.received) == 4


def test_reply_in_a_code_fence_is_accepted(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_text('```json\n{"verdict": "ok", "score": 2}\n```')
    assert ask(caller_for(fake_openai.base_url)).score == 2


def test_timeout_is_final_not_retried(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_slowly(3.0, {"verdict": "late", "score": 0})
    caller = caller_for(fake_openai.base_url, timeout_s=0.3)
    with pytest.raises(ModelUnavailable) as exc:
        ask(caller)
    assert exc.value.reason == "model_timeout"
    assert len(fake_openai.received) == 1
    assert [c.outcome for c in caller.ledger.calls] == ["timeout"]


def test_429_honours_retry_after(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_status(429, headers={"retry-after": "2"})
    fake_openai.reply_json({"verdict": "ok", "score": 1})
    sleeps: list[float] = []
    caller = caller_for(fake_openai.base_url, sleeps)

    assert ask(caller).score == 1
    assert sleeps == [pytest.approx(2.0, abs=0.2)]
    assert [c.outcome for c in caller.ledger.calls] == ["http_429", "ok"]


def test_5xx_backs_off_exponentially_then_gives_up(fake_openai: FakeOpenAI) -> None:
    for _ in range(3):
        fake_openai.reply_status(503)
    sleeps: list[float] = []
    caller = caller_for(fake_openai.base_url, sleeps)
    with pytest.raises(ModelUnavailable) as exc:
        ask(caller)
    assert exc.value.reason == "model_error"
    assert sleeps == [pytest.approx(BACKOFF_S, abs=0.2), pytest.approx(2 * BACKOFF_S, abs=0.2)]
    assert len(fake_openai.received) == 3


def test_a_500_then_success(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_status(500)
    fake_openai.reply_json({"verdict": "ok", "score": 5})
    assert ask(caller_for(fake_openai.base_url)).score == 5


def test_client_errors_are_not_retried_and_never_show_the_key(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_status(401, message=f"Incorrect API key provided: {KEY}")
    caller = caller_for(fake_openai.base_url)
    with pytest.raises(ModelUnavailable) as exc:
        ask(caller)
    assert len(fake_openai.received) == 1
    assert KEY not in str(exc.value) and KEY not in repr(exc.value)
    assert all(KEY not in call.to_json() for call in caller.ledger.calls)
    assert "***" in (caller.ledger.calls[0].error or "")


def test_server_down_is_a_connection_error_after_two_retries() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleeps: list[float] = []
    caller = caller_for(f"http://127.0.0.1:{port}/v1", sleeps)
    with pytest.raises(ModelUnavailable) as exc:
        ask(caller)
    assert exc.value.reason == "model_error"
    assert [c.outcome for c in caller.ledger.calls] == ["connection_error"] * 3
    assert sleeps == [pytest.approx(BACKOFF_S, abs=0.2), pytest.approx(2 * BACKOFF_S, abs=0.2)]


def test_call_cap(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_json({"verdict": "ok", "score": 1})
    caller = caller_for(fake_openai.base_url, max_calls=1)
    assert ask(caller).score == 1
    with pytest.raises(ModelUnavailable) as exc:
        ask(caller)
    assert exc.value.reason == "call_cap"
    assert len(fake_openai.received) == 1


def test_server_without_json_schema_support_steps_down_and_remembers(
        fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_status(400, message="response_format json_schema is not supported")
    fake_openai.reply_status(400, message="unknown field: response_format")
    fake_openai.reply_json({"verdict": "ok", "score": 1})
    fake_openai.reply_json({"verdict": "ok", "score": 2})
    caller = caller_for(fake_openai.base_url)

    assert ask(caller).score == 1
    assert ask(caller).score == 2

    formats = [r.body.get("response_format", {}).get("type") for r in fake_openai.received]
    assert formats == ["json_schema", "json_object", None, None]
    # Every HTTP request is in the ledger and counts against the cap, step-downs included.
    assert [c.outcome for c in caller.ledger.calls] == ["http_400", "http_400", "ok", "ok"]


def test_other_400s_are_not_format_problems(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_status(400, message="maximum context length exceeded")
    with pytest.raises(ModelUnavailable):
        ask(caller_for(fake_openai.base_url))
    assert len(fake_openai.received) == 1


def test_every_request_bounds_its_reply(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_json({"verdict": "ok", "score": 3})
    ask(caller_for(fake_openai.base_url, reply_tokens=512))
    assert fake_openai.received[0].body["max_tokens"] == 512


def test_a_server_that_wants_max_completion_tokens_gets_it(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_status(400, message="Unsupported parameter: 'max_tokens' is not supported "
                                          "with this model. Use 'max_completion_tokens' instead.")
    fake_openai.reply_json({"verdict": "ok", "score": 3})
    fake_openai.reply_json({"verdict": "ok", "score": 4})
    caller = caller_for(fake_openai.base_url)
    assert ask(caller).score == 3 and ask(caller).score == 4
    bodies = [r.body for r in fake_openai.received]
    assert "max_tokens" in bodies[0]
    assert all("max_tokens" not in b and b["max_completion_tokens"] == 2048 for b in bodies[1:])


def test_a_reply_cut_at_its_length_is_asked_again_with_room(fake_openai: FakeOpenAI) -> None:
    cut = completion('{"verdict": "ok", "sco')
    cut["choices"][0]["finish_reason"] = "length"
    fake_openai.script.append(Scripted(body=cut))
    fake_openai.reply_json({"verdict": "ok", "score": 3})
    caller = caller_for(fake_openai.base_url, reply_tokens=100)
    assert ask(caller).score == 3
    first, second = (r.body for r in fake_openai.received)
    assert (first["max_tokens"], second["max_tokens"]) == (100, 200)
    assert second["messages"] == first["messages"]  # no correction: it was cut, not wrong
    assert [c.outcome for c in caller.ledger.calls] == ["cut", "ok"]
