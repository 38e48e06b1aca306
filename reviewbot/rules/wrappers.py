"""A module's own functions that hand a parameter to a sink: `self._run_ssh(cmd)` runs `cmd`
through a shell when `_run_ssh` passes its parameter to `subprocess.run(..., shell=True)`.

The injection rules stop at the first call they do not know; a project's wrapper is such a
call. A function of the same module whose parameter reaches a known sink, directly or through
another such function (at most MAX_DEPTH calls deep), is itself a sink for that parameter,
and a finding at a call of it names the wrapper, the sink and the sink's line.

Bounded to what a hook can afford: one module (the file being checked), functions found by
name (`name(...)`, `self.name(...)`, `cls.name(...)`), one small flow per parameter of a
function a changed line calls, each computed once. A name defined more than once counts only
if every definition leads the parameter to a sink.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Literal, Protocol

import msgspec

from reviewbot.code.python_walk import statements, walk
from reviewbot.rules.python_flow import Flow, NameOf, flow_for, source_of

Kind = Literal["shell", "sql", "path"]
MAX_DEPTH = 3
MAX_PARAMS = 8
Function = ast.FunctionDef | ast.AsyncFunctionDef
# Where a sink takes the value it is dangerous with: the arguments to look at, or [].
SinkArguments = Callable[[ast.Call, str], list[ast.expr]]
Normalise = Callable[[ast.Call], tuple[ast.Call, str]]


class SinkPath(msgspec.Struct, frozen=True):
    """How a wrapper's parameter reaches a sink: the sink's name and line, and the wrappers
    in between (nearest first)."""

    sink: str
    line: int
    via: tuple[str, ...] = ()
    # The module the sink is in, when it is not the file being checked.
    file: str = ""

    def describe(self, name: str, param: str) -> str:
        through = "".join(f" through `{w}`" for w in self.via)
        where = f"line {self.line} of {self.file}" if self.file else f"line {self.line}"
        return f"`{name}` passes its `{param}` parameter{through} to `{self.sink}` ({where})"


class _Step(msgspec.Struct, frozen=True):
    """A call on the way to a sink, and the arguments of it that must carry the parameter."""

    call: ast.Call
    path: SinkPath
    arguments: list[ast.expr]


class Definitions(Protocol):
    """A module's functions by name."""

    def functions(self, name: str) -> list[Function]:
        """The module-level function a name calls: any of these may be it."""
        ...

    def methods(self, name: str) -> list[Function]:
        """The methods of that name, in any class: all of them must agree."""
        ...


class TreeDefinitions:
    """A parsed module's functions: a module-level name is its last definition (the one that
    runs: an earlier one of the same name is replaced), a method any class's."""

    def __init__(self, tree: ast.Module) -> None:
        self._functions: dict[str, list[Function]] = {}
        self._methods: dict[str, list[Function]] = {}
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self._functions[node.name] = [node]
            elif (lambda_ := _lambda_of(node)) is not None:
                self._functions[lambda_.name] = [lambda_]
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        self._methods.setdefault(item.name, []).append(item)
        for found in _nested(tree):
            self._functions.setdefault(found.name, []).append(found)

    def functions(self, name: str) -> list[Function]:
        return self._functions.get(name, [])

    def methods(self, name: str) -> list[Function]:
        return self._methods.get(name, [])


