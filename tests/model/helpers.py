"""Sessions pointed at the fake OpenAI server (tests/fake_openai.py)."""

from __future__ import annotations

from reviewbot.model import ModelSession, ModelSettings, session_for_settings
from reviewbot.plan.planner import SMALL_CHANGE_LINES

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


# A module long enough that a change adding it is one the model plans: a smaller change gets
# the heuristic plan without a call (plan/planner.py, `is_small`).
PLANNED = "".join(f"LIMIT_{n} = {n}\n" for n in range(SMALL_CHANGE_LINES + 1))
