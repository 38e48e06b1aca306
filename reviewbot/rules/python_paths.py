"""Path traversal in Python: a path from input opened, sent, moved or deleted without a
check; a prefix check that checks nothing, `..` removed once, and an archive extracted
without checking its members' names."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from reviewbot.code.python_walk import walk
from reviewbot.levels import Severity
from reviewbot.rules.python_ast import PythonFile, Report, line_pattern, nodes_of, rule
from reviewbot.rules.python_flow import Flow, source_of
from reviewbot.rules.python_guards import controls, unruled_flag
from reviewbot.rules.python_sinks import FOLDER_MAKERS, PATH_SINKS, PROBES, wrapped
from reviewbot.rules.python_strings import literal_text
from reviewbot.rules.python_uses import Use, from_source, report_use, use_of

_PATH_METHODS = frozenset({"read_text", "read_bytes", "write_text", "write_bytes", "unlink",
                           "rmdir", "mkdir", "save", "touch", "open", "exists", "is_file",
                           "is_dir", "iterdir", "stat"})


_JOINS = frozenset({"os.path.join", "posixpath.join", "pathlib.Path", "Path",
                    "pathlib.PurePath"})


# Calls that look at a path, list a folder or make one without reading, writing or removing
# a file. A folder joined with a parameter is the program's own choice until input reaches
# it: these say nothing worth a finding then (in a library every path is a parameter).
_LOOKS = PROBES | FOLDER_MAKERS | {"os.listdir", "os.scandir"}


_LOOK_METHODS = frozenset({"exists", "is_file", "is_dir", "iterdir", "stat", "mkdir"})


# A package's own resources: the package names them (`resource_text("hook-tmpl")`).
_RESOURCE_FOLDERS = frozenset({"importlib.resources.files", "importlib_resources.files"})


def path_traversal(parsed: PythonFile) -> Iterator[Report]:
    for call, name in parsed.scope_calls:
        for arg in _path_arguments(parsed, call, name):
            use = use_of(parsed, call, name, arg, "path")
            found = _path_finding(parsed, use)
            if found is not None:
                yield from report_use(parsed, use, *found)
    for call, name, arg, param, path in wrapped(parsed, "path"):
        use = use_of(parsed, call, name, arg, "path")
        names = {n.id for n in walk(use.value) if isinstance(n, ast.Name)}
        if use.source not in ("request", "archive") \
                or controls(use.flow, names, use.call, "contained"):
            continue
        yield from report_use(parsed, use, "error" if _direct_request(use, parsed) else "warning", (
            f"{path.describe(name, param)}, which uses it as a file path, and the path comes"
            f"{from_source(use.source)} without a check that it stays in its folder: `../` in it "
            "reaches any file the process can (path traversal)."),
            "Resolve the path and check it stays under the base folder before passing it on, "
            "or use werkzeug.utils.safe_join / secure_filename.")
    yield from _unsafe_extraction(parsed)
    yield from _prefix_checks(parsed)
    yield from _dot_dot_removal(parsed)


def _path_arguments(parsed: PythonFile, call: ast.Call, name: str) -> list[ast.expr]:
    count = PATH_SINKS.get(name)
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
        return (severity, f"`{use.name}` uses a file path built{from_source(use.source)} "
                           "whose check "
                           "that it stays in its folder runs only when "
                           f"{_condition(flag)}: otherwise `../` in it reaches any "
                           "file the process can (path traversal).",
                "Check every path, whatever the setting (after resolving links if they may "
                "point outside).")
    joined = next(filter(None, (_joined_input(value, use.flow, parsed)
                                for value in (use.value, *use.chain))), None)
    if use.name in PROBES and joined is None:
        return None
    if use.source == "archive":
        return ("warning", f"`{use.name}` uses a path built{from_source(use.source)} without a "
                           "check that it stays in the target folder: a member named "
                           "`../x` or `/x` is written outside it (zip slip).", suggestion)
    if use.source == "request":
        direct = _direct_request(use, parsed)
        return ("error" if direct else "warning",
                f"`{use.name}` uses a file path built{from_source(use.source)} without a "
                "check that "
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


RULES = (
    rule("python.path-traversal", "File path from input", "warning", "security",
         "A path from a request, used without a check, reaches files outside its folder.",
         path_traversal,
         (line_pattern(r"\b(open|send_file|send_from_directory)\s*\(.*\brequest\.",
                       "A file path comes from request data."),),
         levels=("info", "warning", "error")),
)