def _lambda_of(node: ast.stmt) -> ast.FunctionDef | None:
    """`run = lambda cmd: os.system(cmd)` as the function it is: `def run(cmd): return
    os.system(cmd)`, on the same lines."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Lambda)):
        return None
    body = ast.copy_location(ast.Return(value=node.value.body), node.value.body)
    function = ast.FunctionDef(name=node.targets[0].id, args=node.value.args, body=[body],
                               decorator_list=[], returns=None)
    return ast.copy_location(function, node)


def _nested(tree: ast.Module) -> Iterator[Function]:
    """Functions defined inside another (or a class's method), and lambdas bound to a name
    there: called by their name as a module's function is, each may be any of the
    definitions of its name."""
    for outer in tree.body:
        if isinstance(outer, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for inner in statements(outer.body):
                found = inner if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef) \
                    else _lambda_of(inner)
                if found is not None and not (isinstance(outer, ast.ClassDef)
                                              and found in outer.body):
                    yield found


class Wrappers:
    """The module's functions, and which of their parameters reach each kind of sink."""

    def __init__(self, tree: ast.Module, name_of: NameOf,
                 sinks: dict[Kind, SinkArguments], file: str = "",
                 kinds: frozenset[Kind] | None = None,
                 normalise: Normalise | None = None,
                 definitions: Definitions | None = None) -> None:
        # The functions a call may name: from the tree, or read one by one from a module too
        # large to parse whole (rules/imported.py).
        self._found = definitions or TreeDefinitions(tree)
        # Calls read as they run (rules/python_calls.py): `partial(subprocess.run,
        # shell=True)(cmd)` is a shell like `subprocess.run(cmd, shell=True)`.
        self._normalise = normalise
        # The kinds of sink the module's text names at all (None: any): a module that never
        # mentions a shell has no shell wrapper, and costs no walk for one.
        self._kinds = kinds
        self._name_of = name_of
        self._sinks = sinks
        self._file = file
        # What the module imports by name, as dotted paths: a name it hands on from
        # another module (a package's `__init__.py`), rules/imported.py.
        self.exports: dict[str, str] = {}
        self._memo: dict[tuple[Kind, int], dict[str, SinkPath]] = {}
        # Each function's calls with their names: one walk, whatever kinds are asked.
        self._calls: dict[int, list[tuple[ast.Call, str]]] = {}

    def at(self, kind: Kind, call: ast.Call,
           name: str | None = None) -> Iterator[tuple[ast.expr, str, SinkPath]]:
        """For a call of one of the module's functions (by default the one the call names
        as `f(...)` or `self.f(...)`): each argument that reaches a sink of this kind inside
        it, with the parameter it binds and the way there."""
        if self._kinds is not None and kind not in self._kinds:
            return
        method = name is None and _is_method_call(call)
        definitions = self._lookup(name or _callee(call) or "", method)
        if not definitions:
            return
        reached = [self._reaching(kind, f, 0) for f in definitions]
        # A method may be any class's: every one must lead there. A module-level name is one
        # function, though a module read in slices may offer several candidates: any.
        params = set.intersection(*(set(r) for r in reached)) if method \
            else set().union(*(set(r) for r in reached))
        for param in sorted(params):
            at = next(i for i, r in enumerate(reached) if param in r)
            arg = _argument(call, definitions[at], param)
            if arg is not None:
                yield arg, param, reached[at][param]

    def defines(self, name: str) -> bool:
        """Whether the module defines a function or method of this name."""
        return bool(self._found.functions(name) or self._found.methods(name))

    def _lookup(self, name: str, method: bool) -> list[Function]:
        return self._found.methods(name) if method else self._found.functions(name)

    def _reaching(self, kind: Kind, function: Function, depth: int) -> dict[str, SinkPath]:
        """The function's parameters that reach a sink of the kind, and how."""
        key = (kind, id(function))
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = {}  # a recursive call in progress reaches nothing more
        found: dict[str, SinkPath] = {}
        steps = self._steps(kind, function, depth)
        # A function with no sink and no wrapper call in it costs no flow (most of them).
        for param in _params(function)[:MAX_PARAMS] if steps else ():
            path = self._param_path(kind, function, param, steps)
            if path is not None:
                found[param] = path
        self._memo[key] = found
        return found

    def _steps(self, kind: Kind, function: Function, depth: int) -> list[_Step]:
        """The calls in a function that lead to a sink of the kind, in the function's order:
        the sink itself with the arguments it is dangerous with, or a wrapper with the
        parameters of it that reach one."""
        steps: list[_Step] = []
        for call, name in self._named_calls(function):
            arguments = self._sinks[kind](call, name)
            if arguments:
                steps.append(_Step(call, SinkPath(name, call.lineno, file=self._file),
                                   arguments))
                continue
            if depth + 1 >= MAX_DEPTH or _callee(call) == function.name:
                continue
            method = _is_method_call(call)
            for inner in self._lookup(_callee(call) or "", method)[:1 if method else None]:
                for inner_param, path in self._reaching(kind, inner, depth + 1).items():
                    arg = _argument(call, inner, inner_param)
                    if arg is not None:
                        steps.append(_Step(call, SinkPath(path.sink, path.line,
                                                          (inner.name, *path.via),
                                                          path.file), [arg]))
        return steps

    def _named_calls(self, function: Function) -> list[tuple[ast.Call, str]]:
        if id(function) not in self._calls:
            self._calls[id(function)] = [
                self._normalise(call) if self._normalise else (call, self._name_of(call))
                for call in _calls(function)]
        return self._calls[id(function)]

    def _param_path(self, kind: Kind, function: Function, param: str,
                    steps: list[_Step]) -> SinkPath | None:
        flow = flow_for(function, [param], self._name_of)
        for step in steps:
            if any(self._from(arg, flow, kind) for arg in step.arguments):
                return step.path
        return None

    def _from(self, arg: ast.expr, flow: Flow, kind: Kind) -> bool:
        """The parameter reaches the argument, past no sanitiser of the sink's kind."""
        return source_of(arg, flow, self._name_of, kind) == "parameter"


def _callee(call: ast.Call) -> str | None:
    """`name(...)`, `self.name(...)`, `cls.name(...)`: the module's own function or method."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
            and func.value.id in ("self", "cls"):
        return func.attr
    return None


def _is_method_call(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute)


def _params(function: Function) -> list[str]:
    args = function.args
    return [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)
            if a.arg not in ("self", "cls")]


def _argument(call: ast.Call, function: Function, param: str) -> ast.expr | None:
    """The expression a call binds to the parameter (None: not given, or given by *args)."""
    for keyword in call.keywords:
        if keyword.arg == param:
            return keyword.value
    positional = [a.arg for a in (*function.args.posonlyargs, *function.args.args)
                  if a.arg not in ("self", "cls")]
    if param in positional:
        index = positional.index(param)
        before = call.args[:index + 1]
        if len(call.args) > index and not any(isinstance(a, ast.Starred) for a in before):
            return call.args[index]
    return None


def _calls(function: Function) -> Iterator[ast.Call]:
    for node in walk(function):
        if isinstance(node, ast.Call):
            yield node
