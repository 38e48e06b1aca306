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

    def rule(self, rule_id: str) -> RuleSetting:
        return self.rules.get(rule_id, RuleSetting())


_KNOWN_KEYS = {"fail_level", "output_dir", "ignore", "rules"}


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
    return config


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
