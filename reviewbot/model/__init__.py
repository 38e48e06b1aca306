"""The model layer: any OpenAI-compatible chat-completions server, behind small seams.

- `settings`: which model, which endpoint, which key (the trust rules);
- `messages`: chat messages with tool calls, tool definitions, replies;
- `wire`: a reply body parsed and bounded at the edge;
- `transport`: one HTTP request, bounded in time and size (imports the SDK);
- `ledger`: the run's call cap, token budget, deadline and shared rate-limit pause;
- `session`: retries, redaction both ways, structured answers.

Importing this package costs nothing: the SDK is imported by `open_session` only.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

from reviewbot.config import Config
from reviewbot.model.ledger import Ledger
from reviewbot.model.session import ModelSession, ModelUnavailable
from reviewbot.model.settings import ModelSettings, model_settings
from reviewbot.text.redaction import Redactor

__all__ = ["ModelSession", "ModelSettings", "ModelUnavailable", "model_settings",
           "open_session", "session_for_settings"]


def open_session(config: Config, notify: Callable[[str], None] = lambda message: None,
                 redactor: Redactor | None = None,
                 mode: str = "staged") -> ModelSession | None:
    """A session with the configured model, or None (offline) when none is configured.
    `mode` (staged, working, pr, github) sets the default call cap."""
    settings = model_settings(config, notify=notify, mode=mode)
    if settings is None:
        return None
    if importlib.util.find_spec("openai") is None:
        notify(f"the model {settings.model!r} is configured but the `openai` package is not "
               "installed, so this run is offline. Install it with `pip install "
               "'reviewbot[model]'` (in a pre-commit hook: `additional_dependencies: "
               "['openai>=3.0']`).")
        return None
    return session_for_settings(settings, redactor)


def session_for_settings(settings: ModelSettings,
                         redactor: Redactor | None = None) -> ModelSession:
    from reviewbot.model.transport import OpenAITransport

    redactor = redactor or Redactor()
    if settings.api_key:
        redactor.add([settings.api_key])
    return ModelSession(
        client=OpenAITransport(settings), settings=settings,
        ledger=Ledger(max_calls=settings.max_calls, deadline_s=settings.deadline_s,
                      max_tokens=settings.max_tokens),
        redactor=redactor)
