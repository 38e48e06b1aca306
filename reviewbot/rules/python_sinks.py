"""Which calls are sinks of each kind the Python injection rules follow (a shell, a SQL
runner, a file opener) and which of their arguments reach the sink; and the module's own
functions, or those it imports from the project, that hand an argument on to one
(`wrappers.py`, `imported.py`)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import cast

from reviewbot.code.python_walk import walk
from reviewbot.rules.imported import (
    Target,
    candidates,
    defining_module,
    is_project_module,
    project_aliases,
    target_of,
)
from reviewbot.rules.python_ast import PythonFile, enclosing_function, first_arg, keyword_arg
from reviewbot.rules.python_strings import is_formatted
from reviewbot.rules.shell_commands import shell_command
from reviewbot.rules.wrappers import Kind, SinkArguments, SinkPath, Wrappers

# Methods that run SQL: DB-API cursors, SQLAlchemy connections and sessions, Django's
# raw(), pandas. Without SQL text in sight, formatting passed to them is still a warning.
RUNNERS = frozenset({"execute", "executemany", "executescript", "exec_driver_sql",
                      "read_sql", "read_sql_query", "mogrify", "raw"})


_EXTRA_KEYWORDS = ("where", "select", "tables", "order_by")


def sql_arguments(call: ast.Call, method: str) -> list[ast.expr]:
    if method == "extra":
        values = [k.value for k in call.keywords if k.arg in _EXTRA_KEYWORDS]
        return [e for v in values for e in (
            v.elts if isinstance(v, ast.List | ast.Tuple) else
            [x for x in v.values if x is not None] if isinstance(v, ast.Dict) else [v])]
    arg = first_arg(call, "sql") or keyword_arg(call, "statement")
    return [] if arg is None else [arg]


# Calls that open, send, move or delete the path in their first (or first two) arguments.
PATH_SINKS: dict[str, int] = {
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
PROBES = frozenset({"os.path.exists", "os.path.lexists", "os.path.isfile", "os.path.isdir",
                     "os.path.getsize", "os.stat", "os.lstat", "os.access"})
PATH_SINKS.update(dict.fromkeys(PROBES, 1))


# A wrapper that only makes folders (`ensure_dir(path)`) is not a file opener: following it
# repeated, at every folder an extraction makes, the finding at the file it writes.
FOLDER_MAKERS = frozenset({"os.makedirs", "os.mkdir"})


def _shell_sink(call: ast.Call, name: str) -> list[ast.expr]:
    shell = shell_command(call, name)
    return [shell.command] if shell is not None and shell.sure else []


def _sql_sink(call: ast.Call, name: str) -> list[ast.expr]:
    method = name.rsplit(".", 1)[-1]
    return sql_arguments(call, method) if method in RUNNERS else []


def _path_sink(call: ast.Call, name: str) -> list[ast.expr]:
    count = PATH_SINKS.get(name)
    return list(call.args[:count]) if count and name not in PROBES | FOLDER_MAKERS else []


_SINKS: dict[Kind, SinkArguments] = {"shell": _shell_sink, "sql": _sql_sink, "path": _path_sink}


# Words a module's text holds when it can call a sink of the kind (a file opener is in
# almost every module: no gate). Substrings, not words: a gate may let a module through, it
# must never keep one out.
_SINK_WORDS: dict[Kind, tuple[str, ...]] = {
    # `sh` holds every shell's name and `shell=`; `exec` the exec family and `-c` lists'
    # launchers' (`create_subprocess_exec`).
    "shell": ("system", "popen", "getoutput", "spawn", "exec", "sh", "cmd", "powershell"),
    "sql": tuple(sorted(RUNNERS)),
}


def _kinds_in(text: str) -> frozenset[Kind]:
    return frozenset(kind for kind in _SINKS
                     if kind not in _SINK_WORDS or any(w in text for w in _SINK_WORDS[kind]))


def wrapped(parsed: PythonFile,
             kind: Kind) -> Iterator[tuple[ast.Call, str, ast.expr, str, SinkPath]]:
    """Calls of the module's own functions, or of functions it imports from the project's
    other modules, whose argument reaches a sink of the kind."""
    if parsed.tree is None:
        return
    wrappers = module_wrappers(parsed)
    for call, name in parsed.scope_calls:
        found = list(wrappers.at(kind, call))
        imported = _imported(parsed, call) if not found else None
        if imported is not None:
            found = list(imported[0].at(kind, call, imported[1]))
        for arg, param, path in found:
            yield call, name, arg, param, path


def module_wrappers(parsed: PythonFile) -> Wrappers:
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
