"""Injection rules for Python: SQL, shell commands, file paths and HTML.

Each rule follows a value from where it comes from (`python_flow`: a parameter, a request,
the environment, string formatting) to the call that uses it, within one function. A
finding is reported at the call when the change touches it, and otherwise at the changed
lines that build its value: a fix often changes only the line that builds the query or the
command, and a reviewer should hear about the call from there.
Severities are conservative where the flow is unsure: a value from a request or a command
built by formatting is an error; a value from a parameter is a warning or less.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from itertools import pairwise
from typing import cast

import msgspec

from reviewbot.code.python_walk import walk
from reviewbot.rules.imported import (
    Target,
    candidates,
    defining_module,
    is_project_module,
    project_aliases,
    target_of,
)
from reviewbot.rules.python_ast import (
    PythonFile,
    Report,
    enclosing_function,
    first_arg,
    is_const,
    keyword_arg,
    line_pattern,
    nodes_of,
    on_lines,
    rule,
    string_kind,
)
from reviewbot.rules.python_flow import (
    Flow,
    SinkKind,
    Source,
    field_key,
    formatted_for,
    is_formatted,
    literal_text,
    source_of,
)
from reviewbot.rules.python_guards import controls, unruled_flag
from reviewbot.rules.shell_commands import SHELL_PARAM, Assigned, shell_command
from reviewbot.rules.wrappers import Kind, SinkArguments, SinkPath, Wrappers
from reviewbot.schema import Severity

_FROM: dict[Source, str] = {
    "request": "request data", "argv": "the command line", "input": "input()",
    "environment": "the environment", "archive": "an archive's member names",
    "parameter": "a parameter of the function"}
_OUTSIDE = frozenset({"request", "argv", "input", "environment"})
_LOWER: dict[Severity, Severity] = {"error": "warning", "warning": "info", "info": "info"}


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


def _report(parsed: PythonFile, use: Use, severity: Severity | None, message: str,
            suggestion: str) -> Iterator[Report]:
    """At the call when the change touches it; otherwise at the changed lines that build
    its value."""
    if on_lines(use.call, parsed.changed):
        yield use.call, severity, message, suggestion
        return
    for site in use.chain:
        yield (site, severity, f"{message} (used by `{use.name}` on line {use.call.lineno})",
               suggestion)


def _from(source: Source | None) -> str:
    return f" from {_FROM[source]}" if source else ""


# --- shell -------------------------------------------------------------------------------

def _shell_injection(parsed: PythonFile) -> Iterator[Report]:
    for call, name in parsed.scope_calls:
        shell = shell_command(call, name, _assigned(parsed, call))
        if shell is None:
            continue
        use = use_of(parsed, call, name, shell.command, "shell")
        severity = _shell_severity(use, shell.always)
        if severity is None:
            continue
        if not shell.sure:
            # shell=True on a Popen/call that no import ties to subprocess, or a shell flag
            # this cannot read: still a shell, one level lower.
            severity = _LOWER[severity]
        yield from _report(parsed, use, severity, _shell_message(use), (
            "Pass a list of arguments without shell=True (e.g. subprocess.run([\"tool\", arg], "
            "check=True)); use shlex.quote only as a last resort."))


    for call, name, arg, param, path in _wrapped(parsed, "shell"):
        use = use_of(parsed, call, name, arg, "shell")
        if not (use.formatted or use.source in _OUTSIDE):
            continue  # a value passed along: the wrapper's own call site is where it is built
        what = ("the command is built by string formatting" if use.formatted else
                "the command comes") + _from(use.source)
        yield from _report(parsed, use, "error", (
            f"{path.describe(name, param)}, which runs it through a shell, and {what}: any "
            "input in it can run other commands."),
            f"Give `{name}` a list of arguments and run it without a shell, or quote every "
            "value with shlex.quote.")
    yield from _templated_commands(parsed)
    yield from _remote_shells(parsed)


# Methods that hand their command to a shell at the other end: paramiko's
# `SSHClient.exec_command`, adb clients' `device.shell` (bandit's B601 reads the first).
_REMOTE_SHELL_METHODS = frozenset({"exec_command", "shell"})


def _remote_shells(parsed: PythonFile) -> Iterator[Report]:
    for call, name in parsed.scope_calls:
        method = name.rsplit(".", 1)[-1]
        if method not in _REMOTE_SHELL_METHODS or not isinstance(call.func, ast.Attribute) \
                or not call.args or _module_wrappers(parsed).defines(method):
            continue
        use = use_of(parsed, call, name, call.args[0], "shell")
        severity = _shell_severity(use, True)
        if severity is None or not (use.formatted or use.source in _OUTSIDE):
            continue
        yield from _report(parsed, use, _LOWER[severity], (
            f"`{name}` runs its command in a shell at the other end (an SSH server, a "
            f"device){' and the command is built by string formatting' if use.formatted else ''}"
            f"{_from(use.source)}: any input in it can run other commands there."),
            "Quote every value with shlex.quote, or check it against an allow list, before "
            "it goes into the command.")


# A shell command that a scheduler renders as a template before running it (Airflow's
# BashOperator), and the template values whoever triggers a run chooses.
_TEMPLATED_COMMAND_KEYWORDS = frozenset({"bash_command"})
_TRIGGER_VALUE = re.compile(r"\{\{-?\s*(?P<name>(?:dag_run|params|run_id)\b[^}]*?)\s*-?\}\}")


def _templated_commands(parsed: PythonFile) -> Iterator[Report]:
    """`BashOperator(bash_command='echo {{ dag_run.conf["x"] }}')`: the value is rendered
    into the command unquoted, and the shell runs whatever it says (CVE-2022-40127)."""
    for call, _name in parsed.calls:
        for keyword in call.keywords:
            if keyword.arg not in _TEMPLATED_COMMAND_KEYWORDS:
                continue
            found = _TRIGGER_VALUE.search(literal_text(keyword.value, parsed.constants))
            if found is None:
                continue
            yield (keyword.value, "warning",
                   f"`{keyword.arg}` is a template rendered into a shell command, and "
                   f"`{{{{ {found.group('name')} }}}}` is chosen by whoever triggers the run: "
                   "it is not quoted, so it can run other commands.",
                   "Pass the value in the environment (env={\"RUN_ID\": \"{{ run_id }}\"}) "
                   "and use it quoted (\"$RUN_ID\") in the command.")


def _assigned(parsed: PythonFile, call: ast.Call) -> Assigned:
    """What a name held before a line, in the call's function (the nearest assignment)."""
    def assigned(name: str, line: int) -> ast.expr | None:
        before = parsed.flow.at(call).assignments_before(name, line)
        return before[0] if before else None
    return assigned


def _shell_severity(use: Use, always: bool) -> Severity | None:
    """None: a constant command given to a function that always uses a shell (or one whose
    every value is quoted for the shell: the program's own text)."""
    if use.formatted or use.source in _OUTSIDE:
        return "error"
    if string_kind(use.value) == "constant" or is_formatted(use.value):
        return None if always else "info"
    return "warning"


def _shell_message(use: Use) -> str:
    message = f"`{use.name}` runs its command through a shell"
    if use.formatted:
        return message + (f" and the command is built by string formatting{_from(use.source)}"
                          ": any input in it can run other commands.")
    if use.source:
        return message + f" and the command comes{_from(use.source)}."
    if string_kind(use.value) == "constant" or is_formatted(use.value):
        return message + "."
    return message + " with a command that is not a constant."


# --- options -----------------------------------------------------------------------------

# Programs that read a later argument starting with `-` as an option, some of which run
# commands: git's `--upload-pack=CMD`, hg's `--config=alias...`, ssh's
# `-oProxyCommand=CMD`, rsync's `-e CMD`, tar's `--checkpoint-action=exec=CMD`, find's
# `-exec`. A shell is not needed for a value to become an option.
_OPTION_PROGRAMS = frozenset({"git", "hg", "svn", "bzr", "ssh", "scp", "sftp", "rsync",
                              "curl", "wget", "tar", "zip", "unzip", "find", "sendmail"})
