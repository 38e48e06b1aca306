"""Python checks on the syntax tree of the new file, reported on changed lines only.

Own `ast` checks rather than bandit: bandit reads files from disk and costs ~0.3 s
to import before it looks at a line (bench/hook_latency measures both); the tree
here is parsed once per file from the content under review (the index, in staged
mode), and names are resolved through the file's imports (`from subprocess import
run` is still subprocess.run).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal, cast

from reviewbot.rules.base import FileChange, Hit, RuleBase, RuleInfo
from reviewbot.schema import Category, Severity

StringKind = Literal["formatted", "constant", "dynamic"]
Report = tuple[ast.AST, Severity | None, str, str]

_SQL = re.compile(r"\b(select\b[\s\S]*\bfrom|insert\s+into|update\b[\s\S]*\bset|delete\s+from|"
                  r"drop\s+table|where\b)", re.IGNORECASE)
_SECURITY_NAMES = re.compile(r"passw|secret|token|sign|auth|credential", re.IGNORECASE)


@dataclass(frozen=True)
class PythonFile:
    """The parts of a parsed file that rules look at: only statements touching the change."""

    aliases: dict[str, str]
    calls: tuple[tuple[ast.Call, str], ...]
    nodes: tuple[ast.AST, ...]
    is_script: bool


def python_file(change: FileChange) -> PythonFile | None:
    """The parsed new file, once per change however many rules ask."""
    if "python_file" not in change.memo:
        tree = change.python_tree
        change.memo["python_file"] = None if tree is None else _analyse(
            tree, change.new_text, frozenset(change.added_by_line))
    return cast(PythonFile | None, change.memo["python_file"])


def _analyse(tree: ast.Module, text: str | None, changed: frozenset[int]) -> PythonFile:
    # Walking only the statements that touch added lines keeps a hook fast on big files.
    nodes = [node for stmt in _touched(tree.body, changed) for node in _walk_shallow(stmt)]
    aliases: dict[str, str] = {}
    for node in (*_imports(tree.body), *nodes):
        if isinstance(node, ast.Import):
            for name in node.names:
                aliases[name.asname or name.name.split(".")[0]] = (
                    name.name if name.asname else name.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for name in node.names:
                aliases[name.asname or name.name] = f"{node.module}.{name.name}"
    calls = tuple((node, qualified_name(node.func, aliases))
                  for node in nodes if isinstance(node, ast.Call))
    return PythonFile(aliases=aliases, calls=calls, nodes=tuple(nodes),
                      is_script=bool(text and "__main__" in text))


def _touched(body: list[ast.stmt], changed: frozenset[int]) -> list[ast.stmt]:
    """The innermost statements whose lines include an added line."""
    found: list[ast.stmt] = []
    for stmt in body:
        end = stmt.end_lineno or stmt.lineno
        if not any(stmt.lineno <= n <= end for n in changed):
            continue
        found.append(stmt)
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                found += _touched([s for s in inner if isinstance(s, ast.stmt)]
                                  or [s for h in inner if isinstance(h, ast.ExceptHandler)
                                      for s in h.body], changed)
    return found


def _walk_shallow(stmt: ast.stmt) -> list[ast.AST]:
    """A statement's nodes, without descending into its nested statement bodies."""
    nodes: list[ast.AST] = []
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        nodes.append(node)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.stmt | ast.excepthandler):
                stack.append(child)
    return nodes


def _imports(body: list[ast.stmt]) -> list[ast.AST]:
    """Module-level imports, including those under `if`/`try` (TYPE_CHECKING, fallbacks)."""
    found: list[ast.AST] = []
    for stmt in body:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            found.append(stmt)
        elif isinstance(stmt, ast.If | ast.Try):
            found += _imports([*stmt.body, *stmt.orelse])
    return found


