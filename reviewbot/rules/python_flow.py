"""A small intra-function data flow for the Python security rules: where a value comes from
(a parameter, a request, the environment, the command line) and how a string was built
(formatting), followed through assignments in statement order.

It is what separates `cursor.execute(query)` after `query = f"... {name}"` from a constant
query, and `open(path)` with `path` from `request.args` from a path the program chose. It is
deliberately small: one function at a time, names only (no attributes, no containers), no
calls followed. Where it is unsure, rules stay quiet or say less.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Literal

import msgspec

from reviewbot.code.python_walk import children, own_nodes, statements, walk
from reviewbot.rules.python_guards import (
    Check,
    Facts,
    HelperChecks,
    Layout,
    helper_checks,
    normalises,
    note,
)
from reviewbot.rules.python_routes import REQUEST_DATA, is_handler, registered_views
from reviewbot.rules.python_strings import formatted_values, is_formatted

Source = Literal["request", "argv", "input", "environment", "archive", "parameter"]
# From the most to the least direct control an attacker has.
_STRENGTH: dict[Source, int] = {"request": 4, "argv": 3, "input": 3, "archive": 3,
                                "environment": 2, "parameter": 1}
# The member names of a tar or zip archive: whoever made the archive chose them.
_ARCHIVE_LISTINGS = frozenset({"getmembers", "getnames", "namelist", "infolist"})
_REQUEST_ROOTS = ("request.", "self.request.", "flask.request.", "self.kwargs",
                  "self.path_kwargs", "self.path_args")
# Tornado's accessors of request data (aiohttp's `request.match_info` is a request root).
_REQUEST_METHODS = frozenset({"get_argument", "get_arguments", "get_query_argument",
                              "get_body_argument", "get_cookie"})
_HANDLER_METHODS = frozenset({"get", "post", "put", "patch", "delete", "head"})
_HANDLER_BASES = ("Handler", "View", "Resource", "Endpoint", "ViewSet")
# HTTP clients' extension points, whose `request` is the one the program sends: requests'
# transport adapters (`send(self, request)`), httpx's transports
# (`handle_request(self, request)`). Not auth bases: django-ninja's `AuthBase` is called
# with the incoming request.
_CLIENT_BASES = ("Adapter", "Transport")
_ENVIRONMENT = ("os.environ", "os.getenv", "os.environ.get")
# The sinks a value can be made safe for: a shell command, SQL, a file path, HTML, code
# (`eval`), a program's argument list (an option).
SinkKind = Literal["shell", "sql", "path", "html", "code", "option"]
SINK_KINDS: tuple[SinkKind, ...] = ("shell", "sql", "path", "html", "code", "option")
_EVERY_KIND = frozenset(SINK_KINDS)
# Calls that make a value safe, and for which sinks. A conversion (a number, a UUID, a
# length, a truth value) is safe anywhere; the others only where their kind of text is made:
# `shlex.quote` quotes for a shell, not a path (`../x` is quoted and still climbs); a file
# name's cleaning is for paths, not a shell command (`basename("x; rm -rf ~")`); HTML
# escaping is for HTML, not SQL or a path. Code has no sanitiser; SQL's is a parameter.
SANITISERS: dict[str, frozenset[SinkKind]] = {
    **dict.fromkeys(("os.path.basename", "werkzeug.utils.secure_filename",
                     "secure_filename", "werkzeug.utils.safe_join", "flask.safe_join",
                     "safe_join"), frozenset({"path"})),
    **dict.fromkeys(("shlex.quote", "pipes.quote", "shlex.join"), frozenset({"shell"})),
    **dict.fromkeys(("html.escape", "markupsafe.escape", "django.utils.html.escape",
                     "django.utils.html.conditional_escape", "conditional_escape", "escape",
                     "cgi.escape", "xml.sax.saxutils.escape", "bleach.clean"),
                    frozenset({"html"})),
    **dict.fromkeys(("psycopg2.extensions.quote_ident", "psycopg2.sql.Identifier",
                     "psycopg2.sql.Literal", "psycopg.sql.Identifier", "psycopg.sql.Literal",
                     "pymysql.converters.escape_string", "MySQLdb.escape_string"),
                    frozenset({"sql"})),
    **dict.fromkeys(("int", "float", "uuid.UUID", "len", "bool", "hash", "os.path.exists",
                     "os.path.isfile", "os.path.isdir"), _EVERY_KIND),
}



class Flow(msgspec.Struct):
    """What one function's names hold."""

    tainted: dict[str, Source] = msgspec.field(default_factory=dict)
    # The expression each name was last assigned (the first part, for `+=`).
    assigned: dict[str, ast.expr] = msgspec.field(default_factory=dict)
    # Names assigned a string built by formatting (f-string, %, .format, +, join).
    formatted: dict[str, ast.expr] = msgspec.field(default_factory=dict)
    # For a name whose value went through a sanitiser of some kinds (`shlex.quote`): its
    # source for those kinds, where it is not its source for the others (`tainted`).
    by_kind: dict[str, dict[SinkKind, Source | None]] = msgspec.field(default_factory=dict)
    # Names assigned a normalised path (realpath, abspath, normpath, resolve), and those
    # of them compared with a base afterwards: contained paths.
    normalised: set[str] = msgspec.field(default_factory=set)
    # The checks the function makes, in statement order, and names holding a check's
    # result (`inside = path.startswith(base)`): rules/python_guards.py says which of them
    # control a sink.
    checks: list[Check] = msgspec.field(default_factory=list)
    check_values: dict[str, tuple[Facts, Facts]] = msgspec.field(default_factory=dict)
    body: list[ast.stmt] = msgspec.field(default_factory=list)
    layout: Layout | None = None
    # What the module's own functions check (`if not is_inside(path): abort()`), by name.
    helpers: Callable[[str], HelperChecks | None] | None = None
    # Their names: a call of anything else costs no look.
    helper_names: frozenset[str] = frozenset()
    # Every assignment of each name, in statement order: (line, value).
    history: dict[str, list[tuple[int, ast.expr]]] = msgspec.field(default_factory=dict)
    # A web handler: decorated as a route or view, or taking a `request`.
    handler: bool = False
    # A method of an HTTP client's adapter or transport: its `request` is outgoing.
    outgoing: bool = False

    def source(self, name: str, kind: SinkKind | None) -> Source | None:
        """Where the name's value comes from, as a sink of this kind sees it (None: any
        kind, sanitisers of one kind stopping nothing)."""
        kinds = self.by_kind.get(name)
        if kind is not None and kinds is not None and kind in kinds:
            return kinds[kind]
        return self.tainted.get(name)

    def assignments_before(self, name: str, line: int) -> list[ast.expr]:
        """What the name was assigned before `line`, nearest first."""
        return [value for at, value in reversed(self.history.get(name, ())) if at < line]