# A version-control command run by a variable program (`[vcs, "checkout", rev]`).
_VCS_COMMANDS = frozenset({"clone", "checkout", "fetch", "pull", "push", "archive",
                           "ls-remote", "export", "update"})
_ARGV_VARARGS = frozenset({"asyncio.create_subprocess_exec"})


def _option_injection(parsed: PythonFile) -> Iterator[Report]:
    for call, name in parsed.scope_calls:
        argv = _argv(call, name)
        if not argv or not _takes_options(argv):
            continue
        for before, element in pairwise(argv):
            if isinstance(element, ast.Constant) and element.value == "--":
                break  # everything after `--` is an operand
            if (isinstance(element, ast.Starred) or string_kind(element) == "constant"
                    or _fused_option(element) or _option_value(before)):
                continue
            use = use_of(parsed, call, name, element, "option")
            if use.source is None or _dash_checked(parsed, call, element):
                continue
            severity: Severity = "warning" if use.source in _OUTSIDE else "info"
            yield from _report(parsed, use, severity, (
                f"`{name}` passes a value{_from(use.source)} to `{_program(argv)}` where "
                "it is read as an option if it starts with `-` (argument injection: "
                "`--upload-pack=`, `--config=`, `-oProxyCommand=` run commands)."), (
                "Put \"--\" before the values (e.g. [\"git\", \"checkout\", \"--\", rev]) "
                "or pass them fused to their option (f\"--rev={rev}\"), and reject values "
                "starting with \"-\"."))
            break  # one finding per command
    yield from _split_commands(parsed)


def _split_commands(parsed: PythonFile) -> Iterator[Report]:
    """`run(f"convert {src} {dst}".split())`, `Popen(shlex.split(cmd))`: no shell, but the
    values are split with the command's words."""
    for call, name in parsed.scope_calls:
        if name not in SHELL_PARAM or is_const(keyword_arg(call, "shell"), True):
            continue
        text = _split_text(parsed, call, first_arg(call, "args"))
        if text is None:
            continue
        use = use_of(parsed, call, name, text, "option")
        if not use.formatted or use.source is None:
            continue
        yield from _report(parsed, use, "warning" if use.source in _OUTSIDE else "info", (
            f"`{name}` runs a command built by string formatting{_from(use.source)} and split "
            "into arguments: a value with a space becomes several arguments, and one starting "
            "with `-` an option (argument injection)."), (
            "Build the argument list from the values themselves "
            "([\"convert\", \"--\", src, dst]), never by splitting a formatted string."))


def _split_text(parsed: PythonFile, call: ast.Call, arg: ast.expr | None) -> ast.expr | None:
    """The string a command's argument list is split from (`X.split()`, `shlex.split(X)`,
    or a name assigned one of them)."""
    if isinstance(arg, ast.Name):
        before = parsed.flow.at(call).assignments_before(arg.id, call.lineno)
        arg = before[0] if before else None
    if not isinstance(arg, ast.Call):
        return None
    if isinstance(arg.func, ast.Attribute) and arg.func.attr == "split" and not arg.args:
        return arg.func.value
    if parsed.flow.name_of(arg) == "shlex.split" and arg.args:
        return arg.args[0]
    return None


def _argv(call: ast.Call, name: str) -> list[ast.expr] | None:
    """The argument list of a command run without a shell, when it is written out."""
    if name in _ARGV_VARARGS:
        return list(call.args)
    if name not in SHELL_PARAM or is_const(keyword_arg(call, "shell"), True):
        return None
    arg = first_arg(call, "args")
    return list(arg.elts) if isinstance(arg, ast.List | ast.Tuple) else None


def _takes_options(argv: list[ast.expr]) -> bool:
    program = argv[0]
    if isinstance(program, ast.Constant) and isinstance(program.value, str):
        return _base_program(program.value) in _OPTION_PROGRAMS
    return (len(argv) > 1 and isinstance(argv[1], ast.Constant)
            and argv[1].value in _VCS_COMMANDS)


def _base_program(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".exe")


def _program(argv: list[ast.expr]) -> str:
    program = argv[0]
    if isinstance(program, ast.Constant) and isinstance(program.value, str):
        return _base_program(program.value)
    # A name only: the message never quotes an expression that could hold a secret.
    runner = program.id if isinstance(program, ast.Name) else "a program"
    return f"{runner} {argv[1].value}"  # type: ignore[attr-defined]


def _fused_option(node: ast.expr) -> bool:
    """`f"--rev={rev}"`, `"-r" + rev`, `"--rev=%s" % rev`: the value is the option's."""
    first: ast.expr | None = None
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        first = node.left
    elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
          and node.func.attr == "format"):
        first = node.func.value
    return (isinstance(first, ast.Constant) and isinstance(first.value, str)
            and first.value.startswith("-"))


def _option_value(before: ast.expr) -> bool:
    """After `-C`, `--depth`: most likely that option's value, which a parser does not read
    as an option (quiet where unsure)."""
    return (isinstance(before, ast.Constant) and isinstance(before.value, str)
            and before.value.startswith("-") and "=" not in before.value)


def _dash_checked(parsed: PythonFile, call: ast.Call, element: ast.expr) -> bool:
    """A test of the value for a leading `-` controls the call (`if rev.startswith("-"):
    raise` before it)."""
    names = {n.id for n in walk(element) if isinstance(n, ast.Name)}
    return controls(parsed.flow.at(call), names, call, "no-dash")


# --- SQL ---------------------------------------------------------------------------------

_SQL = re.compile(r"\b(select\b[\s\S]*\bfrom|insert\s+into|update\b[\s\S]*\bset|delete\s+from|"
                  r"drop\s+table|where|explain|order\s+by)\b", re.IGNORECASE)
_QUERY_START = re.compile(r"^\s*(select|insert|update|delete|with)\b", re.IGNORECASE)
# Methods that run SQL: DB-API cursors, SQLAlchemy connections and sessions, Django's
# raw(), pandas. Without SQL text in sight, formatting passed to them is still a warning.
_RUNNERS = frozenset({"execute", "executemany", "executescript", "exec_driver_sql",
                      "read_sql", "read_sql_query", "mogrify", "raw"})
# Django's raw fragments: SQL by definition, keywords or not.
_FRAGMENTS = frozenset({"extra", "RawSQL"})
# Calls that wrap SQL (or run it under a generic name: asyncpg's `fetch*`, databases'
# `fetch_*`): only with SQL text in sight.
_WRAPPERS = frozenset({"text", "exec", "literal_column", "query", "fetch", "fetchrow",
                       "fetchval", "fetch_all", "fetch_one", "fetch_val"}) | _FRAGMENTS
# A quoted placeholder used as a value in SQL (`WHERE name = '%s'`: compared, matched,
# listed or inserted; not prose such as "on platform '%s'") is only ever filled by string
# formatting: a database driver's parameters are never quoted.
_QUOTED_VALUE = re.compile(r"""(=|<>|<|>|\blike|\bin\s*\(|\bvalues\s*\(|,)\s*"""
                           r"""(['"])(%s|%\(\w+\)s|\{\w*\})\2""", re.IGNORECASE)
_SINGLE_QUOTED_PLACEHOLDER = re.compile(r"'(%s|%\(\w+\)s|\{\w*\})'")
# Functions that build SQL: Django's as_sql() and its per-database variants, query builders.
_SQL_FUNCTION = re.compile(r"sql|query|^as_(postgresql|mysql|oracle|sqlite)$", re.IGNORECASE)
_EXTRA_KEYWORDS = ("where", "select", "tables", "order_by")