def qualified_name(node: ast.expr, aliases: dict[str, str]) -> str:
    """`sp.run` -> `subprocess.run` when the file did `import subprocess as sp`."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(aliases.get(node.id, node.id))
    elif isinstance(node, ast.Call):
        parts.append(qualified_name(node.func, aliases) + "()")
    else:
        return ".".join(reversed(parts))
    return ".".join(reversed(parts))


def string_kind(node: ast.expr | None) -> StringKind:
    """Whether an expression is a constant string, one built by formatting, or unknown."""
    if node is None:
        return "dynamic"
    if isinstance(node, ast.Constant):
        return "constant"
    if isinstance(node, ast.JoinedStr):
        has_values = any(isinstance(v, ast.FormattedValue) for v in node.values)
        return "formatted" if has_values else "constant"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod | ast.Add):
        kinds = {string_kind(node.left), string_kind(node.right)}
        if kinds == {"constant"}:
            return "constant"
        if _literal_text(node):
            return "formatted"
        return "dynamic"
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format" and isinstance(node.func.value, ast.Constant)):
        return "formatted" if node.args or node.keywords else "constant"
    if isinstance(node, ast.List | ast.Tuple):
        return "constant" if all(string_kind(e) == "constant" for e in node.elts) else "dynamic"
    return "dynamic"


def _literal_text(node: ast.AST) -> str:
    """The literal parts of a string expression (for spotting SQL in a template)."""
    return " ".join(n.value for n in ast.walk(node)
                    if isinstance(n, ast.Constant) and isinstance(n.value, str))


def _first_arg(call: ast.Call, keyword: str | None = None) -> ast.expr | None:
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _is_const(node: ast.expr | None, value: object) -> bool:
    return isinstance(node, ast.Constant) and node.value is value


@dataclass(frozen=True)
class AstRule(RuleBase):
    finder: Callable[[PythonFile], Iterator[Report]]

    def applies_to(self, change: FileChange) -> bool:
        return change.language == "python" and bool(change.added)

    def check(self, change: FileChange) -> Iterator[Hit]:
        parsed = python_file(change)
        if parsed is None:
            return
        changed = change.added_by_line
        for node, severity, message, suggestion in self.finder(parsed):
            start = getattr(node, "lineno", 0)
            end = getattr(node, "end_lineno", None) or start
            if any(n in changed for n in range(start, end + 1)):
                yield Hit(rule_id=self.id, line=start, end_line=end, severity=severity,
                          message=message, suggestion=suggestion)


_SHELL_CALLS = frozenset({"subprocess.run", "subprocess.call", "subprocess.check_call",
                          "subprocess.check_output", "subprocess.Popen"})
_ALWAYS_SHELL = frozenset({"os.system", "os.popen", "subprocess.getoutput",
                           "subprocess.getstatusoutput", "commands.getoutput"})
_SHELL_SEVERITY: dict[StringKind, Severity] = {
    "formatted": "error", "dynamic": "warning", "constant": "info"}


def _shell_injection(parsed: PythonFile) -> Iterator[Report]:
    for call, name in parsed.calls:
        if name in _SHELL_CALLS and _is_const(_keyword(call, "shell"), True):
            kind = string_kind(_first_arg(call, "args"))
        elif name in _ALWAYS_SHELL:
            kind = string_kind(_first_arg(call, "cmd"))
            if kind == "constant":
                continue
        else:
            continue
        yield (call, _SHELL_SEVERITY[kind],
               f"`{name}` runs its command through a shell"
               + (" and the command is built by string formatting: any input in it can run "
                  "other commands." if kind == "formatted" else
                  " with a command that is not a constant." if kind == "dynamic" else "."),
               "Pass a list of arguments without shell=True (e.g. "
               "subprocess.run([\"tool\", arg], check=True)); use shlex.quote only as a last "
               "resort.")


def _eval_exec(parsed: PythonFile) -> Iterator[Report]:
    for call, name in parsed.calls:
        if name in ("eval", "exec") and string_kind(_first_arg(call)) != "constant":
            yield (call, None, f"`{name}` runs a string as Python code; if any part of it "
                               "comes from input, so does the code.",
                   "Use ast.literal_eval for data, or a dispatch table for behaviour.")


_EXECUTORS = frozenset({"execute", "executemany", "executescript", "raw", "text",
                        "read_sql", "read_sql_query", "extra"})


def _sql_injection(parsed: PythonFile) -> Iterator[Report]:
    executed: set[int] = set()
    for call, name in parsed.calls:
        arg = _first_arg(call, "sql")
        if (name.rsplit(".", 1)[-1] in _EXECUTORS and arg is not None
                and string_kind(arg) == "formatted" and _SQL.search(_literal_text(arg))):
            executed.add(id(arg))
            yield (call, "error", "SQL built by string formatting is passed to "
                                  f"`{name.rsplit('.', 1)[-1]}`: values in it can change the "
                                  "query (SQL injection).",
                   "Use a parameterised query: cursor.execute(\"... WHERE id = %s\", (value,)).")
    for node in parsed.nodes:
        if (isinstance(node, ast.JoinedStr | ast.BinOp) and id(node) not in executed
                and string_kind(node) == "formatted" and _looks_like_query(node)):
            yield (node, "warning", "A SQL query is built by string formatting; if it reaches "
                                    "a database with values from input, that is SQL injection.",
                   "Keep the query constant and pass values as parameters.")


def _looks_like_query(node: ast.expr) -> bool:
    text = _literal_text(node)
    return bool(re.search(r"^\s*(select|insert|update|delete|with)\b", text, re.IGNORECASE)
                and _SQL.search(text))


_DESERIALISERS = frozenset({
    "pickle.load", "pickle.loads", "pickle.Unpickler", "cPickle.load", "cPickle.loads",
    "dill.load", "dill.loads", "marshal.load", "marshal.loads", "shelve.open",
    "jsonpickle.decode", "yaml.unsafe_load", "pandas.read_pickle",
})
_SAFE_YAML = re.compile(r"Safe|CSafe|BaseLoader")


def _unsafe_deserialisation(parsed: PythonFile) -> Iterator[Report]:
    for call, name in parsed.calls:
        unsafe = name in _DESERIALISERS
        if name == "yaml.load":
            loader = _keyword(call, "Loader") or (call.args[1] if len(call.args) > 1 else None)
            unsafe = loader is None or not _SAFE_YAML.search(ast.unparse(loader))
        if unsafe:
            yield (call, None, f"`{name}` can run arbitrary code while loading untrusted data.",
                   "Load data with a safe format (json, yaml.safe_load); never unpickle input.")


_WEAK_HASHES = frozenset({"hashlib.md5", "hashlib.sha1", "md5.new", "sha.new"})


def _weak_hash(parsed: PythonFile) -> Iterator[Report]:
    for call, name in parsed.calls:
        weak = name in _WEAK_HASHES or (
            name == "hashlib.new" and isinstance(_first_arg(call), ast.Constant)
            and str(cast(ast.Constant, _first_arg(call)).value).lower() in ("md5", "sha1"))
        if not weak or _is_const(_keyword(call, "usedforsecurity"), False):
            continue
        security = bool(_SECURITY_NAMES.search(ast.unparse(call)))
        yield (call, "warning" if security else "info",
               f"`{name}` is broken for security use (collisions are practical)"
               + (" and here it hashes something that looks like a credential." if security
                  else "; fine for checksums or cache keys."),
               "For passwords use hashlib.scrypt/argon2/bcrypt; for integrity use sha256; "
               "for non-security use pass usedforsecurity=False.")


def _tls_disabled(parsed: PythonFile) -> Iterator[Report]:
    for call, name in parsed.calls:
        if _is_const(_keyword(call, "verify"), False) or name == "ssl._create_unverified_context":
            yield (call, "error", f"`{name}` turns off TLS certificate verification: anyone on "
                                  "the network path can read and change the traffic.",
                   "Keep verification on; for a private CA pass verify=\"/path/to/ca.pem\".")
    for node in parsed.nodes:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Attribute) and t.attr in ("check_hostname", "verify_mode")
                for t in node.targets):
            value = ast.unparse(node.value)
            if value in ("False", "ssl.CERT_NONE", "CERT_NONE"):
                yield (node, "error", "TLS hostname or certificate checking is switched off.",
                       "Keep ssl.create_default_context() defaults.")


_DEBUGGERS = frozenset({"breakpoint", "pdb.set_trace", "ipdb.set_trace", "pudb.set_trace",
                        "pdb.post_mortem"})


def _debug_leftover(parsed: PythonFile) -> Iterator[Report]:
    for call, name in parsed.calls:
        if name in _DEBUGGERS:
            yield (call, "warning", f"`{name}()` stops the program in a debugger.",
                   "Remove it before committing.")
        elif name == "print" and not parsed.is_script:
            yield (call, "info", "`print` in library code is usually a debugging leftover.",
                   "Use logging, or remove it.")


def _world_writable(parsed: PythonFile) -> Iterator[Report]:
    for call, name in parsed.calls:
        if name in ("os.chmod", "os.makedirs", "os.mkdir", "pathlib.Path.chmod") or (
                name.endswith(".chmod") and len(call.args) == 1):
            mode = _keyword(call, "mode") or (call.args[-1] if call.args else None)
            if (isinstance(mode, ast.Constant) and isinstance(mode.value, int)
                    and mode.value & 0o002):
                yield (call, None, f"`{name}` with mode {oct(mode.value)} lets every local "
                                   "user write the file.",
                       "Use 0o644 for files and 0o755 for directories (or tighter).")


def _insecure_tempfile(parsed: PythonFile) -> Iterator[Report]:
    for call, name in parsed.calls:
        if name == "tempfile.mktemp":
            yield (call, None, "`tempfile.mktemp` returns a name another process can claim "
                               "before you create it.",
                   "Use tempfile.mkstemp() or NamedTemporaryFile().")


def _rule(rule_id: str, title: str, severity: Severity, category: Category, rationale: str,
          finder: Callable[[PythonFile], Iterator[Report]]) -> AstRule:
    info = RuleInfo(id=rule_id, title=title, severity=severity, category=category,
                    rationale=rationale)
    return AstRule(info=info, finder=finder)


RULES = (
    _rule("python.shell-injection", "Command run through a shell", "warning", "security",
          "shell=True with a formatted command lets input run other commands.",
          _shell_injection),
    _rule("python.eval-exec", "eval/exec of a non-constant string", "warning", "security",
          "Code built from strings runs whatever the string says.", _eval_exec),
    _rule("python.sql-injection", "SQL built by string formatting", "warning", "security",
          "Formatted SQL lets values change the query.", _sql_injection),
    _rule("python.unsafe-deserialization", "Unsafe deserialisation", "warning", "security",
          "pickle, marshal and yaml.load run code from the data they load.",
          _unsafe_deserialisation),
    _rule("python.weak-hash", "MD5/SHA-1 hash", "info", "security",
          "MD5 and SHA-1 collide; they only suit non-security uses.", _weak_hash),
    _rule("python.tls-verify-disabled", "TLS verification disabled", "error", "security",
          "Without certificate checks TLS protects against nobody.", _tls_disabled),
    _rule("python.debug-leftover", "Debugging leftover", "warning", "maintainability",
          "Debugger calls and prints left in code stall or clutter production.",
          _debug_leftover),
    _rule("python.world-writable", "World-writable permissions", "warning", "security",
          "Any local user can change a world-writable file.", _world_writable),
    _rule("python.insecure-tempfile", "Race-prone temporary file", "warning", "security",
          "mktemp's name can be taken by another process first.", _insecure_tempfile),
)
