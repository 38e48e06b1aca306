"""Checks that guard a sink: a value counts as checked only where the check controls the
sink, that is where the sink is reached only when the check passed.

A check is a test of a value (a path normalised and compared with its base folder, a value
that does not start with `-`). It controls a sink when
- the sink is inside the branch the passing check takes (`if inside(path): open(path)`, or
  the `else` of `if not inside(path): ...`); or
- the failing branch exits (`raise`, `return`, `abort()`, `sys.exit()`, `continue`/`break`
  within the loop) and the sink comes after it in the same block or in a block nested in
  what follows (`if not inside(path): abort(404)` then `open(path)`); or
- the check raises when it fails (`path.resolve().relative_to(base)`) and the sink follows it;
and the value is not assigned again between the check and the sink. A check whose result is
only logged or stored, one made after the sink, and one whose passing branch is the one that
exits (an inverted check) control nothing.

The checks are noted in statement order with the function's flow (rules/python_flow.py:
which names hold normalised paths at that point); where each statement sits is computed
only when a sink asks, one pass over the function's statements (no expression is walked).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Literal

import msgspec

from reviewbot.code.python_walk import walk

if TYPE_CHECKING:
    from reviewbot.rules.python_flow import Flow

# What a check says about a value: a path stays in its folder, a value is no option.
Property = Literal["contained", "no-dash"]
Fact = tuple[Property, str]
Facts = frozenset[Fact]
_NONE: Facts = frozenset()
# A path is contained when it is normalised (realpath, abspath, normpath, resolve) and then
# compared with its base (startswith, is_relative_to, relative_to, commonpath): a prefix
# test of an unnormalised path lets `base/../secret` through. `commonprefix` is no check:
# it compares characters, so `/srv/static-private` is "inside" `/srv/static`.
NORMALISERS = frozenset({"realpath", "abspath", "normpath", "resolve"})
_CHECKS = frozenset({"startswith", "is_relative_to", "commonpath", "relative_to"})
# Checks that raise when they fail instead of answering.
_RAISING = frozenset({"relative_to"})
# Calls that end the request or the program: as good as `raise` for what follows.
_EXITS = frozenset({"abort", "exit", "_exit", "quit", "fail"})


class Check(msgspec.Struct, frozen=True):
    """A statement that checks values: what holds when its test is true, when it is false,
    or after it whatever happens (a check that raises)."""

    statement: ast.stmt
    true: Facts = _NONE
    false: Facts = _NONE
    always: Facts = _NONE
    # The first `if` around it that tests neither the value nor input (a setting): the
    # check runs only when that holds.
    flag: ast.expr | None = None


NameOf = Callable[[ast.Call], str]


def note(flow: Flow, statement: ast.stmt, guards: tuple[ast.expr, ...],
         qualified: NameOf) -> None:
    """The checks a statement makes, with the flow as it stands before the statement."""
    if isinstance(statement, ast.If | ast.While):
        true, false = outcomes(statement.test, flow)
        if true or false:
            flow.checks.append(Check(statement, true=true, false=false,
                                     flag=_flag(guards, true | false, flow)))
        return
    if isinstance(statement, ast.Assert):
        return  # `python -O` removes it: it checks nothing in production
    value = getattr(statement, "value", None)
    if isinstance(statement, ast.Expr | ast.Assign | ast.AnnAssign) and value is not None:
        raised = _raising(value, flow)
        if raised:
            flow.checks.append(Check(statement, always=raised,
                                     flag=_flag(guards, raised, flow)))
    if isinstance(statement, ast.Assign | ast.AnnAssign) and value is not None:
        # `inside = path.startswith(base)`, tested later by `if not inside:`.
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        result = outcomes(value, flow)
        for target in targets:
            if isinstance(target, ast.Name):
                if result[0] or result[1]:
                    flow.check_values[target.id] = result
                else:
                    flow.check_values.pop(target.id, None)


def outcomes(test: ast.expr, flow: Flow) -> tuple[Facts, Facts]:
    """What holds when the expression is true, and when it is false."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        true, false = outcomes(test.operand, flow)
        return false, true
    if isinstance(test, ast.BoolOp):
        parts = [outcomes(value, flow) for value in test.values]
        if isinstance(test.op, ast.And):
            # all true: what any part says; one false: what every part says when false
            return _union(p[0] for p in parts), _intersection(p[1] for p in parts)
        return _intersection(p[0] for p in parts), _union(p[1] for p in parts)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        return _compared(test, flow)
    if isinstance(test, ast.Name):
        return flow.check_values.get(test.id, (_NONE, _NONE))
    if isinstance(test, ast.NamedExpr):
        return outcomes(test.value, flow)
    if isinstance(test, ast.Call):
        return _atom(test, flow)
    return _NONE, _NONE