def _sql_injection(parsed: PythonFile) -> Iterator[Report]:
    reported: set[int] = set()
    for call, name in parsed.scope_calls:
        method = name.rsplit(".", 1)[-1]
        if (method not in _RUNNERS and method not in _WRAPPERS) or name in ("exec", "eval") \
                or (method == "raw" and _module_function(call, parsed)):
            continue
        for arg in _sql_arguments(call, method):
            use = use_of(parsed, call, method, arg, "sql")
            found = _sql_finding(parsed, use, method)
            if found is not None:
                reported.update(id(node) for part in (use.value, *use.chain)
                                for node in walk(part))
                yield from _report(parsed, use, *found)
    for call, name, arg, param, path in _wrapped(parsed, "sql"):
        use = use_of(parsed, call, name, arg, "sql")
        text = literal_text(use.value, parsed.constants)
        if not ((use.formatted and _SQL.search(text)) or use.source in _OUTSIDE):
            continue
        built = ("built by string formatting" if use.formatted else "taken") + _from(use.source)
        reported.update(id(node) for part in (use.value, *use.chain) for node in walk(part))
        yield from _report(parsed, use, "error", (
            f"{path.describe(name, param)}, which runs it as SQL, and the query is {built}: "
            "values in it can change the query (SQL injection)."),
            f"Pass values to `{name}` as parameters of a parameterised query.")
    yield from _sql_elsewhere(parsed, reported)
    yield from _quoted_extras(parsed)
    yield from _placeholders_replaced(parsed)




def _module_function(call: ast.Call, parsed: PythonFile) -> bool:
    """`raw(...)` or `response.raw(...)`: a function imported (or defined) by that name, not a
    method of a Django manager (`Person.objects.raw`): sanic's `raw` is an HTTP body."""
    func = call.func
    return isinstance(func, ast.Name) or (
        isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
        and func.value.id in parsed.aliases)


def _placeholders_replaced(parsed: PythonFile) -> Iterator[Report]:
    """`stmt = stmt.replace(f"%({key})s", value)` in a loop over the parameters: each
    replacement runs on the text the previous ones produced, so a value holding another
    parameter's placeholder is filled in again (mysql-connector-python, CVE-2024-21272)."""
    for call, _name in parsed.calls:
        if not (isinstance(call.func, ast.Attribute) and call.func.attr == "replace"
                and len(call.args) == 2 and isinstance(call.func.value, ast.Name)):
            continue
        placeholder = call.args[0]
        if isinstance(placeholder, ast.Call) and isinstance(placeholder.func, ast.Attribute) \
                and placeholder.func.attr == "encode":
            placeholder = placeholder.func.value
        text = literal_text(placeholder)  # `%(name)s` with the name formatted in
        if not (is_formatted(placeholder) and "%(" in text and ")s" in text
                and _refilled_in_loop(parsed, call, call.func.value.id)):
            continue
        yield (call.args[0], "warning",
               "Query placeholders are filled one at a time with `replace`, each on the text "
               "the previous ones produced: a value that holds another placeholder "
               "(`%(name)s`) is filled in again, so one parameter can put SQL into the query "
               "(SQL injection).",
               "Fill every placeholder in one pass over the original text (re.sub with a "
               "function), or let the driver bind the parameters.")


def _refilled_in_loop(parsed: PythonFile, call: ast.Call, name: str) -> bool:
    """Whether `name = name.replace(...)` (this call) sits in a `for`/`while` body."""
    function = parsed.flow.function_at(call)
    if function is None:
        return False
    for loop in walk(function):
        if not isinstance(loop, ast.For | ast.While):
            continue
        for statement in walk(loop):
            if (isinstance(statement, ast.Assign) and statement.value is call
                    and any(isinstance(t, ast.Name) and t.id == name
                            for t in statement.targets)):
                return True
    return False


# Django's expression API: a class's `template` is SQL, and what its `__init__` passes on
# as keywords (`**extra`) is put into the template by `%`, unescaped.
_EXPRESSION_BASES = ("Func", "Aggregate", "Transform", "Window", "Expression", "Lookup")
_NAMED_QUOTED = re.compile(r"""(['"])%\((\w+)\)s\1""")


def _quoted_extras(parsed: PythonFile) -> Iterator[Report]:
    """`template = "... '%(delimiter)s' ..."` in a Django expression whose `__init__` passes
    its caller's `delimiter` on: Django formats it into the SQL between the quotes
    (CVE-2020-7471). Quiet for names the class fills itself (`'%(function)s'`)."""
    # Each needs a placeholder in the text: one search, before any walk.
    any_quoted = _NAMED_QUOTED.search(parsed.text) is not None
    extras = "%%(" in parsed.text and "self.extra" in parsed.text
    for node in nodes_of(parsed, ast.ClassDef):
        if not isinstance(node, ast.ClassDef):
            continue
        if extras:
            # Mixins too (Django's OracleToleranceMixin has no base): `self.extra` and a
            # template with `%%(...)s` say what it is.
            yield from _extras_formatted(node)
        if not any_quoted or not any(_base_name(b).endswith(_EXPRESSION_BASES) for b in node.bases):
            continue
        passed = _passed_on(node)
        for statement in node.body:
            if not (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant)
                    and isinstance(statement.value.value, str)
                    and any(isinstance(t, ast.Name) and t.id == "template"
                            for t in statement.targets)):
                continue
            for quoted in _NAMED_QUOTED.finditer(statement.value.value):
                if quoted.group(2) in passed:
                    yield (statement.value, "warning",
                           f"The SQL template quotes `{quoted.group(0)}`, which `__init__` "
                           "takes from its caller: Django puts template values into the SQL "
                           "as text, so a quote in the value ends the literal and the rest "
                           "is SQL (SQL injection).",
                           "Pass the value as an expression (`Value(...)`) among the "
                           "function's arguments, so the database binds it.")
                    break


def _extras_formatted(cls: ast.ClassDef) -> Iterator[Report]:
    """`"... %%(expressions)s, %s" % tol` in a Django expression's method, with `tol` from
    `self.extra` (the keywords its caller passed): the value becomes template text, then SQL
    (CVE-2020-9402's Oracle tolerance)."""
    for method in cls.body:
        if not isinstance(method, ast.FunctionDef):
            continue
        from_extra = {target.id for statement in walk(method)
                      if isinstance(statement, ast.Assign) and _reads_extra(statement.value)
                      for target in statement.targets if isinstance(target, ast.Name)}
        for node in walk(method):
            if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod)
                    and isinstance(node.left, ast.Constant)
                    and isinstance(node.left.value, str) and "%%(" in node.left.value):
                continue
            names = sorted(n.id for n in walk(node.right)
                           if isinstance(n, ast.Name) and n.id in from_extra)
            if names or _reads_extra(node.right):
                shown = f"`{names[0]}`, " if names else ""
                yield (node, "warning",
                       f"An SQL template is filled with {shown}a value from the keywords the "
                       "expression's caller passed (`self.extra`): it becomes SQL text, "
                       "unescaped (SQL injection).",
                       "Pass the value as an expression (`Value(...)`) among the function's "
                       "arguments, so the database binds it; or check its type first.")


def _reads_extra(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "extra"
               and isinstance(n.value, ast.Name) and n.value.id == "self"
               for n in walk(node))


def _base_name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def _passed_on(cls: ast.ClassDef) -> set[str]:
    """Keywords `__init__` passes to `super().__init__` from its own parameters."""
    for item in cls.body:
        if isinstance(item, ast.FunctionDef) and item.name == "__init__":
            params = {a.arg for a in (*item.args.args, *item.args.kwonlyargs)}
            return {k.arg for n in walk(item) if isinstance(n, ast.Call)
                    and isinstance(n.func, ast.Attribute) and n.func.attr == "__init__"
                    for k in n.keywords if k.arg and isinstance(k.value, ast.Name)
                    and k.value.id in params}
    return set()


