"""What a model server cannot do, remembered per endpoint and model between runs.

A server that refuses tool definitions (a 400 naming them) refuses them next time too:
probing it again cost every run a failed request (and with a slow local model, minutes).
The record lives in the user's cache (`~/.cache/reviewbot/servers.json`), never in a
repository; deleting the file makes reviewbot ask again. A model that merely answered
without calling a tool is not recorded: that was its choice, not the server's limit.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from reviewbot.store.paths import user_cache_folder

FILE = "servers.json"


def _path(env: Mapping[str, str]) -> Path:
    return user_cache_folder(env) / FILE


def _key(endpoint: str, model: str) -> str:
    return f"{endpoint.rstrip('/')} {model}"


def without_tools_since(endpoint: str, model: str,
                        env: Mapping[str, str] | None = None) -> str | None:
    """The date the server was found to refuse tool calls, or None."""
    try:
        data = json.loads(_path(os.environ if env is None else env).read_text("utf-8"))
        entry = data.get(_key(endpoint, model)) if isinstance(data, dict) else None
    except (OSError, ValueError):
        return None
    if isinstance(entry, dict) and entry.get("tools") is False:
        return str(entry.get("since", "earlier"))
    return None


def remember_without_tools(endpoint: str, model: str,
                           env: Mapping[str, str] | None = None) -> None:
    """Record that the server refused tool calls (a cache that cannot be written is fine)."""
    path = _path(os.environ if env is None else env)
    with contextlib.suppress(OSError, ValueError):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            data = {}
        if not isinstance(data, dict):
            data = {}
        data[_key(endpoint, model)] = {"tools": False,
                                       "since": datetime.now(UTC).strftime("%Y-%m-%d")}
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1, sort_keys=True)
        Path(temporary).replace(path)
