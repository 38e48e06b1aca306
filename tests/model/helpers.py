"""Sessions pointed at the fake OpenAI server (tests/fake_openai.py)."""

from __future__ import annotations

from reviewbot.model import ModelSession, ModelSettings, session_for_settings

KEY = "sk-test-DO-NOT-LEAK-0123456789"


def session_for(server_url: str, sleeps: list[float] | None = None,
                **settings: object) -> ModelSession:
    """A session with the real transport; `sleeps` records the backoff instead of sleeping."""
    values: dict[str, object] = {"model": "primary", "base_url": server_url, "api_key": KEY,
                                 "timeout_s": 5.0, "max_calls": 30, **settings}
    session = session_for_settings(ModelSettings(**values))  # type: ignore[arg-type]
    recorded = sleeps if sleeps is not None else []
    session.sleep = recorded.append
    return session