def _sql_elsewhere(parsed: PythonFile, reported: set[int]) -> Iterator[Report]:
    """Queries built by formatting, and templates made for it, wherever they are."""
    templates = _format_templates(nodes_of(parsed, ast.BinOp, ast.Call))
    # Docstrings and other bare strings are never run (bandit's B608 documents
    # `"... WHERE id = '%s'" % x` in its module docstring).
    prose = {id(node.value) for node in nodes_of(parsed, ast.Expr)
             if isinstance(node, ast.Expr)}
    for node in nodes_of(parsed, ast.Constant, ast.BinOp, ast.JoinedStr, ast.Call):
        if id(node) in reported:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            quoted = _SINGLE_QUOTED_PLACEHOLDER.search(node.value)
            if id(node) in templates and quoted \
                    and _SQL_FUNCTION.search(_function_name(parsed, node)):
                # Quote the placeholder, not the template: a clipped template could show
                # part of a secret that redaction no longer recognises.
                yield (node, "warning", "A value is put between quotes in SQL by string "
                                        f"formatting (`{quoted.group(0)}`) in "
                                        f"`{_function_name(parsed, node)}`: a quote in the "
                                        "value ends the literal and the rest is SQL "
                                        "(SQL injection).",
                       "Return the value as a query parameter (`%s` unquoted in the SQL, "
                       "the value in the params list).")
            elif (_SQL.search(node.value) and _QUOTED_VALUE.search(node.value)
                  and id(node) not in prose):
                yield (node, "warning", "This SQL has a quoted placeholder (`'%s'`): it is "
                                        "meant to be filled by string formatting, which lets "
                                        "values change the query (SQL injection).",
                       "Use the driver's parameters, unquoted: \"... WHERE name = %s\" "
                       "with cursor.execute(query, (name,)).")
            continue
        if bound := _binds_into_text(parsed, node):
            yield (node, "warning", "Query parameters are formatted into the SQL text "
                                    f"(`{bound[0]} % {bound[1]}`): each value becomes SQL, "
                                    "not data, so a quote in it changes the query "
                                    "(SQL injection).",
                   "Return the SQL and its params apart and let the driver bind them; a value "
                   "that cannot be bound must be checked or quoted by the backend.")
            continue
        if not isinstance(node, ast.JoinedStr | ast.BinOp | ast.Call) or not is_formatted(node):
            continue
        text = literal_text(node, parsed.constants)
        if _QUERY_START.search(text) and _SQL.search(text):
            reported.update(id(inner) for inner in walk(node))
            yield (node, "warning", "A SQL query is built by string formatting; if it reaches "
                                    "a database with values from input, that is SQL injection.",
                   "Keep the query constant and pass values as parameters.")


# `sql % params`: the names of a query's text and of its bind parameters, exactly (Django's
# `template % template_params` and `lhs_sql % lhs_params` compose SQL, not values).
_SQL_TEXT_NAMES = frozenset({"sql", "query", "stmt", "statement"})
_PARAMS_NAMES = frozenset({"params", "parameters", "args", "sql_params", "query_params"})
# Where a query is filled in to be shown, not run.
_DISPLAY_FUNCTIONS = re.compile(r"^(__str__|__repr__|last_executed_query|mogrify)$|debug")


def _binds_into_text(parsed: PythonFile, node: ast.AST) -> tuple[str, str] | None:
    """`sql % params` (or `% tuple(params)`) outside a function that only displays it: the
    two names."""
    if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Mod):
        return None
    right = node.right
    if (isinstance(right, ast.Call) and isinstance(right.func, ast.Name)
            and right.func.id in ("tuple", "list") and len(right.args) == 1):
        right = right.args[0]
    names = _bare_name(node.left), _bare_name(right)
    if (names[0] in _SQL_TEXT_NAMES and names[1] in _PARAMS_NAMES
            and not _DISPLAY_FUNCTIONS.search(_function_name(parsed, node))):
        return names
    return None


def _bare_name(node: ast.AST) -> str:
    """`sql` for `sql` and for `self.sql`."""
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else ""


def _format_templates(nodes: tuple[ast.AST, ...]) -> set[int]:
    """The string constants that are filled by formatting: `"..." % x`, `"...".format(x)`."""
    found: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            found.add(id(node.left))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "format"):
            found.add(id(node.func.value))
    return found


def _function_name(parsed: PythonFile, node: ast.AST) -> str:
    function = parsed.flow.function_at(node)
    return "" if function is None else function.name


def _sql_arguments(call: ast.Call, method: str) -> list[ast.expr]:
    if method == "extra":
        values = [k.value for k in call.keywords if k.arg in _EXTRA_KEYWORDS]
        return [e for v in values for e in (
            v.elts if isinstance(v, ast.List | ast.Tuple) else
            [x for x in v.values if x is not None] if isinstance(v, ast.Dict) else [v])]
    arg = first_arg(call, "sql") or keyword_arg(call, "statement")
    return [] if arg is None else [arg]


def _sql_finding(parsed: PythonFile, use: Use,
                 method: str) -> tuple[Severity, str, str] | None:
    text = literal_text(use.value, parsed.constants)
    sql = bool(_SQL.search(text)) or method in _FRAGMENTS
    outside = use.source in _OUTSIDE
    suggestion = "Use a parameterised query: cursor.execute(\"... WHERE id = %s\", (value,))."
    if use.formatted:
        if not sql and method not in _RUNNERS:
            return None
        # Parameters passed along: the formatting is probably structure (a table name,
        # a list of placeholders), not values, unless input is in it.
        with_params = len(use.call.args) > 1 or any(
            k.arg in ("params", "parameters", "args") for k in use.call.keywords)
        return ("error" if outside or (sql and not with_params) else "warning",
                f"SQL built by string formatting{_from(use.source)} is passed to `{method}`: "
                "values in it can change the query (SQL injection).", suggestion)
    if outside and method in _RUNNERS:
        return ("error", f"`{method}` runs SQL that comes{_from(use.source)}.", suggestion)
    return None


# --- file paths --------------------------------------------------------------------------

# Calls that open, send, move or delete the path in their first (or first two) arguments.
_PATH_SINKS: dict[str, int] = {
    "open": 1, "builtins.open": 1, "io.open": 1, "codecs.open": 1, "os.open": 1,
    "aiofiles.open": 1, "flask.send_file": 1, "send_file": 1, "flask.helpers.send_file": 1,
    # send_from_directory guards the file name, not the directory.
    "flask.send_from_directory": 1, "send_from_directory": 1,
    "starlette.responses.FileResponse": 1, "fastapi.responses.FileResponse": 1,
    "FileResponse": 1, "aiohttp.web.FileResponse": 1, "aiohttp.web_fileresponse.FileResponse": 1,
    "os.remove": 1, "os.unlink": 1, "os.rmdir": 1, "os.removedirs": 1,
    "shutil.rmtree": 1, "os.listdir": 1, "os.scandir": 1, "os.makedirs": 1, "os.mkdir": 1,
    "shutil.copy": 2, "shutil.copy2": 2, "shutil.copyfile": 2, "shutil.copytree": 2,
    "shutil.move": 2, "os.rename": 2, "os.replace": 2, "os.symlink": 2,
}
# Probes: a path joined from input that is looked at is about to be served or read (and the
# answer says which files exist where they should not). A probe of a path given whole (a
# CA bundle, a config file) is the program doing what it was asked.
_PROBES = frozenset({"os.path.exists", "os.path.lexists", "os.path.isfile", "os.path.isdir",
                     "os.path.getsize", "os.stat", "os.lstat", "os.access"})
_PATH_SINKS.update(dict.fromkeys(_PROBES, 1))
# A wrapper that only makes folders (`ensure_dir(path)`) is not a file opener: following it
# repeated, at every folder an extraction makes, the finding at the file it writes.
_FOLDER_MAKERS = frozenset({"os.makedirs", "os.mkdir"})
_PATH_METHODS = frozenset({"read_text", "read_bytes", "write_text", "write_bytes", "unlink",
                           "rmdir", "mkdir", "save", "touch", "open", "exists", "is_file",
                           "is_dir", "iterdir", "stat"})
_JOINS = frozenset({"os.path.join", "posixpath.join", "pathlib.Path", "Path",
                    "pathlib.PurePath"})
