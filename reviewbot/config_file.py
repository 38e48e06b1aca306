"""What a config file may hold, either tier: its sections, decoded strictly and checked
against their bounds, and msgspec's first complaint said in the file's words (the dotted key,
what it must be, the value given, the closest known key)."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Annotated, Any, Literal, get_args, get_type_hints

import msgspec
from msgspec import Meta

from reviewbot.errors import ConfigError
from reviewbot.lazy_re import lazy_re


class _Section(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A file section, decoded strictly (0.5 is not an integer, "3" is not a number; an
    integer is a number) and checked against its bounds."""


class PathInstruction(_Section, frozen=True, kw_only=True):
    """Guidance for the reviewer on files matching a glob (`[[path_instructions]]`)."""

    path: Annotated[str, Meta(min_length=1)]
    instructions: Annotated[str, Meta(min_length=1, max_length=4000)]


class PathRules(_Section, frozen=True, kw_only=True):
    """Rule settings for files matching a glob (`[[path_rules]]`), over `[rules]`."""

    path: Annotated[str, Meta(min_length=1)]
    # Same values as [rules]: "off" | "error" | "warning" | "info" | true | false.
    rules: dict[str, str | bool]


_Price = Annotated[float, Meta(ge=0)]


class Prices(_Section, frozen=True, kw_only=True):
    """`[model.prices]`: what a million tokens cost, for the run summary's cost line."""

    input_per_million: _Price
    output_per_million: _Price
    cached_input_per_million: _Price | None = None

    def cost(self, tokens_in: int, tokens_out: int, cached: int) -> float:
        cached_price = (self.cached_input_per_million
                        if self.cached_input_per_million is not None else self.input_per_million)
        return ((tokens_in - cached) * self.input_per_million + cached * cached_price
                + tokens_out * self.output_per_million) / 1_000_000


class ModelSection(_Section, frozen=True, kw_only=True):
    """`[model]`: which OpenAI-compatible model to use, and where."""

    name: Annotated[str, Meta(min_length=1)] | None = None
    base_url: str | None = None
    fallback_models: list[str] = msgspec.field(default_factory=list)
    # Plain http to a host other than this machine (user tier only).
    allow_insecure_http: bool = False
    prices: Prices | None = None


class LimitsSection(_Section, frozen=True, kw_only=True):
    """`[limits]`: what a run may spend. A repository may only lower these. A key left out
    is None here (TOML has no null) and keeps the value it had (`Limits` holds defaults)."""

    timeout_s: Annotated[float, Meta(gt=0, le=600)] | None = None
    model_deadline_s: Annotated[float, Meta(gt=0, le=3600)] | None = None
    max_model_calls: Annotated[int, Meta(ge=1, le=10_000)] | None = None
    max_run_tokens: Annotated[int, Meta(ge=1)] | None = None
    concurrency: Annotated[int, Meta(ge=1, le=32)] | None = None
    context_unit_tokens: Annotated[int, Meta(ge=100, le=200_000)] | None = None
    context_run_tokens: Annotated[int, Meta(ge=100, le=2_000_000)] | None = None
    processes: Annotated[int, Meta(ge=1, le=64)] | None = None
    # One unit's conversation: turns, tool calls, tokens, seconds.
    unit_turns: Annotated[int, Meta(ge=1, le=100)] | None = None
    unit_tool_calls: Annotated[int, Meta(ge=1, le=500)] | None = None
    unit_tokens: Annotated[int, Meta(ge=100)] | None = None
    unit_seconds: Annotated[float, Meta(gt=0, le=3600)] | None = None
    # The longest reply a request may ask for (max_tokens).
    reply_tokens: Annotated[int, Meta(ge=16, le=100_000)] | None = None
    # true: the agent's conversations for a small change's risky units too (more calls).
    small_change_agent: bool | None = None


class FileConfig(_Section, frozen=True, kw_only=True):
    """One config file, either tier."""

    fail_level: Literal["error", "warning", "info"] | None = None
    output_dir: Annotated[str, Meta(min_length=1)] | None = None
    keep_runs: Annotated[int, Meta(ge=1, le=10_000)] | None = None
    ignore: list[str] = msgspec.field(default_factory=list)
    instructions: Annotated[str, Meta(max_length=8000)] = ""
    path_instructions: list[PathInstruction] = msgspec.field(default_factory=list)
    model_findings_block: bool | None = None
    dismissals_to_propose: Annotated[int, Meta(ge=0, le=1000)] | None = None
    # "off" | "error" | "warning" | "info" | true | false, checked in _rule_setting.
    rules: dict[str, str | bool] = msgspec.field(default_factory=dict)
    path_rules: list[PathRules] = msgspec.field(default_factory=list)
    model: ModelSection = msgspec.field(default_factory=ModelSection)
    limits: LimitsSection | None = None