def _compared(test: ast.Compare, flow: Flow) -> tuple[Facts, Facts]:
    """`check(...) == True`, `is False`, `commonpath([path, base]) == base`,
    `name[0] == "-"`."""
    op, right, left = test.ops[0], test.comparators[0], test.left
    equal = isinstance(op, ast.Eq | ast.Is)
    if not (equal or isinstance(op, ast.NotEq | ast.IsNot)):
        return _NONE, _NONE
    for side, other in ((left, right), (right, left)):
        if isinstance(other, ast.Constant) and isinstance(other.value, bool):
            true, false = outcomes(side, flow)
            return (true, false) if equal == other.value else (false, true)
    for side, other in ((left, right), (right, left)):
        if isinstance(side, ast.Call) and _called(side) == "commonpath":
            facts = _contained_names(side, flow)
            return (facts, _NONE) if equal else (_NONE, facts)
        if isinstance(other, ast.Constant) and other.value == "-" \
                and isinstance(side, ast.Subscript) and isinstance(side.value, ast.Name):
            facts = frozenset({("no-dash", side.value.id)})
            return (_NONE, facts) if equal else (facts, _NONE)
    return _NONE, _NONE


def _atom(call: ast.Call, flow: Flow) -> tuple[Facts, Facts]:
    if flow.helpers is not None and isinstance(call.func, ast.Name) \
            and call.func.id in flow.helper_names and _tainted_argument(call, flow):
        checked = flow.helpers(call.func.id)
        if checked is not None and checked.when_true:
            return _argument_facts(call, checked.params, checked.when_true, flow), _NONE
    called = _called(call)
    if called == "startswith" and isinstance(call.func, ast.Attribute) \
            and isinstance(call.func.value, ast.Name) and _dash(call):
        return _NONE, frozenset({("no-dash", call.func.value.id)})
    if called in _CHECKS and called not in _RAISING and called != "commonpath":
        return _contained_names(call, flow), _NONE
    return _NONE, _NONE


def _dash(call: ast.Call) -> bool:
    """`startswith("-")`, or a tuple of prefixes holding one that starts with `-`."""
    if not call.args:
        return False
    prefix = call.args[0]
    values = prefix.elts if isinstance(prefix, ast.Tuple) else [prefix]
    return any(isinstance(v, ast.Constant) and str(v.value).startswith("-") for v in values)


def _contained_names(call: ast.Call, flow: Flow) -> Facts:
    """The input names a containment check tests, normalised first (in the check itself,
    `realpath(p).startswith(base)`, or before it, `p = realpath(...)`)."""
    parts = [*call.args, *(k.value for k in call.keywords)]
    if isinstance(call.func, ast.Attribute):
        parts.append(call.func.value)
    found: set[Fact] = set()
    for part in parts:
        inline = normalises(part)
        found |= {("contained", n.id) for n in walk(part) if isinstance(n, ast.Name)
                  and (inline or n.id in flow.normalised) and n.id in flow.tainted}
    return frozenset(found)


