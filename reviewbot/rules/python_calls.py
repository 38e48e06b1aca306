"""Calls read as they run, whatever shape the author gives them.

The rules ask what a call is (`subprocess.run`) and what it is given (`shell=True`). An author
who has read docs/RULES.md can give the same call other shapes, and each is read here into the
plain call the rules know:

- its name through imports (`sp.run`, `from subprocess import run as r`), through a name
  bound to a function (`fn = subprocess.run`, `e = eval`), through `getattr(subprocess,
  "run")`, `__import__("os")`, `importlib.import_module("os")`, and through
  `functools.partial(subprocess.run, shell=True)`, inline or bound to a name; `builtins.eval`
  is `eval`;
- its keywords with what `partial` bound, `**{"shell": True}`, `**dict(shell=True)` and a
  name bound to either spread into them;
- a module's namespace read by key: `sys.modules["os"]` is `os`, `vars(os)["system"]`,
  `os.__dict__["system"]` and `__builtins__["eval"]` are the functions they name;
- a flag given as any readable constant (`shell=1`, `shell="yes"`, `verify=0`), a name
  bound to one (`SHELL = True`), or positionally (`Popen`'s ninth argument), given as
  `True` or `False`.

A name's binding is looked up in the function holding the call, then at module level: one
pass over the module's statements (no expression is walked) collects the bindings of the
shapes above. A binding this cannot read (a parameter, a call's result) leaves the call as
it was written.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

import msgspec

_GETATTR = frozenset({"getattr", "builtins.getattr"})
_IMPORTERS = frozenset({"__import__", "builtins.__import__", "importlib.import_module"})
_PARTIALS = frozenset({"functools.partial", "functools.partialmethod"})
_DICTS = frozenset({"dict", "builtins.dict"})
# Builtins a name may be bound to: they need no import to be what they are.
_BUILTINS = frozenset({"eval", "exec", "compile", "open", "input", "getattr", "__import__",
                       "print", "breakpoint"})
_BUILTIN_PREFIXES = ("builtins.", "__builtins__.")
# Popen(args, bufsize, executable, stdin, stdout, stderr, preexec_fn, close_fds, shell):
# run, call, check_call and check_output hand their positional arguments to it.
_SHELL_POSITION = 8
_POPEN_FAMILY = frozenset({"subprocess.Popen", "subprocess.run", "subprocess.call",
                           "subprocess.check_call", "subprocess.check_output"})
# Keywords whose meaning is a flag: a constant in any shape is `True` or `False`
# (`shell=1`, `verify=0`, aiohttp's `ssl=False`, numpy's `allow_pickle`, torch's
# `weights_only`).
_FLAGS = frozenset({"shell", "verify", "ssl", "verify_ssl", "allow_pickle", "weights_only"})
# What maps a module's names to its objects, read by a constant key.
_NAMESPACES = frozenset({"vars", "builtins.vars"})
_MAX_DEPTH = 4


def import_aliases(nodes: Iterable[ast.AST]) -> dict[str, str]:
    """What each imported name stands for: `sp` -> `subprocess`, `run` -> `subprocess.run`
    (absolute imports; a relative one is not a library's name)."""
    aliases: dict[str, str] = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for name in node.names:
                aliases[name.asname or name.name.split(".")[0]] = (
                    name.name if name.asname else name.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for name in node.names:
                aliases[name.asname or name.name] = f"{node.module}.{name.name}"
    return aliases


def qualified_name(node: ast.expr, aliases: dict[str, str]) -> str:
    """`sp.run` -> `subprocess.run` when the file did `import subprocess as sp` (imports
    only; CallShapes.name_of also reads bindings)."""
    return CallShapes(None, aliases).qualified(node, 0)


class _Binding(msgspec.Struct, frozen=True):
    """`name = value` in a scope: the function's lines (0, 0 at module level)."""

    value: ast.expr
    line: int
    scope: tuple[int, int]


class CallShapes:
    """A module's calls read as the rules know them."""

    def __init__(self, tree: ast.Module | None, aliases: dict[str, str]) -> None:
        self._aliases = aliases
        self._tree = tree
        self._bindings: dict[str, list[_Binding]] | None = None
        # Each call's answers, asked by several rules; the call is kept with them so that
        # its id is not another's after it is gone.
        self._names: dict[int, tuple[ast.Call, str]] = {}
        self._plain: dict[int, tuple[ast.Call, ast.Call, str]] = {}

    def name_of(self, call: ast.Call) -> str:
        """The call's function as a dotted name (`subprocess.run`)."""
        known = self._names.get(id(call))
        if known is not None and known[0] is call:
            return known[1]
        name = self.qualified(call.func, call.lineno)
        self._names[id(call)] = (call, name)
        return name

    def normalised(self, call: ast.Call) -> tuple[ast.Call, str]:
        """The call with what its shape hides made plain, and its name. The call itself when
        nothing is hidden; otherwise a new call at the same place, holding the same argument
        nodes."""
        known = self._plain.get(id(call))
        if known is not None and known[0] is call:
            return known[1], known[2]
        plain, name = self._normalised(call)
        self._plain[id(call)] = (call, plain, name)
        return plain, name

    def _normalised(self, call: ast.Call) -> tuple[ast.Call, str]:
        name = self.name_of(call)
        bound = self._partial(call.func, call.lineno, 0)
        args = [*(bound.args if bound else ()), *call.args]
        keywords: list[ast.keyword] = []
        for keyword in (*(bound.keywords if bound else ()), *call.keywords):
            keywords += [keyword] if keyword.arg else self._spread(keyword, call.lineno)
        if name in _POPEN_FAMILY and len(args) > _SHELL_POSITION \
                and not any(isinstance(a, ast.Starred) for a in args[:_SHELL_POSITION + 1]):
            keywords.append(ast.keyword(arg="shell", value=args[_SHELL_POSITION]))
        keywords = [self._flag(k, call.lineno) for k in keywords]
        if bound is None and len(keywords) == len(call.keywords) \
                and all(a is b for a, b in zip(keywords, call.keywords, strict=True)):
            return call, name
        plain = ast.Call(func=call.func, args=args, keywords=keywords)
        return ast.copy_location(plain, call), name

    def qualified(self, node: ast.expr, line: int, depth: int = 0) -> str:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            root = self._name(node.id, line, depth)
        elif isinstance(node, ast.Call):
            root = self._call_root(node, line, depth)
        elif isinstance(node, ast.Subscript) and depth < _MAX_DEPTH \
                and (looked := self._namespace(node, line, depth)) is not None:
            root = looked  # `sys.modules["os"]`, `vars(os)["system"]`
        elif isinstance(node, ast.Subscript) and depth < _MAX_DEPTH \
                and (entry := self._entry(node, line)) is not None:
            root = self.qualified(entry, line, depth + 1)  # `{"run": os.system}["run"]`
        else:
            return ".".join(reversed(parts))
        name = ".".join([root, *reversed(parts)])
        return name.split(".", 1)[1] if name.startswith(_BUILTIN_PREFIXES) else name

    def _namespace(self, node: ast.Subscript, line: int, depth: int) -> str | None:
        """A name looked up in a module's namespace by a constant key: `sys.modules["os"]`
        is `os`; `vars(os)["system"]`, `os.__dict__["system"]` and `__builtins__["eval"]`
        name the function."""
        key = _constant_text(node.slice)
        if key is None or not key.replace(".", "_").isidentifier():
            return None
        table = node.value
        if isinstance(table, ast.Name) and table.id in ("__builtins__", "builtins"):
            return key
        if isinstance(table, ast.Attribute) and table.attr == "__dict__":
            return f"{self.qualified(table.value, line, depth + 1)}.{key}"
        if isinstance(table, ast.Call) and len(table.args) == 1 \
                and self.qualified(table.func, line, depth + 1) in _NAMESPACES:
            return f"{self.qualified(table.args[0], line, depth + 1)}.{key}"
        if self.qualified(table, line, depth + 1) == "sys.modules":
            return key
        return None

    def _entry(self, node: ast.Subscript, line: int) -> ast.expr | None:
        """A dispatch table's entry for a constant key: `table["run"]` when `table` is
        (bound to) a dictionary literal."""
        table: ast.expr | None = node.value
        if isinstance(table, ast.Name):
            binding = self._binding(table.id, line)
            table = binding.value if binding is not None else None
        key = node.slice
        if not (isinstance(table, ast.Dict) and isinstance(key, ast.Constant)):
            return None
        return next((v for k, v in zip(table.keys, table.values, strict=True)
                     if isinstance(k, ast.Constant) and k.value == key.value), None)

    def _call_root(self, call: ast.Call, line: int, depth: int) -> str:
        """`getattr(os, "system")` -> `os.system`, `__import__("os")` -> `os`,
        `partial(f, ...)` -> `f`; any other call's result is `name()`."""
        inner = self.qualified(call.func, line, depth)
        text = _constant_text(call.args[1]) if len(call.args) > 1 else None
        if inner in _GETATTR and text is not None and text.isidentifier():
            return f"{self.qualified(call.args[0], line, depth)}.{text}"
        module = _constant_text(call.args[0]) if call.args else None
        if inner in _IMPORTERS and module is not None:
            return module
        if inner in _PARTIALS and call.args and depth < _MAX_DEPTH:
            return self.qualified(call.args[0], line, depth + 1)
        return inner + "()"

    def _name(self, name: str, line: int, depth: int) -> str:
        binding = self._binding(name, line) if depth < _MAX_DEPTH else None
        if binding is not None and self._reference(binding.value, binding.line, depth + 1):
            return self.qualified(binding.value, binding.line, depth + 1)
        return self._aliases.get(name, name)

    def _reference(self, value: ast.expr, line: int, depth: int) -> bool:
        """Whether a bound value names a function or a module this can name: its root is an
        import, a builtin, or another such binding (`x = self.y` stays `x`)."""
        node = value
        while isinstance(node, ast.Attribute):
            node = node.value
        if isinstance(node, ast.Call):
            return self.qualified(node.func, line, depth) in (
                _GETATTR | _IMPORTERS | _PARTIALS)
        if not isinstance(node, ast.Name):
            return False
        if node.id in self._aliases or (node.id in _BUILTINS and node is value):
            return True
        inner = self._binding(node.id, line) if depth < _MAX_DEPTH else None
        return inner is not None and self._reference(inner.value, inner.line, depth + 1)

    def _partial(self, func: ast.expr, line: int, depth: int) -> ast.Call | None:
        """The `partial(f, *args, **keywords)` call a function is, inline or bound to a name."""
        if depth >= _MAX_DEPTH:
            return None
        if isinstance(func, ast.Name):
            binding = self._binding(func.id, line)
            return None if binding is None else self._partial(binding.value, binding.line,
                                                             depth + 1)
        if isinstance(func, ast.Call) and self.qualified(func.func, line) in _PARTIALS \
                and func.args:
            inner = self._partial(func.args[0], line, depth + 1)
            if inner is None:
                return ast.Call(func=func.args[0], args=func.args[1:], keywords=func.keywords)
            return ast.Call(func=inner.func, args=[*inner.args, *func.args[1:]],
                            keywords=[*inner.keywords, *func.keywords])
        return None

    def _spread(self, keyword: ast.keyword, line: int, depth: int = 0) -> list[ast.keyword]:
        """`**{"shell": True}`, `**dict(shell=True)`, or a name bound to one: its keywords
        (what cannot be read stays `**value`)."""
        value = keyword.value
        if isinstance(value, ast.Name) and depth < _MAX_DEPTH:
            binding = self._binding(value.id, line)
            if binding is not None:
                spread = self._spread(ast.keyword(arg=None, value=binding.value),
                                      binding.line, depth + 1)
                return [keyword] if spread == [] else spread
        if isinstance(value, ast.Dict) and all(_constant_text(k) is not None
                                               for k in value.keys if k is not None) \
                and None not in value.keys:
            return [ast.copy_location(ast.keyword(arg=_constant_text(k), value=v), v)
                    for k, v in zip(value.keys, value.values, strict=True) if k is not None]
        if isinstance(value, ast.Call) and self.qualified(value.func, line) in _DICTS \
                and not value.args:
            return [k for k in value.keywords if k.arg is not None]
        return [keyword]

    def _flag(self, keyword: ast.keyword, line: int) -> ast.keyword:
        """A flag keyword whose value is readable in any shape, as `True` or `False`."""
        if keyword.arg not in _FLAGS or (isinstance(keyword.value, ast.Constant)
                                         and isinstance(keyword.value.value, bool)):
            return keyword
        truth = self.truth(keyword.value, line)
        if truth is None:
            return keyword
        constant = ast.copy_location(ast.Constant(value=truth), keyword.value)
        return ast.keyword(arg=keyword.arg, value=constant)

    def truth(self, node: ast.expr, line: int, depth: int = 0) -> bool | None:
        """Whether an expression is true, when its shape says (None: it cannot tell)."""
        if isinstance(node, ast.Constant):
            return bool(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = self.truth(node.operand, line, depth)
            return None if inner is None else not inner
        if isinstance(node, ast.List | ast.Tuple | ast.Set | ast.Dict):
            return bool(node.keys if isinstance(node, ast.Dict) else node.elts)
        if isinstance(node, ast.Name) and depth < _MAX_DEPTH:
            binding = self._binding(node.id, line)
            if binding is not None:
                return self.truth(binding.value, binding.line, depth + 1)
        return None

    def _binding(self, name: str, line: int) -> _Binding | None:
        """What the name is bound to at a line: in the innermost function holding the line
        that binds it (the last binding before the line, or its first), else at module
        level."""
        if self._bindings is None:
            self._bindings = _bindings(self._tree)
        found = [b for b in self._bindings.get(name, ())
                 if b.scope == (0, 0) or b.scope[0] <= line <= b.scope[1]]
        if not found:
            return None
        scope = min((b.scope for b in found), key=lambda s: (s == (0, 0), s[1] - s[0]))
        inner = [b for b in found if b.scope == scope]
        before = [b for b in inner if b.line < line]
        return before[-1] if before else inner[0]


# The values a binding is kept for: names, dotted names, calls (getattr, partial, dict),
# dictionaries and constants (flags). Anything else is not read.
_KEPT = (ast.Name, ast.Attribute, ast.Call, ast.Dict, ast.Constant, ast.UnaryOp)
# The calls whose value a binding is kept for, by their last name (resolved when asked).
_BINDERS = frozenset({"getattr", "__import__", "import_module", "partial", "partialmethod",
                      "dict"})


def _simple_name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def _bindings(tree: ast.Module | None) -> dict[str, list[_Binding]]:
    found: dict[str, list[_Binding]] = {}
    for statement, scope in _scoped(tree.body if tree else [], (0, 0)):
        targets = (statement.targets if isinstance(statement, ast.Assign) else
                   [statement.target] if isinstance(statement, ast.AnnAssign) else [])
        value = getattr(statement, "value", None)
        if not isinstance(value, _KEPT) or (isinstance(value, ast.Call)
                                             and _simple_name(value.func) not in _BINDERS):
            continue  # `log = logging.getLogger()`: a call's result names no function
        for target in targets:
            if isinstance(target, ast.Name):
                found.setdefault(target.id, []).append(
                    _Binding(value=value, line=statement.lineno, scope=scope))
    return found


def _scoped(body: list[ast.stmt],
            scope: tuple[int, int]) -> Iterator[tuple[ast.stmt, tuple[int, int]]]:
    """Every statement with the lines of the function holding it."""
    pending = [(statement, scope) for statement in body]
    while pending:
        statement, where = pending.pop()
        yield statement, where
        inner = where
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            inner = (statement.lineno, statement.end_lineno or statement.lineno)
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in getattr(statement, field, ()):
                if isinstance(child, ast.stmt):
                    pending.append((child, inner))
                else:  # an except clause or a match case: its body holds statements
                    pending += [(s, inner) for s in getattr(child, "body", [])]


def _constant_text(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) \
        else None
