"""A server that misbehaves on purpose: every fault ends in a bounded ModelUnavailable (which
the pipeline turns into the heuristic fallback), never in anything else.

These are the rows of the table in docs/MODEL.md, "When the server misbehaves".
"""

from __future__ import annotations

import json
import time

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


def ask(session: ModelSession) -> Answer:
    return session.ask("test", [user("rate it")], Answer)


def failure(session: ModelSession) -> ModelUnavailable:
    with pytest.raises(ModelUnavailable) as exc:
        ask(session)
    return exc.value


GOOD = json.dumps(completion(json.dumps({"verdict": "ok", "score": 1}))).encode()


@pytest.mark.parametrize(("body", "content_type", "says"), [
    (b"<html><body>502 Bad Gateway</body></html>", "text/html", "an HTML page"),
    (b'"hello"', "application/json", "not a chat completion (a str)"),
    (b"[]", "application/json", "not a chat completion (a list)"),
    (b"", "application/json", "an empty body"),
    (b'{"choices": [{"message": null}]}', "application/json", "has no message"),
    (b'{"choices": []}', "application/json", "has no message"),
    (b'{"choices": "many"}', "application/json", "not a chat completion"),
])
def test_a_200_that_is_not_a_chat_completion(fake_openai: FakeOpenAI, body: bytes,
                                             content_type: str, says: str) -> None:
    fake_openai.reply_raw(body, content_type=content_type)
    session = session_for(fake_openai.base_url)
    exc = failure(session)
    assert exc.reason == "model_error" and says in str(exc)
    assert [c.outcome for c in session.ledger.calls] == ["bad_reply"]


def test_content_as_parts_and_null_usage_are_understood(fake_openai: FakeOpenAI) -> None:
    reply = completion(None)
    reply["choices"][0]["message"]["content"] = [
        {"type": "text", "text": '{"verdict": "ok",'}, {"type": "text", "text": ' "score": 4}'}]
    reply["usage"] = {"prompt_tokens": None, "completion_tokens": None}
    fake_openai.reply_raw(json.dumps(reply).encode())
    session = session_for(fake_openai.base_url)
    assert ask(session).score == 4
    assert (session.ledger.calls[0].tokens_in, session.ledger.calls[0].tokens_out) == (0, 0)


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "Wed, 21 Oct 2015 07:28:00 GMT"])
def test_a_nonsense_retry_after_falls_back_to_the_backoff(fake_openai: FakeOpenAI,
                                                          value: str) -> None:
    fake_openai.reply_status(429, headers={"retry-after": value})
    fake_openai.reply_json({"verdict": "ok", "score": 1})
    sleeps: list[float] = []
    assert ask(session_for(fake_openai.base_url, sleeps)).score == 1
    assert sleeps == [pytest.approx(BACKOFF_S, abs=0.1)]


def test_a_trickling_server_cannot_hold_the_run(fake_openai: FakeOpenAI) -> None:
    """One byte every 0.2 s: 60 s for the body. The deadline is the whole request's."""
    fake_openai.reply_raw(GOOD, trickle=0.2)
    session = session_for(fake_openai.base_url, timeout_s=1.0)
    started = time.monotonic()
    exc = failure(session)
    assert time.monotonic() - started < 2.5
    assert exc.reason == "model_timeout"
    assert [c.outcome for c in session.ledger.calls] == ["timeout"]


def test_a_huge_reply_is_not_read(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_raw(json.dumps(completion("x" * 3_000_000)).encode())
    session = session_for(fake_openai.base_url)
    exc = failure(session)
    assert "over 2,000,000 bytes" in str(exc)
    assert [c.outcome for c in session.ledger.calls] == ["reply_too_large"]


def test_a_huge_error_body_is_not_read_either(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_raw(b'{"error": {"message": "' + b"y" * 3_000_000 + b'"}}', status=400)
    session = session_for(fake_openai.base_url)
    failure(session)
    assert [c.outcome for c in session.ledger.calls] == ["reply_too_large"]


def test_server_text_cannot_drive_the_terminal(fake_openai: FakeOpenAI) -> None:
    forged = "bad\x1b[2K\r\nreviewbot: all checks passed \x1b[32mOK\u202e"
    fake_openai.reply_status(400, message=forged)
    session = session_for(fake_openai.base_url)
    text = str(failure(session)) + (session.ledger.calls[0].error or "")
    assert not any(ch in text for ch in "\x1b\r\n\u202e")


def test_a_reply_echoing_the_key_is_scrubbed(fake_openai: FakeOpenAI) -> None:
    fake_openai.script.append(Scripted(body=completion('{"verdict": "{AUTH}", "score": 1}'),
                                       echo_auth=True))
    answer = ask(session_for(fake_openai.base_url))
    assert KEY not in answer.verdict and "[REDACTED]" in answer.verdict


def test_the_run_deadline_ends_the_model_phase(fake_openai: FakeOpenAI) -> None:
    fake_openai.default = Scripted(body=completion(json.dumps({"verdict": "ok", "score": 1})),
                                   delay=0.4)
    session = session_for(fake_openai.base_url, deadline_s=1.0)
    started = time.monotonic()
    answers = 0
    with pytest.raises(ModelUnavailable) as exc:
        while True:
            ask(session)
            answers += 1
    assert exc.value.reason in ("deadline", "model_timeout")
    assert answers in (1, 2) and time.monotonic() - started < 1.8


def test_the_token_budget_ends_the_model_phase(fake_openai: FakeOpenAI) -> None:
    fake_openai.default = Scripted(body=completion(json.dumps({"verdict": "ok", "score": 1})))
    session = session_for(fake_openai.base_url, max_tokens=30)  # each reply: 11 + 7 tokens
    ask(session)
    ask(session)
    assert failure(session).reason == "token_budget"
    assert len(fake_openai.received) == 2


def test_every_http_request_counts_against_the_cap(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_status(400, message="response_format is not supported")
    fake_openai.reply_status(400, message="response_format json_object unsupported")
    session = session_for(fake_openai.base_url, max_calls=2)
    assert failure(session).reason == "call_cap"
    assert len(fake_openai.received) == 2


def test_retries_are_numbered(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_status(503)
    fake_openai.reply_status(503)
    fake_openai.reply_json({"verdict": "ok", "score": 1})
    session = session_for(fake_openai.base_url)
    ask(session)
    assert [(c.attempt, c.retry, c.outcome) for c in session.ledger.calls] == [
        (1, 0, "http_503"), (1, 1, "http_503"), (1, 2, "ok")]
