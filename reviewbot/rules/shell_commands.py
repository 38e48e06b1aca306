"""Which expression a call runs through a shell, whatever shape the call has.

`os.system(cmd)` and `subprocess.run(cmd, shell=True)` hand `cmd` to a shell; so does an
argument list that starts a shell with its command (`["sh", "-c", cmd]`, `["bash", "-lc",
cmd]`, `["cmd", "/c", cmd]`), given to `subprocess`, the `os.exec*`/`os.spawn*` family,
`os.posix_spawn`, `pty.spawn` or `asyncio.create_subprocess_exec`, or run under `env`,
`sudo` or `busybox`. A call's other shapes (`shell=1`, `**{"shell": True}`, `partial`, a name
bound to `subprocess.run`) are already plain when they reach here (rules/python_calls.py).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

import msgspec

from reviewbot.lazy_re import lazy_re

SHELL_PARAM = frozenset({"subprocess.run", "subprocess.call", "subprocess.check_call",
                         "subprocess.check_output", "subprocess.Popen"})
SHELL_METHODS = frozenset(name.rsplit(".", 1)[-1] for name in SHELL_PARAM)
ALWAYS_SHELL = frozenset({
    "os.system", "os.popen", "os.popen2", "os.popen3", "os.popen4", "subprocess.getoutput",
    "subprocess.getstatusoutput", "commands.getoutput", "commands.getstatusoutput",
    "asyncio.create_subprocess_shell", "popen2.popen2", "popen2.popen3", "pty.spawn"})
# Where each program-running call takes its program, and its arguments: a list whose first
# element is the program's own name (index), or one by one from an index (None, index).
_ARGV_CALLS: dict[str, tuple[int, int | None, int]] = {
    "os.execv": (0, 1, 0), "os.execve": (0, 1, 0), "os.execvp": (0, 1, 0),
    "os.execvpe": (0, 1, 0), "os.execl": (0, None, 2), "os.execle": (0, None, 2),
    "os.execlp": (0, None, 2), "os.execlpe": (0, None, 2),
    "os.spawnv": (1, 2, 0), "os.spawnve": (1, 2, 0), "os.spawnvp": (1, 2, 0),
    "os.spawnvpe": (1, 2, 0), "os.spawnl": (1, None, 3), "os.spawnle": (1, None, 3),
    "os.spawnlp": (1, None, 3), "os.spawnlpe": (1, None, 3),
    "os.posix_spawn": (0, 1, 0), "os.posix_spawnp": (0, 1, 0),
    "asyncio.create_subprocess_exec": (0, None, 1), "pty.spawn": (0, 0, 0),
}
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh",
                     "yash", "posh"})
# A shell's option group that holds `c` (`-c`, `-lc`, `-ec`, `-xc`): its command follows.
_SHELL_COMMAND_OPTION = lazy_re(r"^-[a-zA-Z]*c[a-zA-Z]*$")
_WINDOWS_SHELLS: dict[str, re.Pattern[str]] = {
    "cmd": re.compile(r"^/[ck]$", re.IGNORECASE),
    "powershell": re.compile(r"^-(c|command|encodedcommand|e|ec)$", re.IGNORECASE),
    "pwsh": re.compile(r"^-(c|command|encodedcommand|e|ec)$", re.IGNORECASE),
}
# Programs that run the rest of their arguments as a command.
_LAUNCHERS = frozenset({"env", "busybox", "sudo", "doas", "nohup", "nice", "command", "exec",
                        "stdbuf", "setsid", "xargs", "timeout"})

# What a name held before a line (the flow's nearest assignment), for an argument list kept
# in a variable; None where no flow is at hand.
Assigned = Callable[[str, int], ast.expr | None]


class ShellCommand(msgspec.Struct, frozen=True):
    """The command a call runs through a shell, and how sure that is."""

    command: ast.expr
    # A shell whatever the command (os.system, `sh -c`): a constant command is no risk.
    always: bool
    # The call is a shell: an import ties it to subprocess or os (a bare `Popen(...,
    # shell=True)` may be anything's), and its shell flag is known to be true.
    sure: bool


def shell_command(call: ast.Call, name: str, assigned: Assigned | None = None) -> (
        ShellCommand | None):
    """The command the call hands to a shell, if it does."""
    listed = name == "pty.spawn" and isinstance(_first(call, "argv"), ast.List | ast.Tuple)
    if name in ALWAYS_SHELL and not listed:
        command = _first(call, "cmd")
        return None if command is None else ShellCommand(command, always=True, sure=True)
    shell = next((k.value for k in call.keywords if k.arg == "shell"), None)
    method = name.rsplit(".", 1)[-1]
    if shell is not None and not _false(shell) and (name in SHELL_PARAM
                                                     or method in SHELL_METHODS):
        command = _first(call, "args")
        flag = isinstance(shell, ast.Constant) and shell.value is True
        if command is None:
            return None
        # A flag this cannot read (`shell=use_shell`) may be true: one level lower.
        return ShellCommand(command, always=False, sure=flag and name in SHELL_PARAM)
    argv = _argument_list(call, name, assigned)
    command = _shell_argument(argv) if argv else None
    return None if command is None else ShellCommand(command, always=True, sure=True)


def _first(call: ast.Call, keyword: str) -> ast.expr | None:
    if call.args:
        return None if isinstance(call.args[0], ast.Starred) else call.args[0]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def _false(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and not node.value


def _argument_list(call: ast.Call, name: str,
                   assigned: Assigned | None) -> list[ast.expr] | None:
    """The program and its arguments as the call gives them, when they are written out."""
    if name in SHELL_PARAM:
        argv = _elements(_first(call, "args"), call.lineno, assigned)
        executable = next((k.value for k in call.keywords if k.arg == "executable"), None)
        if argv and executable is not None:
            argv = [executable, *argv[1:]]
        return argv
    where = _ARGV_CALLS.get(name)
    if where is None:
        return None
    program, listed, first = where
    if len(call.args) <= program or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    if listed is None:
        return [call.args[program], *call.args[first:]]
    argv = _elements(call.args[listed] if len(call.args) > listed else None,
                     call.lineno, assigned)
    if not argv or program == listed:
        return argv or None  # `pty.spawn(argv)`: the list names its program itself
    return [call.args[program], *argv[1:]]


def _elements(node: ast.expr | None, line: int,
              assigned: Assigned | None) -> list[ast.expr] | None:
    if isinstance(node, ast.Name) and assigned is not None:
        node = assigned(node.id, line)
    if isinstance(node, ast.List | ast.Tuple):
        return list(node.elts)
    return None


def _shell_argument(argv: list[ast.expr]) -> ast.expr | None:
    """`["sh", "-c", command, ...]` (under any launcher): the command."""
    at = 0
    while at < len(argv) and _program(argv[at]) in _LAUNCHERS:
        at += 1
        while at < len(argv) and _option_or_setting(argv[at]):
            at += 1
    if at >= len(argv):
        return None
    program = _program(argv[at])
    pattern = _WINDOWS_SHELLS.get(program) or (
        _SHELL_COMMAND_OPTION if program in _SHELLS else None)
    if pattern is None:
        return None
    for before, element in zip(argv[at + 1:], argv[at + 2:], strict=False):
        text = _text(before)
        if text is None or not text.startswith(("-", "/")):
            return None  # an operand first: a script's name, not a command
        if pattern.match(text):
            return element
    return None


def _program(node: ast.expr) -> str:
    text = _text(node) or ""
    return text.replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".exe")


def _option_or_setting(node: ast.expr) -> bool:
    text = _text(node)
    return text is not None and (text.startswith("-") or "=" in text or text.isdigit())


def _text(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) \
        else None
