"""Which model, where, with which key: resolved from the config with the trust rules of
docs/ARCHITECTURE.md ("Trust boundaries")."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from reviewbot.config import Config, ModelConfig, is_loopback_url
from reviewbot.errors import ConfigError

# The SDK's own default, passed explicitly so the SDK never reads OPENAI_BASE_URL itself.
DEFAULT_BASE_URL = "https://api.openai.com/v1"
MAX_REPLY_BYTES = 2_000_000


@dataclass(frozen=True)
class ModelSettings:
    model: str
    fallback_models: tuple[str, ...] = ()
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    # Why no key is sent, for the error a server that wants one answers with.
    no_key_reason: str | None = None
    # A deadline for each whole request (not per socket read), and for the model phase.
    timeout_s: float = 30.0
    deadline_s: float = 60.0
    max_calls: int = 30
    max_tokens: int | None = None
    # The longest reply one request may ask for.
    reply_tokens: int = 2048
    concurrency: int = 4
    max_reply_bytes: int = MAX_REPLY_BYTES

    @property
    def endpoint(self) -> str:
        return self.base_url or DEFAULT_BASE_URL


def model_settings(config: Config, env: Mapping[str, str] | None = None,
                   notify: Callable[[str], None] = lambda message: None,
                   mode: str = "staged") -> ModelSettings | None:
    """The configured model, or None when none is (the run is then offline).

    The key goes only to an endpoint the person running reviewbot chose (environment, flag,
    user config, or the SDK's default) and only for a model they turned on; a model or
    endpoint named by the reviewed repository's config gets no key.
    """
    env = os.environ if env is None else env
    chosen = config.model
    if not chosen.name:
        return None
    if not chosen.name_origin.trusted and chosen.base_url is None:
        notify(f"{chosen.name_origin.where} names the model {chosen.name!r} but no local "
               "server; set REVIEWBOT_MODEL (and OPENAI_BASE_URL) yourself to use it. "
               "Reviewing offline.")
        return None
    if chosen.base_url is not None:
        check_endpoint(chosen.base_url, chosen.base_url_origin.where, chosen.allow_insecure_http)
    key = env.get("OPENAI_API_KEY") or None
    send_key = chosen.name_origin.trusted and chosen.base_url_origin.trusted
    if key and not send_key:
        notify(f"the model endpoint comes from {_untrusted_origin(chosen)}, "
               "the reviewed repository's config: your API key is not sent to it.")
    limits = config.limits
    no_key = (None if key and send_key else
              "OPENAI_API_KEY is not set" if not key else
              f"the endpoint or model comes from {_untrusted_origin(chosen)}, which never gets "
              "your key")
    return ModelSettings(
        model=chosen.name, fallback_models=_fallbacks(chosen, notify), base_url=chosen.base_url,
        api_key=key if send_key else None, no_key_reason=no_key,
        timeout_s=limits.timeout_s, deadline_s=limits.model_deadline_s,
        max_calls=limits.calls_for(mode), max_tokens=limits.max_run_tokens,
        reply_tokens=limits.reply_tokens, concurrency=limits.concurrency,
    )


def _fallbacks(chosen: ModelConfig, notify: Callable[[str], None]) -> tuple[str, ...]:
    """Which models the key pays for is the user's choice alone: a repository's fallback
    models go with a model the repository named (which gets no key), never with yours."""
    if chosen.fallback_origin.trusted or not chosen.name_origin.trusted:
        return chosen.fallback_models
    if chosen.fallback_models:
        notify(f"{chosen.fallback_origin.where} names fallback models; they are not used with "
               f"the model you chose ({chosen.name_origin.where})")
    return ()


def _untrusted_origin(chosen: ModelConfig) -> str:
    origin = chosen.base_url_origin if not chosen.base_url_origin.trusted else chosen.name_origin
    return origin.where


def check_endpoint(url: str, where: str, allow_insecure_http: bool) -> None:
    """A usable http(s) URL; plain http only to this machine unless the user allows it."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (validates the port)
    except ValueError as exc:
        raise ConfigError(f"{where}: {url!r} is not a valid URL ({exc}).") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{where}: {url!r} is not an http(s) URL with a host.")
    if parts.scheme == "http" and not is_loopback_url(url) and not allow_insecure_http:
        raise ConfigError(
            f"{where}: {url!r} is plain http to another machine: the API key and your code "
            "would cross the network unencrypted. Use https, or set "
            "REVIEWBOT_ALLOW_INSECURE_HTTP=1 (or model.allow_insecure_http in your user "
            "config) if that network is yours.")