def _raising(value: ast.expr, flow: Flow) -> Facts:
    """`path.resolve().relative_to(base)`, or a helper of the module's that raises unless
    its parameter is inside (`ensure_inside(path)`): it raises when the path is outside."""
    found: set[Fact] = set()
    for node in walk(value):
        if not isinstance(node, ast.Call):
            continue
        if _called(node) in _RAISING:
            found |= _contained_names(node, flow)
        elif flow.helpers is not None and isinstance(node.func, ast.Name) \
                and node.func.id in flow.helper_names and _tainted_argument(node, flow):
            checked = flow.helpers(node.func.id)
            if checked is not None and checked.after:
                found |= _argument_facts(node, checked.params, checked.after, flow)
    return frozenset(found)


def _tainted_argument(call: ast.Call, flow: Flow) -> bool:
    """A name holding input among the call's arguments: only then can a helper's check
    say something about it (the others cost no look into the helper)."""
    return any(isinstance(n, ast.Name) and n.id in flow.tainted
               for arg in (*call.args, *(k.value for k in call.keywords)) for n in walk(arg))


class HelperChecks(msgspec.Struct, frozen=True):
    """What a function of the module checks about its parameters: those contained when it
    returns true, and those contained once it returns at all (it raises otherwise)."""

    params: tuple[str, ...]
    when_true: frozenset[str] = frozenset()
    after: frozenset[str] = frozenset()
    # It never returns (it raises or exits on every path): a call of it ends the branch.
    exits: bool = False
    # The kinds of sink its value is made safe for: every value it returns is a
    # sanitiser's (a function of the module named `secure_filename` is not the library's).
    sanitises: frozenset[str] = frozenset()


def helper_checks(function: ast.FunctionDef | ast.AsyncFunctionDef, flow: Flow) -> HelperChecks:
    """The checks a function makes on its parameters, from its own flow (its parameters
    as its only inputs): every `return` a containment check of the parameter, or a check
    at the function's top level whose failing branch exits."""
    params = tuple(a.arg for a in (*function.args.posonlyargs, *function.args.args)
                   if a.arg not in ("self", "cls"))
    # A `return False` is the failing answer; a `return True` vouches for nothing.
    returns = [node for node in walk(function) if isinstance(node, ast.Return)
               and not (isinstance(node.value, ast.Constant) and not node.value.value)]
    when_true = frozenset.intersection(*(
        _behind(flow, {name for prop, name in outcomes(r.value, flow)[0] if prop == "contained"},
                params) if r.value is not None else frozenset() for r in returns)) \
        if returns else frozenset()
    top = {id(statement) for statement in function.body}
    after: set[str] = set()
    for check in flow.checks:
        if id(check.statement) not in top:
            continue
        facts = check.always | (check.false if isinstance(check.statement, ast.If)
                                and _exits(check.statement.body, flow) else _NONE)
        after |= _behind(flow, {name for prop, name in facts if prop == "contained"}, params)
    return HelperChecks(params, when_true, frozenset(after),
                        exits=_exits(function.body, flow, returning=False))


def _behind(flow: Flow, names: set[str], params: tuple[str, ...]) -> frozenset[str]:
    """The parameters the names' values were built from (`full = realpath(join(base,
    name))`: `name`)."""
    found: set[str] = set()
    pending, seen = list(names), set(names)
    while pending:
        name = pending.pop()
        if name in params:
            found.add(name)
            continue
        for _, value in flow.history.get(name, ()):
            for node in walk(value):
                if isinstance(node, ast.Name) and node.id not in seen:
                    seen.add(node.id)
                    pending.append(node.id)
    return frozenset(found)


def _argument_facts(call: ast.Call, params: tuple[str, ...], checked: frozenset[str],
                    flow: Flow) -> Facts:
    """The caller's input names in the arguments bound to the checked parameters."""
    found: set[Fact] = set()
    for at, param in enumerate(params):
        if param not in checked:
            continue
        arg = call.args[at] if at < len(call.args) else next(
            (k.value for k in call.keywords if k.arg == param), None)
        if arg is not None:
            found |= {("contained", n.id) for n in walk(arg)
                      if isinstance(n, ast.Name) and n.id in flow.tainted}
    return frozenset(found)


def _flag(guards: tuple[ast.expr, ...], facts: Facts, flow: Flow) -> ast.expr | None:
    names = {name for _, name in facts}
    return next((g for g in guards if not _about(g, names, flow)), None)