# Calls that look at a path, list a folder or make one without reading, writing or removing
# a file. A folder joined with a parameter is the program's own choice until input reaches
# it: these say nothing worth a finding then (in a library every path is a parameter).
_LOOKS = _PROBES | _FOLDER_MAKERS | {"os.listdir", "os.scandir"}
_LOOK_METHODS = frozenset({"exists", "is_file", "is_dir", "iterdir", "stat", "mkdir"})
# A package's own resources: the package names them (`resource_text("hook-tmpl")`).
_RESOURCE_FOLDERS = frozenset({"importlib.resources.files", "importlib_resources.files"})


def _path_traversal(parsed: PythonFile) -> Iterator[Report]:
    for call, name in parsed.scope_calls:
        for arg in _path_arguments(parsed, call, name):
            use = use_of(parsed, call, name, arg, "path")
            found = _path_finding(parsed, use)
            if found is not None:
                yield from _report(parsed, use, *found)
    for call, name, arg, param, path in _wrapped(parsed, "path"):
        use = use_of(parsed, call, name, arg, "path")
        names = {n.id for n in walk(use.value) if isinstance(n, ast.Name)}
        if use.source not in ("request", "archive") \
                or controls(use.flow, names, use.call, "contained"):
            continue
        yield from _report(parsed, use, "error" if _direct_request(use, parsed) else "warning", (
            f"{path.describe(name, param)}, which uses it as a file path, and the path comes"
            f"{_from(use.source)} without a check that it stays in its folder: `../` in it "
            "reaches any file the process can (path traversal)."),
            "Resolve the path and check it stays under the base folder before passing it on, "
            "or use werkzeug.utils.safe_join / secure_filename.")
    yield from _unsafe_extraction(parsed)
    yield from _prefix_checks(parsed)
    yield from _dot_dot_removal(parsed)


def _path_arguments(parsed: PythonFile, call: ast.Call, name: str) -> list[ast.expr]:
    count = _PATH_SINKS.get(name)
    if count is not None:
        return list(call.args[:count]) or [k.value for k in call.keywords
                                            if k.arg in ("file", "path", "src", "dst")][:1]
    if not (isinstance(call.func, ast.Attribute) and call.func.attr in _PATH_METHODS):
        return []
    receiver = call.func.value
    if isinstance(receiver, ast.Name):
        # `target = Path(base) / name` ... `target.read_text()`
        before = parsed.flow.at(call).assignments_before(receiver.id, call.lineno)
        return [receiver] if before and _is_path_expression(before[0]) else []
    return [receiver] if _is_path_expression(receiver) else []


def _is_path_expression(node: ast.expr) -> bool:
    return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute)
        and ast.unparse(node.func).endswith(("Path", "path.join", "joinpath", "resolve")))


def _path_finding(parsed: PythonFile, use: Use) -> tuple[Severity, str, str] | None:
    if use.source is None or use.source in ("argv", "input", "environment"):
        return None  # a command-line tool opens the files its user names
    names = {n.id for part in (use.value, *use.call.args[:1]) for n in walk(part)
             if isinstance(n, ast.Name)}
    if controls(use.flow, names, use.call, "contained"):
        return None  # normalised and compared with its base folder, before the sink
    suggestion = ("Resolve the path and check it stays under the base folder "
                  "(Path(base, name).resolve().is_relative_to(base)), or use "
                  "werkzeug.utils.safe_join / secure_filename.")
    flag = unruled_flag(use.flow, names, "contained")
    if flag is not None and use.source in ("request", "archive"):
        # A check that runs only under a setting is no check when the setting is off: the
        # severity of no check at all.
        severity: Severity = "error" if use.source == "request" \
            and _direct_request(use, parsed) else "warning"
        return (severity, f"`{use.name}` uses a file path built{_from(use.source)} whose check "
                           "that it stays in its folder runs only when "
                           f"{_condition(flag)}: otherwise `../` in it reaches any "
                           "file the process can (path traversal).",
                "Check every path, whatever the setting (after resolving links if they may "
                "point outside).")
    joined = next(filter(None, (_joined_input(value, use.flow, parsed)
                                for value in (use.value, *use.chain))), None)
    if use.name in _PROBES and joined is None:
        return None
    if use.source == "archive":
        return ("warning", f"`{use.name}` uses a path built{_from(use.source)} without a "
                           "check that it stays in the target folder: a member named "
                           "`../x` or `/x` is written outside it (zip slip).", suggestion)
    if use.source == "request":
        direct = _direct_request(use, parsed)
        return ("error" if direct else "warning",
                f"`{use.name}` uses a file path built{_from(use.source)} without a check that "
                "it stays in its folder: `../` in it reaches any file the process can "
                "(path traversal).", suggestion)
    # A test's parameters are its fixtures' values, which no user chooses.
    if joined is None or parsed.test_code or _resource_lookup(use, parsed) or (
            _looks(use) and not _handed_on(use, parsed)):
        return None
    return ("info", f"`{use.name}` uses a path that joins a folder with `{joined}`, which "
                    "comes from a parameter of the function; if a user can choose it, `../` "
                    "in it escapes the folder.", suggestion)


def _looks(use: Use) -> bool:
    """The call only looks at the path, lists it or makes a folder there."""
    method = use.name.rsplit(".", 1)[-1] if isinstance(use.call.func, ast.Attribute) else ""
    return use.name in _LOOKS or method in _LOOK_METHODS


def _handed_on(use: Use, parsed: PythonFile) -> bool:
    """A looked-at path that the function then returns or gives to another call
    (`if os.path.isfile(path): return self._opener(path)`): a lookup that finds the file
    something else opens."""
    function = parsed.flow.function_at(use.call)
    func = use.call.func
    target = use.call.args[0] if use.call.args else \
        func.value if isinstance(func, ast.Attribute) else None
    if function is None or not isinstance(target, ast.Name):
        return False  # a path made in the call itself is not kept to be handed on
    names = {target.id}
    for node in walk(function):  # `snippet = filename`
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) \
                and node.value.id in names:
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    later = [node for node in walk(function) if getattr(node, "lineno", 0) >= use.call.lineno
             and node is not use.call]
    returned = [node.value for node in later if isinstance(node, ast.Return) and node.value]
    given = [arg for node in later if isinstance(node, ast.Call)
             and parsed.flow.name_of(node) not in _LOOKS for arg in node.args]
    values = [*given, *(e for v in returned for e in (
        v.elts if isinstance(v, ast.Tuple | ast.List) else [v]))]
    return any(isinstance(v, ast.Name) and v.id in names for v in values)


def _resource_lookup(use: Use, parsed: PythonFile) -> bool:
    """The path is a package's resource folder (`importlib.resources.files(pkg)`) joined
    with a name: the package chose the folder, and its callers the names in it."""
    for value in (use.value, *use.chain):
        for node in walk(value):
            base = _join_base(node, parsed)
            if isinstance(base, ast.Name):
                before = use.flow.assignments_before(base.id, use.call.lineno)
                base = before[0] if before else None
            if isinstance(base, ast.Call) and parsed.flow.name_of(base) in _RESOURCE_FOLDERS:
                return True
    return False


def _join_base(node: ast.AST, parsed: PythonFile) -> ast.expr | None:
    """The folder a path expression starts from."""
    if isinstance(node, ast.Call) and parsed.flow.name_of(node) in _JOINS and node.args:
        return node.args[0]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "joinpath":
        return node.func.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return node.left
    return None


def _condition(test: ast.expr) -> str:
    """An `if` test in words: a (negated) dotted name as it is, anything else by its line
    (a message quotes names, never expressions that could hold data)."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    node = test.operand if isinstance(test, ast.UnaryOp) and negated else test
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return f"the condition on line {test.lineno} holds"
    return f"`{'not ' if negated else ''}{'.'.join([node.id, *reversed(parts)])}`"


def _direct_request(use: Use, parsed: PythonFile) -> bool:
    """The path holds request data itself, not only a handler's parameters."""
    return source_of(use.value, Flow(tainted={}), parsed.flow.name_of, "path") == "request" \
        or any(use.flow.source(n.id, "path") == "request" for n in walk(use.value)
        if isinstance(n, ast.Name))


