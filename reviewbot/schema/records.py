"""The base of every record the run passes between stages (`Frozen`: immutable, built by keyword,
strict when decoded), and the vocabularies they share (modes, tags, levels, categories)."""

from __future__ import annotations

from typing import Any, Literal, Self

import msgspec

Mode = Literal["staged", "working", "pr"]


PatchType = Literal["add", "modify", "delete", "rename", "binary", "mode"]


ContextLevel = Literal["diff_only", "function", "file_context", "full_file"]


Priority = Literal["high", "medium", "low"]


Category = Literal["security", "secrets", "bug", "performance", "maintainability", "style"]


FindingSource = Literal["rule", "model"]


Tag = Literal[
    "config_file", "routing_file", "ci_workflow", "dependency_manifest", "migration",
    "test_file", "docs", "generated", "vendored", "lockfile", "only_whitespace",
    "only_comments", "only_docs", "only_imports", "only_versions", "large_change", "minified",
    "security_sensitive",
]


LineKind = Literal["add", "del", "ctx"]


# Ordered from narrowest to widest; fusion and budgeting compare levels by index.
CONTEXT_LEVELS: tuple[ContextLevel, ...] = ("diff_only", "function", "file_context", "full_file")


class Frozen(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The base of every contract: immutable, built by keyword, strict when decoded.

    Each subclass repeats `frozen=True, kw_only=True`: msgspec applies `kw_only` to the
    fields a class declares itself, and mypy reads both from each class statement."""

    def replace(self, **changes: Any) -> Self:
        """A copy with some fields changed (not validated: our own code builds it)."""
        return msgspec.structs.replace(self, **changes)

    def to_data(self, *, exclude: str = "") -> dict[str, Any]:
        """Plain JSON-ready data (dicts, tuples, strings, numbers, None), without the field
        `exclude` (never converted: an artifact streams its long list separately)."""
        if not exclude:
            return msgspec.to_builtins(self)  # type: ignore[no-any-return]
        return {name: msgspec.to_builtins(getattr(self, name)) for name in self.__struct_fields__
                if name != exclude}

    def to_json(self, *, indent: int = 0) -> str:
        raw = msgspec.json.encode(self)
        return (msgspec.json.format(raw, indent=indent) if indent else raw).decode()

    @classmethod
    def from_data(cls, data: object) -> Self:
        """Decode plain data (a cache entry, our own dicts) into this record; raises
        msgspec.ValidationError on a wrong type, value or key."""
        return msgspec.convert(data, cls)

    @classmethod
    def from_json(cls, raw: bytes | str) -> Self:
        """Decode JSON (an artifact); raises msgspec.DecodeError (ValidationError is one)."""
        return msgspec.json.decode(raw, type=cls)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return cls.__struct_fields__