def validate(table: Mapping[str, Any], source: str) -> FileConfig:
    if "api_key" in table or "api_key" in (table.get("model") or {}):
        raise ConfigError(f"{source}: keep the API key out of files; set OPENAI_API_KEY in "
                          "the environment (or the Action's secrets).")
    try:
        return msgspec.convert(dict(table), FileConfig)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{source}: {_explain(str(exc), table)}.") from exc


# msgspec's messages, e.g. "Expected `int` >= 1 - at `$.limits.processes`".
_AT = lazy_re(r"^(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)


_UNKNOWN = lazy_re(r"Object contains unknown field `(?P<name>[^`]*)`")


_WRONG_TYPE = lazy_re(r"Expected `(?P<want>[\w |]+)`, got `\w+`")


_BOUND = lazy_re(r"Expected `\w+` (?P<op>>=|>|<=|<) (?P<limit>[\d.]+)")


_LENGTH = lazy_re(r"Expected `(?:str|array)` of length (?P<op>>=|<=) (?P<limit>\d+)")


_OP_WORDS = {">=": "at least", ">": "greater than", "<=": "at most", "<": "less than"}


_TYPE_WORDS = {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false",
               "array": "a list", "object": "a table"}


def _explain(message: str, table: Mapping[str, Any]) -> str:
    """msgspec's first problem in the file's words: the dotted key, what it must be, and the
    value given."""
    found = _AT.match(message)
    what, path = (found["what"], found["path"] or "") if found else (message, "")
    key = path.lstrip(".").replace("[...]", ".*")
    value = _value_at(table, key)
    if unknown := _UNKNOWN.match(what):
        return _unknown_key(".".join(p for p in (re.sub(r"\[\d+\]", "", key), unknown["name"])
                                     if p))
    if wrong := _WRONG_TYPE.match(what):
        wanted = [_TYPE_WORDS.get(t, t) for t in wrong["want"].split(" | ") if t != "null"]
        rule = f"must be {' or '.join(wanted)}"
    elif bound := _BOUND.match(what):
        rule = f"must be {_OP_WORDS[bound['op']]} {_number(bound['limit'])}"
    elif what.startswith("Invalid enum value"):
        rule = f"must be {_choices(key)}"
    elif length := _LENGTH.match(what):
        unit = "characters" if isinstance(value, str) else "items"
        rule = ("must not be empty" if length["op"] == ">=" and length["limit"] == "1" else
                f"must have {_OP_WORDS[length['op']]} {length['limit']} {unit}")
    else:
        rule = what[:1].lower() + what[1:]
    shown = f" (got {_clipped(repr(value))})" if isinstance(value, str | int | float | bool) else ""
    return f"{key or 'the file'}: {rule}{shown}"


def _clipped(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def _number(text: str) -> str:
    return text.removesuffix(".0")


def _value_at(table: Mapping[str, Any], key: str) -> object:
    value: object = table
    for part in re.findall(r"[^.\[\]]+", key):
        if isinstance(value, Mapping):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def _unknown_key(dotted: str) -> str:
    *parents, name = dotted.split(".")
    known = sorted(_section_at(parents).__struct_fields__)
    return f"unknown key {dotted!r}{closest(name, known)} (known: {', '.join(known)})"


def _choices(dotted: str) -> str:
    *parents, name = re.sub(r"\[\d+\]", "", dotted).split(".")
    annotation = get_type_hints(_section_at(parents)).get(name)
    literal = next((a for a in (annotation, *get_args(annotation)) if get_args(a)
                    and all(isinstance(c, str) for c in get_args(a))), None)
    words = [repr(choice) for choice in get_args(literal)] or ["one of the allowed values"]
    return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else words[0]


def _section_at(parents: list[str]) -> type[_Section]:
    """The section a dotted key's parents lead to (as far as they name sections)."""
    section: type[_Section] = FileConfig
    for parent in parents:
        annotation = get_type_hints(section).get(parent)
        inner = next((a for a in (annotation, *get_args(annotation))
                      if isinstance(a, type) and issubclass(a, _Section)), None)
        if inner is None:
            break
        section = inner
    return section


def closest(name: str, known: Collection[str]) -> str:
    """"; did you mean 'x'?" for the known name nearest a mistaken one, else nothing."""
    import difflib  # only for a mistake: the hook without a config file does not load it

    match = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f"; did you mean {match[0]!r}?" if match else ""
