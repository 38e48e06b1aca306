"""Shell and option injection in Python: a command run through a shell (here, on a remote
host, or as a scheduler's templated command) built from input or by formatting, and a value
read as a command's option (git, ssh and the like, where some options run commands)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from itertools import pairwise

from reviewbot.code.python_walk import walk
from reviewbot.lazy_re import lazy_re
from reviewbot.levels import Severity
from reviewbot.rules.python_ast import (
    PythonFile,
    Report,
    first_arg,
    is_const,
    keyword_arg,
    line_pattern,
    rule,
    string_kind,
)
from reviewbot.rules.python_guards import controls
from reviewbot.rules.python_sinks import module_wrappers, wrapped
from reviewbot.rules.python_strings import is_formatted, literal_text
from reviewbot.rules.python_uses import LOWERED, OUTSIDE, Use, from_source, report_use, use_of
from reviewbot.rules.shell_commands import SHELL_PARAM, Assigned, shell_command


def shell_injection(parsed: PythonFile) -> Iterator[Report]:
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
            severity = LOWERED[severity]
        yield from report_use(parsed, use, severity, _shell_message(use), (
            "Pass a list of arguments without shell=True (e.g. subprocess.run([\"tool\", arg], "
            "check=True)); use shlex.quote only as a last resort."))


    for call, name, arg, param, path in wrapped(parsed, "shell"):
        use = use_of(parsed, call, name, arg, "shell")
        if not (use.formatted or use.source in OUTSIDE):
            continue  # a value passed along: the wrapper's own call site is where it is built
        what = ("the command is built by string formatting" if use.formatted else
                "the command comes") + from_source(use.source)
        yield from report_use(parsed, use, "error", (
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
                or not call.args or module_wrappers(parsed).defines(method):
            continue
        use = use_of(parsed, call, name, call.args[0], "shell")
        severity = _shell_severity(use, True)
        if severity is None or not (use.formatted or use.source in OUTSIDE):
            continue
        yield from report_use(parsed, use, LOWERED[severity], (
            f"`{name}` runs its command in a shell at the other end (an SSH server, a "
            f"device){' and the command is built by string formatting' if use.formatted else ''}"
            f"{from_source(use.source)}: any input in it can run other commands there."),
            "Quote every value with shlex.quote, or check it against an allow list, before "
            "it goes into the command.")


# A shell command that a scheduler renders as a template before running it (Airflow's
# BashOperator), and the template values whoever triggers a run chooses.
_TEMPLATED_COMMAND_KEYWORDS = frozenset({"bash_command"})


_TRIGGER_VALUE = lazy_re(r"\{\{-?\s*(?P<name>(?:dag_run|params|run_id)\b[^}]*?)\s*-?\}\}")


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
    if use.formatted or use.source in OUTSIDE:
        return "error"
    if string_kind(use.value) == "constant" or is_formatted(use.value):
        return None if always else "info"
    return "warning"


def _shell_message(use: Use) -> str:
    message = f"`{use.name}` runs its command through a shell"
    if use.formatted:
        return message + (f" and the command is built by string formatting{from_source(use.source)}"
                          ": any input in it can run other commands.")
    if use.source:
        return message + f" and the command comes{from_source(use.source)}."
    if string_kind(use.value) == "constant" or is_formatted(use.value):
        return message + "."
    return message + " with a command that is not a constant."


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


def option_injection(parsed: PythonFile) -> Iterator[Report]:
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
            severity: Severity = "warning" if use.source in OUTSIDE else "info"
            yield from report_use(parsed, use, severity, (
                f"`{name}` passes a value{from_source(use.source)} to `{_program(argv)}` where "
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
        yield from report_use(parsed, use, "warning" if use.source in OUTSIDE else "info", (
            f"`{name}` runs a command built by string formatting{from_source(use.source)} "
            "and split "
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


RULES = (
    rule("python.shell-injection", "Command run through a shell", "warning", "security",
         "shell=True with a formatted command lets input run other commands.",
         shell_injection,
         (line_pattern(r"\b(os\.(system|popen)|commands\.getoutput)\s*\((?!\s*(['\"])[^'\"]*\3"
                       r"\s*\))|shell\s*=\s*True", "A command is run through a shell.",
                       "warning", formatted="error"),), levels=("info", "warning", "error")),
    rule("python.option-injection", "Input read as a command's option", "warning", "security",
         "A value starting with `-` is an option to git, hg, ssh and the like, and some "
         "options run commands.", option_injection, levels=("info", "warning")),
)