def _joined_input(value: ast.expr, flow: Flow, parsed: PythonFile) -> str | None:
    """The name of the input a path puts after its base (join(), joinpath(), `/`, `+`, an
    f-string), if any. `join(folder, "setup.cfg")` with the folder from a parameter is the
    program's choice."""
    return next((n.id for node in walk(value) for part in _joined_parts(node, parsed)
                 for n in walk(part) if _tainted(n, flow) and isinstance(n, ast.Name)), None)


def _joined_parts(node: ast.AST, parsed: PythonFile) -> list[ast.AST]:
    """What a path expression puts after its base."""
    if isinstance(node, ast.Call) and parsed.flow.name_of(node) in _JOINS:
        return list(node.args[1:])
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "joinpath":
        return list(node.args)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return [node.right]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        # `"${" + key + "}"` builds text; `"/srv/files/" + name` or `root + name` a path.
        text = isinstance(node.left, ast.Constant | ast.JoinedStr) \
            and not re.search(r"[/\\]", literal_text(node.left))
        return [] if text else [node.right]
    if isinstance(node, ast.JoinedStr) and "/" in literal_text(node):
        return [v for v in node.values[1:] if isinstance(v, ast.FormattedValue)]
    return []


def _tainted(node: ast.AST, flow: Flow) -> bool:
    return any(isinstance(n, ast.Name) and flow.source(n.id, "path") is not None
               for n in walk(node))


def _joined_names(function: ast.AST, parsed: PythonFile) -> set[str]:
    """The names a function puts after a base folder with a path join (`join()`,
    `joinpath()`, `/`; not `+` or an f-string, which build any kind of text)."""
    return {n.id for node in walk(function)
            if not isinstance(node, ast.JoinedStr)
            and not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add))
            for part in _joined_parts(node, parsed)
            for n in walk(part) if isinstance(n, ast.Name)}


_PREFIX = frozenset({"os.path.commonprefix", "posixpath.commonprefix", "ntpath.commonprefix",
                     "commonprefix"})


def _prefix_checks(parsed: PythonFile) -> Iterator[Report]:
    """`commonprefix(...) == base` as a containment check: it compares characters."""
    for node in nodes_of(parsed, ast.Compare):
        if not isinstance(node, ast.Compare):
            continue
        if any(isinstance(side, ast.Call) and parsed.flow.name_of(side) in _PREFIX
               for side in (node.left, *node.comparators)):
            yield (node, "warning", "`commonprefix` compares characters, not path parts: "
                                    "`/srv/static-private/key` shares the prefix "
                                    "`/srv/static`, so this check lets paths out of the "
                                    "folder (path traversal).",
                   "Compare whole parts: os.path.commonpath([path, base]) == base, or "
                   "Path(path).is_relative_to(base).")


def _dot_dot_removal(parsed: PythonFile) -> Iterator[Report]:
    """`name.replace("..", ...)` on a name later joined to a folder: a blacklist, not a
    containment check."""
    for call, _name in parsed.calls:
        if not (isinstance(call.func, ast.Attribute) and call.func.attr == "replace"
                and call.args and isinstance(call.args[0], ast.Constant)
                and isinstance(call.args[0].value, str) and ".." in call.args[0].value):
            continue
        function = parsed.flow.function_at(call)
        if function is None:
            continue
        receivers = {n.id for n in walk(call.func.value) if isinstance(n, ast.Name)}
        if receivers & _joined_names(function, parsed):
            yield (call, "warning", "Removing `..` from a name does not keep the path in its "
                                    "folder: an absolute path (`/etc/passwd`), a drive "
                                    "(`C:`) or a backslash still escapes it (path "
                                    "traversal).",
                   "Join, resolve, and check the result stays under the folder "
                   "(Path(base, name).resolve().is_relative_to(base)), or keep only "
                   "os.path.basename(name).")


def _unsafe_extraction(parsed: PythonFile) -> Iterator[Report]:
    modules = {alias.split(".")[0] for alias in parsed.aliases.values()}
    if not modules & {"tarfile", "shutil"}:
        return
    for call, name in parsed.calls:
        # `shutil.unpack_archive` extracts a tar archive with tarfile, filter or not.
        unpacks = name == "shutil.unpack_archive" or ("tarfile" in modules and isinstance(
            call.func, ast.Attribute) and call.func.attr in ("extractall", "extract"))
        if unpacks and not any(k.arg in ("filter", "members") for k in call.keywords):
            yield (call, "warning", "Extracting a tar archive without a filter writes wherever "
                                    "its members say: `../`, absolute paths and links escape "
                                    "the target folder.",
                   "Pass filter=\"data\" (Python 3.12+, backported to 3.8+) or check each "
                   "member's resolved path before extracting it.")


# --- HTML --------------------------------------------------------------------------------

_MARK_SAFE = frozenset({
    "django.utils.safestring.mark_safe", "mark_safe", "markupsafe.Markup", "jinja2.Markup",
    "flask.Markup", "Markup", "django.utils.safestring.SafeString", "SafeString"})
_FORMAT_HTML = frozenset({"django.utils.html.format_html", "format_html"})
_TEMPLATE_STRINGS = frozenset({"flask.render_template_string", "render_template_string",
                               "jinja2.Template"})
_RESPONSES = frozenset({
    "django.http.HttpResponse", "HttpResponse", "flask.make_response", "make_response",
    "flask.Response", "werkzeug.Response", "werkzeug.wrappers.Response",
    "starlette.responses.HTMLResponse", "fastapi.responses.HTMLResponse", "HTMLResponse"})
# Calls that send a file to a browser, which renders it as its type says.
_SENDERS = frozenset({"flask.send_file", "send_file", "flask.send_from_directory",
                      "send_from_directory", "starlette.responses.FileResponse",
                      "fastapi.responses.FileResponse", "FileResponse",
                      "aiohttp.web.FileResponse", "django.http.FileResponse"})
_HTML = re.compile(r"<\s*/?\s*[a-zA-Z]")
_ESCAPE_HINT = ("Escape the values (format_html(\"<b>{}</b>\", value), markupsafe.escape) "
                "or render a template with autoescaping.")


def _xss(parsed: PythonFile) -> Iterator[Report]:
    for call, name in parsed.scope_calls:
        if name in ("jinja2.Environment", "jinja2.environment.Environment"):
            yield from _jinja_environment(parsed, call)
            continue
        if name.endswith(".from_string"):
            name = "jinja2.Template"  # Environment.from_string
        arg = first_arg(call, "source")
        if arg is None or not (name in _MARK_SAFE or name in _FORMAT_HTML
                               or name in _TEMPLATE_STRINGS or name in _RESPONSES):
            continue
        use = use_of(parsed, call, name, arg, "html")
        found = _html_finding(use)
        if found is not None:
            yield from _report(parsed, use, found[0], found[1], _ESCAPE_HINT)
    yield from _html_elsewhere(parsed)


# Markup a browser acts on: a document, links, scripts, forms, frames, images.
_HTML_MARKUP = re.compile(r"<\s*(html|body|script|a\s[^>]*href|form|iframe|img\s[^>]*src|"
                          r"meta\s[^>]*url)\b", re.IGNORECASE)
_ESCAPES = frozenset({"escape", "html.escape", "markupsafe.escape", "django.utils.html.escape",
                      "cgi.escape", "xml.sax.saxutils.escape", "quoteattr", "format_html",
                      "bleach.clean", "urllib.parse.quote", "quote"})