def _about(test: ast.expr, names: set[str], flow: Flow) -> bool:
    """Whether an `if` test looks at the value or at input (then it decides about it)."""
    return any(isinstance(n, ast.Name) and (n.id in names or n.id in flow.tainted)
               for n in walk(test))


def _union(sets: Iterator[Facts]) -> Facts:
    return frozenset().union(*sets)


def _intersection(sets: Iterator[Facts]) -> Facts:
    found = list(sets)
    return frozenset.intersection(*found) if found else _NONE


def _called(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def normalises(expr: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and _called(n) in NORMALISERS for n in walk(expr))


# --- where statements sit, and which checks control a sink -------------------------------

class _Place(msgspec.Struct, frozen=True):
    """A statement's block, its index there, and what holds the block (None: the function)."""

    block: list[ast.stmt]
    index: int
    holder: ast.AST | None
    field: str


class Layout:
    """Where each statement of a function sits: computed once, when a sink first asks."""

    def __init__(self, body: list[ast.stmt]) -> None:
        self._body = body
        self._places: dict[int, _Place] = {}
        # An except clause or a match case: the statement it belongs to.
        self._clauses: dict[int, ast.stmt] = {}
        pending: list[tuple[list[ast.stmt], ast.AST | None, str]] = [(body, None, "body")]
        while pending:
            block, holder, field = pending.pop()
            for index, statement in enumerate(block):
                self._places[id(statement)] = _Place(block, index, holder, field)
                if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef
                              | ast.ClassDef):
                    continue
                for name in ("body", "orelse", "finalbody"):
                    inner = getattr(statement, name, None)
                    if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                        pending.append((inner, statement, name))
                for clause in (*getattr(statement, "handlers", ()),
                               *getattr(statement, "cases", ())):
                    self._clauses[id(clause)] = statement
                    pending.append((clause.body, clause, "body"))

    def statement_at(self, node: ast.AST) -> ast.stmt | None:
        """The innermost statement holding a node, found through the blocks by position."""
        where = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        found: ast.stmt | None = None
        block: list[ast.stmt] = self._body
        while True:
            holder = next((s for s in block if (s.lineno, s.col_offset) <= where
                           <= (s.end_lineno or s.lineno, s.end_col_offset or 0)), None)
            if holder is None:
                return found
            found = holder
            block = [s for name in ("body", "orelse", "finalbody")
                     for s in getattr(holder, name, []) if isinstance(s, ast.stmt)]
            block += [s for clause in (*getattr(holder, "handlers", ()),
                                       *getattr(holder, "cases", ())) for s in clause.body]

    def ancestry(self, statement: ast.stmt) -> Iterator[tuple[ast.stmt, _Place]]:
        """The statement and every statement holding it, innermost first."""
        current: ast.stmt | None = statement
        while current is not None and id(current) in self._places:
            place = self._places[id(current)]
            yield current, place
            holder = place.holder
            current = (self._clauses.get(id(holder)) if not isinstance(holder, ast.stmt)
                       else holder) if holder is not None else None

    def place(self, statement: ast.stmt) -> _Place | None:
        return self._places.get(id(statement))


def controls(flow: Flow, names: set[str], node: ast.AST, prop: Property) -> bool:
    """Whether one of the names is checked (`prop`) by a check that controls the node (a
    check's facts are about names that hold input only)."""
    checked = [c for c in flow.checks if any((prop, n) in c.true | c.false | c.always
                                             for n in names)]
    if not checked:
        return False
    layout = _layout(flow)
    sink = layout.statement_at(node)
    if sink is None:
        return False
    line = getattr(node, "lineno", 0)
    return any(_controls(layout, check, (prop, name), sink, flow)
               and not _assigned_between(flow, name, check.statement.lineno, line)
               for check in checked for name in names)


def unruled_flag(flow: Flow, names: set[str], prop: Property) -> ast.expr | None:
    """The setting a check of one of the names runs under, when that is why it does not
    control the sink (`if not self._follow_symlinks:` around the check)."""
    return next((check.flag for check in flow.checks if check.flag is not None
                 and any((prop, n) in check.true | check.false | check.always
                         for n in names)), None)