NameOf = Callable[[ast.Call], str]


class FlowIndex:
    """The flow of the function around a node, computed when first asked for."""

    def __init__(self, tree: ast.Module, name_of: NameOf, text: str = "") -> None:
        self._tree = tree
        self._name_of = name_of
        self._text = text
        # Views registered without a decorator (`app.add_url_rule(..., view_func=show)`).
        self._registered: frozenset[str] = frozenset()
        self._scanned = False
        self._functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        self._handler_methods: set[int] = set()
        self._client_methods: set[int] = set()
        self._flows: dict[int, Flow] = {}
        # Module-level functions by name, and what each checks (None while in progress).
        self._module_functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self._helper_checks: dict[str, HelperChecks | None] = {}

    def _scan(self) -> None:
        """The file's functions, smallest first, and which are methods of request-handler
        classes (tornado, Django and Flask class-based views): one walk, when first needed."""
        self._scanned = True
        self._registered = registered_views(self._tree, self._text)
        self._module_functions = {node.name: node for node in self._tree.body
                                  if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
        for node in statements(self._tree.body):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self._functions.append(node)
            elif isinstance(node, ast.ClassDef):
                bases = [_dotted(base) for base in node.bases]
                methods = [item for item in node.body
                           if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)]
                if any(base.endswith(_HANDLER_BASES) for base in bases) \
                        or node.name in self._registered:
                    self._handler_methods |= {id(item) for item in methods
                                              if item.name in _HANDLER_METHODS}
                elif any(base.endswith(_CLIENT_BASES) for base in bases):
                    self._client_methods |= {id(item) for item in methods}
        self._functions.sort(key=lambda f: (f.end_lineno or f.lineno) - f.lineno)

    @property
    def name_of(self) -> NameOf:
        """A call's name through the file's imports (`sp.run` -> `subprocess.run`)."""
        return self._name_of

    def function_at(self, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The innermost function holding the node (None at module level)."""
        if not self._scanned:
            self._scan()
        line = getattr(node, "lineno", 0)
        return next((f for f in self._functions
                     if f.lineno <= line <= (f.end_lineno or f.lineno)), None)

    def at(self, node: ast.AST) -> Flow:
        function = self.function_at(node)
        key = id(function) if function is not None else 0
        if key not in self._flows:
            self._flows[key] = self._compute(function)
        return self._flows[key]

    def helper(self, name: str) -> HelperChecks | None:
        """What the module-level function of that name checks about its parameters."""
        if not self._scanned:
            self._scan()
        function = self._module_functions.get(name)
        if function is None:
            return None
        if name not in self._helper_checks:
            self._helper_checks[name] = None  # a recursive helper checks nothing more
            params = [a.arg for a in (*function.args.posonlyargs, *function.args.args)
                      if a.arg not in ("self", "cls")]
            flow = self._flow(function.body, params)
            checks = helper_checks(function, flow)
            self._helper_checks[name] = msgspec.structs.replace(
                checks, sanitises=self._sanitises(function, flow))
        return self._helper_checks[name]

    def _sanitises(self, function: ast.FunctionDef | ast.AsyncFunctionDef,
                   flow: Flow) -> frozenset[str]:
        """The kinds every value the function returns is made safe for."""
        values = [node.value for node in walk(function)
                  if isinstance(node, ast.Return) and node.value is not None]
        kinds = [_sanitiser_kinds(value, flow, self._name_of) or frozenset()
                 if isinstance(value, ast.Call) else frozenset() for value in values]
        return frozenset.intersection(*kinds) if kinds else frozenset()

    def _flow(self, body: list[ast.stmt], params: list[str], outgoing: bool = False) -> Flow:
        if not self._scanned:
            self._scan()
        return _flow_of(body, params, self._name_of, outgoing, self.helper,
                        frozenset(self._module_functions))

    def _compute(self, function: ast.FunctionDef | ast.AsyncFunctionDef | None) -> Flow:
        if function is None:
            return self._flow(self._tree.body, [])
        params = [a.arg for a in (*function.args.posonlyargs, *function.args.args,
                                  *function.args.kwonlyargs) if a.arg not in ("self", "cls")]
        if function.args.vararg:
            params.append(function.args.vararg.arg)
        outgoing = id(function) in self._client_methods
        flow = self._flow(function.body, params, outgoing)
        flow.handler = not outgoing and (id(function) in self._handler_methods
                                         or function.name in self._registered
                                         or is_handler(function, params))
        return flow


def flow_for(function: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str],
             qualified: NameOf) -> Flow:
    """A function's flow with only `params` as its inputs: which names hold what they
    passed in (for a summary of where one parameter goes)."""
    return _flow_of(function.body, params, qualified)


def _flow_of(body: list[ast.stmt], params: list[str], qualified: NameOf,
             outgoing: bool = False,
             helpers: Callable[[str], HelperChecks | None] | None = None,
             helper_names: frozenset[str] = frozenset()) -> Flow:
    flow = Flow(tainted=dict.fromkeys(params, "parameter"), outgoing=outgoing, body=body,
                helpers=helpers, helper_names=helper_names)
    for statement, conditional, guards in sorted(_statements(body, False),
                                                 key=lambda s: (s[0].lineno, s[0].col_offset)):
        _step(flow, statement, qualified, conditional, guards)
    return flow


# Blocks that may not run: what they assign adds to what a name may hold.
_CONDITIONAL = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.Match)


Guards = tuple[ast.expr, ...]


def _statements(body: list[ast.stmt], conditional: bool,
                guards: Guards = ()) -> Iterator[tuple[ast.stmt, bool, Guards]]:
    """Every statement of a body, nested blocks included, nested functions left out; whether
    it runs only on some paths (inside an if, a loop, a try), and the tests of the `if`s
    around it."""
    for statement in body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        yield statement, conditional, guards
        inner_conditional = conditional or isinstance(statement, _CONDITIONAL)
        inner_guards = (*guards, statement.test) if isinstance(statement, ast.If) else guards
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(statement, name, None)
            if isinstance(inner, list):
                yield from _statements([s for s in inner if isinstance(s, ast.stmt)],
                                       inner_conditional, inner_guards)
        for handler in getattr(statement, "handlers", None) or ():
            yield from _statements(handler.body, True, guards)
        for case in getattr(statement, "cases", None) or ():
            yield from _statements(case.body, True, guards)


def _step(flow: Flow, statement: ast.stmt, qualified: NameOf, conditional: bool,
          guards: Guards = ()) -> None:
    _bind_inline(flow, statement, qualified, conditional)
    note(flow, statement, guards, qualified)
    if isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
        value = statement.value
        if value is None:
            return
        targets: list[ast.expr] = list(statement.targets) \
            if isinstance(statement, ast.Assign) else [statement.target]
        for name, part in _unpacked(targets, value):
            _assign(flow, name, part, qualified, conditional,
                    augmented=isinstance(statement, ast.AugAssign))
    elif isinstance(statement, ast.For | ast.AsyncFor):
        if source_of(statement.iter, flow, qualified):
            for name, _part in _unpacked([statement.target], statement.iter):
                _bind(flow, name, statement.iter, qualified, True)
    elif isinstance(statement, ast.With | ast.AsyncWith):
        for item in statement.items:
            if isinstance(item.optional_vars, ast.Name):
                _assign(flow, item.optional_vars.id, item.context_expr, qualified,
                        conditional)


def _bind_inline(flow: Flow, statement: ast.stmt, qualified: NameOf,
                 conditional: bool) -> None:
    """Names a statement binds inside its expressions, before the statement's check reads
    them: a walrus (`if (cmd := f"ping {host}"):`) is an assignment, and a comprehension's
    target holds what its loop runs over (`[os.system(c) for c in commands]`), as a `for`
    loop's does."""
    for node in own_nodes(statement):
        if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            _assign(flow, node.target.id, node.value, qualified, conditional)
        elif isinstance(node, ast.comprehension) and source_of(node.iter, flow, qualified):
            for name, _part in _unpacked([node.target], node.iter):
                _bind(flow, name, node.iter, qualified, True)


def field_key(node: ast.AST) -> str | None:
    """The name a value is held under in a function: a local name, or a field of the
    object the method runs on (`self.cmd`), followed as a name within that method."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
            and node.value.id == "self":
        return f"self.{node.attr}"
    return None


def _unpacked(targets: list[ast.expr], value: ast.expr) -> list[tuple[str, ast.expr]]:
    """Each name a statement assigns, with the part of the value it gets: `a, b = x, y`
    pairs them; `a, b = value` gives each the whole value (it holds some of it)."""
    found: list[tuple[str, ast.expr]] = []
    for target in targets:
        key = field_key(target)
        if key is not None:
            found.append((key, value))
        elif isinstance(target, ast.Tuple | ast.List):
            parts = value.elts if isinstance(value, ast.Tuple | ast.List) else []
            paired = len(parts) == len(target.elts) \
                and not any(isinstance(e, ast.Starred) for e in (*parts, *target.elts))
            for at, element in enumerate(target.elts):
                inner = element.value if isinstance(element, ast.Starred) else element
                found += _unpacked([inner], parts[at] if paired else value)
    return found


def _assign(flow: Flow, name: str, value: ast.expr, qualified: NameOf, conditional: bool,
            augmented: bool = False) -> None:
    if augmented and name in flow.assigned:
        # `query += " AND x = %s" % x` extends what `query` held: look at both parts.
        value = ast.copy_location(ast.BinOp(left=flow.assigned[name], op=ast.Add(),
                                             right=value), value)
    flow.assigned[name] = value
    flow.history.setdefault(name, []).append((value.lineno, value))
    _bind(flow, name, value, qualified, conditional)
    if is_formatted(value):
        flow.formatted[name] = value
    else:
        flow.formatted.pop(name, None)
    if normalises(value):
        flow.normalised.add(name)
    else:
        flow.normalised.discard(name)


def _bind(flow: Flow, name: str, value: ast.expr, qualified: NameOf,
          conditional: bool) -> None:
    """Where the name's value now comes from, for any kind of sink and for each kind a
    sanitiser in the value serves. A conditional assignment adds to what the name held."""
    source = source_of(value, flow, qualified)
    kinds: dict[SinkKind, Source | None] = {}
    if source is not None and _sanitised_in(value, flow, qualified):
        kinds = {kind: source_of(value, flow, qualified, kind) for kind in SINK_KINDS}
    if conditional:
        kinds = {kind: strongest(flow.source(name, kind), kinds.get(kind, source))
                 for kind in SINK_KINDS} if kinds or name in flow.by_kind else {}
        source = strongest(flow.tainted.get(name), source)
    if source is None:
        # `path = directory` in an else branch leaves what the if branch put in `path`.
        flow.tainted.pop(name, None)
    else:
        flow.tainted[name] = source
    kinds = {kind: found for kind, found in kinds.items() if found != source}
    if kinds and source is not None:
        flow.by_kind[name] = kinds
    else:
        flow.by_kind.pop(name, None)


def _sanitised_in(value: ast.expr, flow: Flow, qualified: NameOf) -> bool:
    """Whether a sanitiser of some kinds, or a name that went through one, is in the value."""
    return any((isinstance(node, ast.Call) and _sanitiser_kinds(node, flow, qualified))
               or (isinstance(node, ast.Name) and node.id in flow.by_kind)
               for node in walk(value))


def _sanitiser_kinds(call: ast.Call, flow: Flow, qualified: NameOf) -> frozenset[str] | None:
    """The kinds of sink a call's value is made safe for. A function the module defines is
    judged by what it returns, not by its name (a `secure_filename` of its own that returns
    its argument sanitises nothing)."""
    if isinstance(call.func, ast.Name) and call.func.id in flow.helper_names \
            and flow.helpers is not None and _carries_input(call, flow):
        # Only a call handed input can sanitise anything: the others cost no look.
        own = flow.helpers(call.func.id)
        if own is not None:
            return own.sanitises or None
    return SANITISERS.get(qualified(call))


def _carries_input(call: ast.Call, flow: Flow) -> bool:
    return any((isinstance(n, ast.Name) and (n.id in flow.tainted or n.id == "request"))
               or (isinstance(n, ast.Attribute) and n.attr in ("argv", "environ"))
               for arg in (*call.args, *(k.value for k in call.keywords)) for n in walk(arg))


def source_of(expr: ast.expr, flow: Flow, qualified: NameOf,
              kind: SinkKind | None = None) -> Source | None:
    """The strongest source any part of the expression comes from, as a sink of this kind
    sees it (None: the program's own). Without a kind only conversions (`int`) stop it."""
    best: Source | None = None
    pending: list[ast.AST] = [expr]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Call) and _serves(_sanitiser_kinds(node, flow, qualified), kind):
            continue  # what a sanitiser returns is the program's own, for its kind of sink
        best = strongest(best, _direct_source(node, flow, qualified, kind))
        pending.extend(_carriers(node))
    return best


def _serves(kinds: frozenset[str] | None, kind: SinkKind | None) -> bool:
    return kinds is not None and (kinds == _EVERY_KIND or kind in kinds)


def _carriers(node: ast.AST) -> list[ast.AST]:
    """The parts of an expression its value is made of: not an index or a slice's bounds
    (`runs[:-keep]` is some of `runs`), not a condition (`a if keep else b`, a
    comprehension's `if`)."""
    if isinstance(node, ast.Subscript):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return [node.body, node.orelse]
    if isinstance(node, ast.comprehension):
        return [node.iter]
    return children(node)


def strongest(first: Source | None, second: Source | None) -> Source | None:
    if first is None or (second is not None and _STRENGTH[second] > _STRENGTH[first]):
        return second
    return first


_ATTRIBUTE_SOURCES: dict[str, Source] = {"sys.argv": "argv", "os.environ": "environment",
                                         "request": "request"}


def _direct_source(node: ast.AST, flow: Flow, qualified: NameOf,
                   kind: SinkKind | None = None) -> Source | None:
    if isinstance(node, ast.Name):
        incoming = node.id == "request" and not flow.outgoing
        if node.id in flow.tainted:
            return flow.source(node.id, kind)
        return "request" if incoming else None
    if isinstance(node, ast.Attribute):
        dotted = _dotted(node)
        if dotted in flow.tainted:
            return flow.source(dotted, kind)
        if flow.outgoing and dotted.startswith("request."):
            return flow.tainted.get("request")  # the program's own request: a parameter
        if dotted.startswith(_REQUEST_ROOTS) or (
                dotted.startswith("req.") and dotted.split(".")[1] in REQUEST_DATA):
            return "request"
        return _ATTRIBUTE_SOURCES.get(dotted)
    if isinstance(node, ast.Call):
        return _call_source(qualified(node))
    return None


def _call_source(name: str) -> Source | None:
    method = name.rsplit(".", 1)[-1]
    if method in _REQUEST_METHODS and name.startswith(("self.", "request.")):
        return "request"
    if method in _ARCHIVE_LISTINGS and "." in name:
        return "archive"
    if name in ("input", "builtins.input"):
        return "input"
    return "environment" if name in _ENVIRONMENT else None


def formatted_for(expr: ast.expr, flow: Flow, qualified: NameOf, kind: SinkKind) -> bool:
    """Built by formatting with a value that is not made safe for this kind of sink: every
    value a sanitiser of the kind returns (`f"ls {shlex.quote(name)}"` for a shell) is
    text the program chose."""
    return is_formatted(expr) and not all(
        _safe_for(part, flow, qualified, kind) for part in formatted_values(expr))


def _safe_for(part: ast.expr, flow: Flow, qualified: NameOf, kind: SinkKind) -> bool:
    """A constant, a sanitiser's value for this kind, or a name holding one."""
    if isinstance(part, ast.Constant):
        return True
    if isinstance(part, ast.Call):
        return _serves(_sanitiser_kinds(part, flow, qualified), kind)
    if isinstance(part, ast.Name):
        kinds = flow.by_kind.get(part.id)
        value = flow.assigned.get(part.id)
        return (kinds is not None and kind in kinds and kinds[kind] is None) or (
            part.id not in flow.tainted and isinstance(value, ast.Call)
            and _serves(_sanitiser_kinds(value, flow, qualified), kind))
    return False


def _dotted(node: ast.AST) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call):
        parts.append(_dotted(node.func) + "()")
    return ".".join(reversed(parts))
