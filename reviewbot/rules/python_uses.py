"""A value as an injection rule's sink call uses it, for Python: the argument, what it
resolves to, where it came from (`python_flow`: a parameter, a request, the environment,
string formatting), and the assignments that built it. A finding is reported at the call when
the change touches it, and otherwise at the changed lines that build its value: a fix often
changes only the line that builds the query or the command, and a reviewer should hear about
the call from there. Severities are conservative where the flow is unsure: a value from a
request or a command built by formatting is an error; a value from a parameter is a warning
or less.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import msgspec

from reviewbot.code.python_walk import walk
from reviewbot.levels import Severity
from reviewbot.rules.python_ast import PythonFile, Report, on_lines, string_kind
from reviewbot.rules.python_flow import (
    Flow,
    SinkKind,
    Source,
    field_key,
    formatted_for,
    source_of,
)
from reviewbot.rules.python_strings import is_formatted

_FROM: dict[Source, str] = {
    "request": "request data", "argv": "the command line", "input": "input()",
    "environment": "the environment", "archive": "an archive's member names",
    "parameter": "a parameter of the function"}


OUTSIDE = frozenset({"request", "argv", "input", "environment"})


LOWERED: dict[Severity, Severity] = {"error": "warning", "warning": "info", "info": "info"}


class Use(msgspec.Struct, frozen=True):
    """A value as a call uses it: the argument, what it resolves to, where it came from."""

    call: ast.Call
    name: str
    value: ast.expr
    # The assignments the value went through, nearest first: a fix often changes only
    # the line that builds the query or the command, not the call.
    chain: tuple[ast.expr, ...]
    source: Source | None
    flow: Flow
    # Built by formatting with a value not made safe for the sink's kind (`f"ls {x}"`, not
    # `f"ls {shlex.quote(x)}"` for a shell).
    formatted: bool = False


def use_of(parsed: PythonFile, call: ast.Call, name: str, arg: ast.expr,
           kind: SinkKind) -> Use:
    """The value as a sink of this kind sees it: a sanitiser of another kind stops nothing."""
    flow = parsed.flow.at(call)
    value = arg
    key = field_key(arg)
    if key is not None:
        before = flow.assignments_before(key, call.lineno)
        if before and (is_formatted(before[0]) or string_kind(before[0]) == "constant"):
            value = before[0]
    source = source_of(arg, flow, parsed.flow.name_of, kind)
    if source == "parameter" and flow.handler:
        source = "request"  # a web handler's parameters are the URL's parts
    return Use(call=call, name=name, value=value,
               chain=_chain(arg, call.lineno, flow, parsed, kind), source=source, flow=flow,
               formatted=formatted_for(value, flow, parsed.flow.name_of, kind))


_MAX_CHAIN = 8


def _chain(arg: ast.expr, line: int, flow: Flow, parsed: PythonFile,
           kind: SinkKind) -> tuple[ast.expr, ...]:
    """The assignments before `line` of the names in `arg` that carry input or formatting,
    followed back through the names they use."""
    found: list[ast.expr] = []
    pending = [(key, line) for key in _keys(arg)]
    seen: set[tuple[str, int]] = set()
    while pending and len(found) < _MAX_CHAIN:
        name, before = pending.pop(0)
        if (name, before) in seen:
            continue
        seen.add((name, before))
        for value in flow.assignments_before(name, before):
            if is_formatted(value) or source_of(value, flow, parsed.flow.name_of, kind):
                found.append(value)
                pending += [(key, value.lineno) for key in _keys(value)]
    return tuple(found[:_MAX_CHAIN])


def _keys(expr: ast.expr) -> list[str]:
    """The names and `self.` fields an expression reads."""
    return [key for n in walk(expr) if (key := field_key(n)) is not None]


def report_use(parsed: PythonFile, use: Use, severity: Severity | None, message: str,
            suggestion: str) -> Iterator[Report]:
    """At the call when the change touches it; otherwise at the changed lines that build
    its value."""
    if on_lines(use.call, parsed.changed):
        yield use.call, severity, message, suggestion
        return
    for site in use.chain:
        yield (site, severity, f"{message} (used by `{use.name}` on line {use.call.lineno})",
               suggestion)


def from_source(source: Source | None) -> str:
    return f" from {_FROM[source]}" if source else ""