def _layout(flow: Flow) -> Layout:
    if flow.layout is None:
        flow.layout = Layout(flow.body)
    return flow.layout


def _controls(layout: Layout, check: Check, fact: Fact, sink: ast.stmt, flow: Flow) -> bool:
    statement = check.statement
    if fact in check.always:
        return _follows(layout, statement, sink, flow)
    if isinstance(statement, ast.If):
        for inner, place in layout.ancestry(sink):
            if place.holder is statement and inner is not statement:
                return fact in (check.true if place.field == "body" else check.false)
        if _exits(statement.body, flow) and fact in check.false:
            return _follows(layout, statement, sink, flow)
        if statement.orelse and _exits(statement.orelse, flow) and fact in check.true:
            return _follows(layout, statement, sink, flow)
        return False
    if isinstance(statement, ast.While):
        # `while not inside(path): path = ask()`: after the loop, the test was false.
        return fact in check.false and _follows(layout, statement, sink, flow) \
            and not any(isinstance(n, ast.Break) for n in walk(statement))
    return False


def _follows(layout: Layout, statement: ast.stmt, sink: ast.stmt, flow: Flow) -> bool:
    """Whether the sink comes after the statement in its block, or in what follows it in
    the blocks that run it on every path that matters: a `with` body, a `try` body whose
    handlers all exit (and its `else`), an `if` on the value's input being there at all (`if
    name:`: without a name there is no path to climb with)."""
    regions: list[tuple[int, int]] = []
    current: ast.stmt | None = statement
    while current is not None:
        place = layout.place(current)
        if place is None:
            break
        regions.append((id(place.block), place.index))
        holder = place.holder
        if isinstance(holder, ast.Try | ast.TryStar) and place.field == "body":
            regions.append((id(holder.orelse), -1))
            exits = all(_exits(h.body, flow) for h in holder.handlers)
            current = holder if exits else None
        elif isinstance(holder, ast.If) and place.field == "body" and not holder.orelse:
            current = holder if _presence(holder.test, flow) else None
        else:
            current = holder if isinstance(holder, ast.With | ast.AsyncWith) else None
    for _, place in layout.ancestry(sink):
        if any(id(place.block) == block and place.index > index for block, index in regions):
            return True
    return False


def _presence(test: ast.expr, flow: Flow) -> bool:
    """`if name:`, `if name is not None:` on a name holding input."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 \
            and isinstance(test.ops[0], ast.IsNot) and is_none(test.comparators[0]):
        test = test.left
    return isinstance(test, ast.Name) and test.id in flow.tainted


def is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _exits(block: list[ast.stmt], flow: Flow, returning: bool = True) -> bool:
    """A block that never falls through to what follows it (`returning`: a `return`,
    `continue` or `break` counts; else only raising and ending the program do)."""
    for statement in block:
        if isinstance(statement, ast.Raise) or (
                returning and isinstance(statement, ast.Return | ast.Continue | ast.Break)):
            return True
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) \
                and _ends(statement.value, flow):
            return True
        if isinstance(statement, ast.If) and statement.orelse \
                and _exits(statement.body, flow, returning) \
                and _exits(statement.orelse, flow, returning):
            return True
        if isinstance(statement, ast.With | ast.AsyncWith) \
                and _exits(statement.body, flow, returning):
            return True
    return False


def _ends(call: ast.Call, flow: Flow) -> bool:
    """`abort(404)`, `sys.exit()`; a function of the module's own only if it never returns
    (a module's own `abort` that does nothing ends nothing)."""
    own = flow.helpers(call.func.id) if flow.helpers is not None \
        and isinstance(call.func, ast.Name) and call.func.id in flow.helper_names else None
    if own is not None:
        return own.exits
    return _called(call) in _EXITS


def _assigned_between(flow: Flow, name: str, start: int, end: int) -> bool:
    return any(start < line < end for line, _ in flow.history.get(name, ()))
