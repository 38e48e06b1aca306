"""The frozen Config every stage is handed, read from `.reviewbot.toml` or
`[tool.reviewbot]` in pyproject.toml at the repository root.

Command-line flags override the file; the file overrides the defaults.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast, get_args

from reviewbot.errors import ConfigError
from reviewbot.schema import Severity

SEVERITIES: tuple[str, ...] = get_args(Severity)


@dataclass(frozen=True)
class RuleSetting:
    enabled: bool = True
    severity: Severity | None = None


@dataclass(frozen=True)
class Config:
    fail_level: Severity = "error"
    output_dir: Path | None = None
    # Glob patterns (fnmatch, on repository paths) of files not to review.
    ignore: tuple[str, ...] = ()
    rules: Mapping[str, RuleSetting] = field(default_factory=dict)
    source: str = "defaults"
    # The model (OpenAI-compatible). Environment: REVIEWBOT_MODEL, OPENAI_BASE_URL,
    # OPENAI_API_KEY (the key is only ever read from the environment).
    model: str | None = None
    fallback_models: tuple[str, ...] = ()
    base_url: str | None = None
    timeout_s: float = 30.0
    max_model_calls: int = 30
    # Context budgets, in (estimated) tokens.
    context_unit_tokens: int = 6000
    context_run_tokens: int = 60000

    def rule(self, rule_id: str) -> RuleSetting:
        return self.rules.get(rule_id, RuleSetting())


_KNOWN_KEYS = {"fail_level", "output_dir", "ignore", "rules", "model", "fallback_models",
               "base_url", "timeout_s", "max_model_calls", "context_unit_tokens",
               "context_run_tokens"}


def load_config(repo_root: Path) -> Config:
    """The config of a repository: `.reviewbot.toml` first, then pyproject.toml."""
    own = repo_root / ".reviewbot.toml"
    if own.is_file():
        return parse_config(_read_toml(own), str(own), repo_root)
    pyproject = repo_root / "pyproject.toml"
    if pyproject.is_file():
        table = _read_toml(pyproject).get("tool", {}).get("reviewbot")
        if isinstance(table, dict):
            return parse_config(table, f"{pyproject} [tool.reviewbot]", repo_root)
    return Config()


def parse_config(table: Mapping[str, Any], source: str, repo_root: Path) -> Config:
    if "api_key" in table:
        raise ConfigError(f"{source}: keep the API key out of files; set OPENAI_API_KEY.")
    unknown = sorted(set(table) - _KNOWN_KEYS)
    if unknown:
        raise ConfigError(
            f"{source}: unknown key(s) {', '.join(unknown)}; "
            f"known keys are {', '.join(sorted(_KNOWN_KEYS))}.",
        )
    config = Config(source=source)
    if "fail_level" in table:
        config = replace(config, fail_level=_severity(table["fail_level"], f"{source}: fail_level"))
    if "output_dir" in table:
        config = replace(config, output_dir=repo_root / _string(table["output_dir"], source))
    if "ignore" in table:
        config = replace(config, ignore=_strings(table["ignore"], f"{source}: ignore"))
    if "rules" in table:
        config = replace(config, rules=_rules(table["rules"], source))
    return _model_keys(config, table, source)


def _model_keys(config: Config, table: Mapping[str, Any], source: str) -> Config:
    if "model" in table:
        config = replace(config, model=_string(table["model"], f"{source}: model"))
    if "fallback_models" in table:
        config = replace(config, fallback_models=_strings(table["fallback_models"],
                                                          f"{source}: fallback_models"))
    if "base_url" in table:
        config = replace(config, base_url=_string(table["base_url"], f"{source}: base_url"))
    if "timeout_s" in table:
        config = replace(config, timeout_s=_positive(table["timeout_s"], f"{source}: timeout_s"))
    counts: dict[str, Any] = {key: int(_positive(table[key], f"{source}: {key}"))
                              for key in ("max_model_calls", "context_unit_tokens",
                                          "context_run_tokens") if key in table}
    config = replace(config, **counts)
    return config


def _positive(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"{where} must be a positive number, not {value!r}.")
    return float(value)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from exc


def _rules(value: object, source: str) -> dict[str, RuleSetting]:
    """`rules = {rule-id = "off" | "error" | "warning" | "info" | true | false}`."""
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: rules must be a table of rule-id = setting.")
    settings: dict[str, RuleSetting] = {}
    for rule_id, setting in value.items():
        where = f"{source}: rules.{rule_id}"
        if isinstance(setting, bool):
            settings[rule_id] = RuleSetting(enabled=setting)
        elif setting == "off":
            settings[rule_id] = RuleSetting(enabled=False)
        else:
            settings[rule_id] = RuleSetting(severity=_severity(setting, where))
    return settings


def _severity(value: object, where: str) -> Severity:
    if value not in SEVERITIES:
        raise ConfigError(f"{where} must be one of {', '.join(SEVERITIES)}, not {value!r}.")
    return cast(Severity, value)


def _string(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be a string, not {value!r}.")
    return value


def _strings(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of strings.")
    return tuple(value)