def _html_elsewhere(parsed: PythonFile) -> Iterator[Report]:
    """HTML a browser acts on (links, scripts, refreshes) built by formatting with input
    that no escape function went through."""
    for node in nodes_of(parsed, ast.JoinedStr, ast.BinOp, ast.Call):
        if not isinstance(node, ast.JoinedStr | ast.BinOp | ast.Call) or not is_formatted(node):
            continue
        if not _HTML_MARKUP.search(literal_text(node, parsed.constants)):
            continue
        flow = parsed.flow.at(node)
        values = [n for n in walk(node) if isinstance(n, ast.Name)
                  and not _escaped(n, node, parsed)]
        sources = [source_of(n, flow, parsed.flow.name_of, "html") for n in values]
        outside = [s for s in sources if s in _OUTSIDE] or (
            ["request"] if flow.handler and any(sources) else [])
        if not outside or _written_to_text_files(node, parsed):
            continue
        yield (node, "warning", f"HTML is built by formatting with values{_from(outside[0])} "
                                "that are not escaped: markup in them runs in the page (XSS).",
               _ESCAPE_HINT)


def _escaped(name: ast.Name, root: ast.AST, parsed: PythonFile) -> bool:
    """The name is an argument of an escape call inside `root`."""
    return any(isinstance(call, ast.Call) and parsed.flow.name_of(call) in _ESCAPES
               and any(n is name for arg in call.args for n in walk(arg))
               for call in walk(root))


def _html_finding(use: Use) -> tuple[Severity | None, str] | None:
    if string_kind(use.value) == "constant":
        return None
    outside = use.source in _OUTSIDE
    name = use.name.rsplit(".", 1)[-1]
    if use.name in _FORMAT_HTML:
        if not use.formatted:
            return None
        return ("error" if outside else "warning",
                f"`{name}` gets HTML already built by formatting{_from(use.source)}: it "
                "escapes only its own arguments, so the values in it are not escaped (XSS).")
    if use.name in _TEMPLATE_STRINGS:
        if not (use.formatted or outside):
            return None
        return ("error" if outside else "warning",
                f"`{name}` renders a template built{_from(use.source)}: input in it is "
                "template code (server-side template injection, XSS).")
    if use.name in _RESPONSES:
        if not (outside and use.formatted and _HTML.search(literal_text(use.value))):
            return None
        return ("error" if use.source == "request" else "warning",
                f"`{name}` returns HTML built{_from(use.source)} without escaping (XSS).")
    if use.formatted or outside:
        return ("error" if outside else "warning",
                f"`{name}` marks text built{_from(use.source)} as safe HTML: input in it is "
                "not escaped (XSS).")
    if is_formatted(use.value):
        return None  # every value in it is escaped
    return ("info", f"`{name}` marks a value as safe HTML; check nothing in it comes from "
                    "input.")


def _jinja_environment(parsed: PythonFile, call: ast.Call) -> Iterator[Report]:
    autoescape = keyword_arg(call, "autoescape")
    if autoescape is not None and not is_const(autoescape, False):
        return
    if _renders_text_only(parsed, call):
        return
    yield (call, "warning", "A Jinja2 Environment without autoescape renders values into "
                            "HTML unescaped (XSS).",
           "Pass autoescape=jinja2.select_autoescape() (or True for HTML-only templates).")


# Names of files (or templates) whose text is not HTML: Markdown release notes, a comment
# body, a config file. A template's own extension after it (`notes.md.j2`) is looked through.
_TEXT_FILE = re.compile(r"\.(md|markdown|rst|txt|text|py|toml|ya?ml|json|cfg|ini|sh|csv)"
                        r"(\.(j2|jinja2?|tmpl|tpl))?$", re.IGNORECASE)
_TEMPLATE_GETTERS = frozenset({"from_string", "get_template", "select_template",
                               "get_or_select_template"})


def _renders_text_only(parsed: PythonFile, environment: ast.Call) -> bool:
    """Every template the Environment renders is text, not HTML (a constant without tags, a
    `.md` or `.txt` name), and nothing in the module serves a page: a template's name
    alone cannot make HTML that a web handler returns into text."""
    if parsed.tree is None or _serves_pages(parsed):
        return False
    parents = _parents(parsed)
    holder = parents.get(id(environment))
    if isinstance(holder, ast.Attribute):
        return _text_template(parsed, parents.get(id(holder)), holder)
    function = parsed.flow.function_at(environment)
    # Passed on, returned, kept at module level or on an object: other code may render it.
    if function is None or not (isinstance(holder, ast.Assign) and len(holder.targets) == 1
                                and isinstance(holder.targets[0], ast.Name)):
        return False
    target = holder.targets[0].id
    uses = [n for n in walk(function) if isinstance(n, ast.Name) and n.id == target
            and isinstance(n.ctx, ast.Load)]
    return bool(uses) and all(_text_template(parsed, parents.get(id(parents.get(id(use)))),
                                             parents.get(id(use))) for use in uses)


def _text_template(parsed: PythonFile, call: ast.AST | None, attribute: ast.AST | None) -> bool:
    """`env.get_template("notes.md")`, `env.from_string(NOTES)` with no tags in it, or an
    environment's setting (`env.filters[...]`): nothing that makes HTML."""
    if not isinstance(attribute, ast.Attribute):
        return False
    if attribute.attr not in _TEMPLATE_GETTERS:
        return not isinstance(call, ast.Call) or call.func is not attribute \
            or attribute.attr not in ("render", "stream", "generate", "render_async")
    if not (isinstance(call, ast.Call) and call.func is attribute and call.args):
        return False
    source = call.args[0]
    if attribute.attr == "from_string":
        known = isinstance(source, ast.Constant) or (
            isinstance(source, ast.Name) and source.id in parsed.constants)
        return known and not _HTML.search(literal_text(source, parsed.constants))
    names = source.elts if isinstance(source, ast.List | ast.Tuple) else [source]
    return all(isinstance(n, ast.Constant) and isinstance(n.value, str)
               and _TEXT_FILE.search(n.value) is not None for n in names)


def _serves_pages(parsed: PythonFile) -> bool:
    """The module has a web handler, makes a response or sends a file."""
    served = parsed.memo.get("serves_pages")
    if isinstance(served, bool):
        return served
    parsed.memo["serves_pages"] = served = _finds_page(parsed)
    return served


def _finds_page(parsed: PythonFile) -> bool:
    for node in walk(cast(ast.Module, parsed.tree)):
        if isinstance(node, ast.Call) and parsed.flow.name_of(node) in _RESPONSES | _SENDERS:
            return True
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) \
                and parsed.flow.at(node.body[0]).handler:
            return True
    return False


def _parents(parsed: PythonFile) -> dict[int, ast.AST]:
    parents = parsed.memo.get("parents")
    if not isinstance(parents, dict):
        parents = {id(child): node for node in walk(cast(ast.Module, parsed.tree))
                   for child in ast.iter_child_nodes(node)}
        parsed.memo["parents"] = parents
    return cast(dict[int, ast.AST], parents)


def _written_to_text_files(node: ast.AST, parsed: PythonFile) -> bool:
    """HTML assigned to a name that its function only writes to files with a text name
    (`body` written to `.pr-comment.md`): a Markdown file or a comment body, not a page,
    in a module that serves none (a file's name cannot make HTML a view sends into text:
    `send_file("notes.md", mimetype="text/html")`)."""
    if _serves_pages(parsed):
        return False
    assign = _parents(parsed).get(id(node))
    function = parsed.flow.function_at(node)
    if function is None or not (isinstance(assign, ast.Assign) and len(assign.targets) == 1
                                and isinstance(assign.targets[0], ast.Name)):
        return False
    name, flow = assign.targets[0].id, parsed.flow.at(node)
    files = {item.optional_vars.id: item.context_expr for statement in walk(function)
             if isinstance(statement, ast.With | ast.AsyncWith) for item in statement.items
             if isinstance(item.optional_vars, ast.Name)
             and isinstance(item.context_expr, ast.Call)
             and parsed.flow.name_of(item.context_expr) in ("open", "builtins.open", "io.open")}
    uses = [n for n in walk(function) if isinstance(n, ast.Name) and n.id == name
            and isinstance(n.ctx, ast.Load)]
    writes = [call for call in walk(function) if isinstance(call, ast.Call)
              and isinstance(call.func, ast.Attribute) and call.func.attr == "write"
              and isinstance(call.func.value, ast.Name) and call.func.value.id in files
              and len(call.args) == 1 and isinstance(call.args[0], ast.Name)
              and call.args[0].id == name]
    if not uses or len(uses) != len(writes):
        return False
    opened = [files[cast(ast.Name, cast(ast.Attribute, w.func).value).id] for w in writes]
    return all(_text_file(call, flow, parsed) for call in opened)


def _text_file(opened: ast.Call, flow: Flow, parsed: PythonFile) -> bool:
    path = first_arg(opened, "file")
    if isinstance(path, ast.Name):
        before = flow.assignments_before(path.id, opened.lineno)
        path = before[0] if before else None
    return path is not None and bool(
        _TEXT_FILE.search(literal_text(path, parsed.constants).rstrip()))


RULES = (
    rule("python.shell-injection", "Command run through a shell", "warning", "security",
         "shell=True with a formatted command lets input run other commands.",
         _shell_injection,
         (line_pattern(r"\b(os\.(system|popen)|commands\.getoutput)\s*\((?!\s*(['\"])[^'\"]*\3"
                       r"\s*\))|shell\s*=\s*True", "A command is run through a shell.",
                       "warning", formatted="error"),), levels=("info", "warning", "error")),
    rule("python.option-injection", "Input read as a command's option", "warning", "security",
         "A value starting with `-` is an option to git, hg, ssh and the like, and some "
         "options run commands.", _option_injection, levels=("info", "warning")),
    rule("python.sql-injection", "SQL built by string formatting", "warning", "security",
         "Formatted SQL lets values change the query.", _sql_injection,
         (line_pattern(r"\.execute(many)?\s*\(\s*(f[\"']|[\"'][^\"']*[\"']\s*[%+]|"
                       r"[\"'][^\"']*[\"']\.format)", "A query built by formatting is run.",
                       "warning"),), levels=("warning", "error")),
    rule("python.path-traversal", "File path from input", "warning", "security",
         "A path from a request, used without a check, reaches files outside its folder.",
         _path_traversal,
         (line_pattern(r"\b(open|send_file|send_from_directory)\s*\(.*\brequest\.",
                       "A file path comes from request data."),),
         levels=("info", "warning", "error")),
    rule("python.xss", "HTML from input without escaping", "warning", "security",
         "Text marked safe or rendered as a template is not escaped.", _xss,
         (line_pattern(r"\b(mark_safe|Markup|render_template_string)\s*\(\s*[^\s'\")]",
                       "A non-constant value is marked safe or rendered as a template."),),
         levels=("info", "warning", "error")),
)


# --- the module's own wrappers of the sinks above -------------------------------------------

def _shell_sink(call: ast.Call, name: str) -> list[ast.expr]:
    shell = shell_command(call, name)
    return [shell.command] if shell is not None and shell.sure else []


def _sql_sink(call: ast.Call, name: str) -> list[ast.expr]:
    method = name.rsplit(".", 1)[-1]
    return _sql_arguments(call, method) if method in _RUNNERS else []


def _path_sink(call: ast.Call, name: str) -> list[ast.expr]:
    count = _PATH_SINKS.get(name)
    return list(call.args[:count]) if count and name not in _PROBES | _FOLDER_MAKERS else []


_SINKS: dict[Kind, SinkArguments] = {"shell": _shell_sink, "sql": _sql_sink, "path": _path_sink}
# Words a module's text holds when it can call a sink of the kind (a file opener is in
# almost every module: no gate). Substrings, not words: a gate may let a module through, it
# must never keep one out.
_SINK_WORDS: dict[Kind, tuple[str, ...]] = {
    # `sh` holds every shell's name and `shell=`; `exec` the exec family and `-c` lists'
    # launchers' (`create_subprocess_exec`).
    "shell": ("system", "popen", "getoutput", "spawn", "exec", "sh", "cmd", "powershell"),
    "sql": tuple(sorted(_RUNNERS)),
}


def _kinds_in(text: str) -> frozenset[Kind]:
    return frozenset(kind for kind in _SINKS
                     if kind not in _SINK_WORDS or any(w in text for w in _SINK_WORDS[kind]))


def _wrapped(parsed: PythonFile,
             kind: Kind) -> Iterator[tuple[ast.Call, str, ast.expr, str, SinkPath]]:
    """Calls of the module's own functions, or of functions it imports from the project's
    other modules, whose argument reaches a sink of the kind."""
    if parsed.tree is None:
        return
    wrappers = _module_wrappers(parsed)
    for call, name in parsed.scope_calls:
        found = list(wrappers.at(kind, call))
        imported = _imported(parsed, call) if not found else None
        if imported is not None:
            found = list(imported[0].at(kind, call, imported[1]))
        for arg, param, path in found:
            yield call, name, arg, param, path


def _module_wrappers(parsed: PythonFile) -> Wrappers:
    """The checked file's own functions as wrappers (its own `shell` is not a remote one)."""
    wrappers = parsed.memo.get("wrappers")
    if not isinstance(wrappers, Wrappers):
        wrappers = Wrappers(cast(ast.Module, parsed.tree), parsed.flow.name_of, _SINKS,
                            kinds=_kinds_in(parsed.text) if parsed.text else None,
                            normalise=parsed.shapes.normalised)
        parsed.memo["wrappers"] = wrappers
    return wrappers


def _imported(parsed: PythonFile, call: ast.Call) -> tuple[Wrappers, str] | None:
    """The wrappers of the project module a call's function comes from, and the function's
    name there, when the call hands it formatted text or outside input; asked once a call."""
    followed = _followed(parsed)
    target = followed.get(id(call))
    if target is None:
        return None
    return defining_module(parsed.project, target, _SINKS, _kinds_in)


def _followed(parsed: PythonFile) -> dict[int, Target]:
    """The calls of the file's scope worth following into a project module, each with its
    target; all their modules read in one batch."""
    followed = parsed.memo.get("followed")
    if isinstance(followed, dict):
        return cast(dict[int, Target], followed)
    aliases = project_aliases(cast(ast.Module, parsed.tree), parsed.path)
    found: dict[int, Target] = {}
    for call, _name in parsed.scope_calls:
        target = target_of(call, aliases)
        if target is not None and is_project_module(parsed.project, target.module) \
                and any(_worth_following(parsed, call, arg) for arg in
                        (*call.args, *(k.value for k in call.keywords))):
            found[id(call)] = target
    parsed.project.prefetch([path for target in found.values()
                             for path in candidates(target.module)])
    parsed.memo["followed"] = found
    return found


def _worth_following(parsed: PythonFile, call: ast.Call, arg: ast.expr) -> bool:
    """Whether an argument may carry formatted text or outside input, by its syntax alone
    (no flow: most calls are not followed, and a flow costs milliseconds): formatted here,
    read from a request, the command line or the environment, or a name the function
    assigns such a value."""
    if is_formatted(arg) or _reads_outside(arg):
        return True
    if not isinstance(arg, ast.Name):
        return False
    function = enclosing_function(cast(ast.Module, parsed.tree), call.lineno)
    if function is None:
        return False
    memo = cast(dict[int, set[str]], parsed.memo.setdefault("assigned_input", {}))
    if id(function) not in memo:
        memo[id(function)] = {
            target.id for node in walk(function) if isinstance(node, ast.Assign)
            and (is_formatted(node.value) or _reads_outside(node.value))
            for target in node.targets if isinstance(target, ast.Name)}
    return arg.id in memo[id(function)]


def _reads_outside(node: ast.AST) -> bool:
    return any((isinstance(n, ast.Name) and n.id == "request")
               or (isinstance(n, ast.Attribute) and n.attr in ("argv", "environ"))
               for n in walk(node))
