"""SQL injection in Python: a query built by formatting, or taken from input, handed to a
runner; placeholders quoted or refilled in a loop; Django's `extra` and expressions that
format their SQL; SQL text built in one place and run in another."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from reviewbot.code.python_walk import walk
from reviewbot.lazy_re import lazy_re
from reviewbot.levels import Severity
from reviewbot.rules.python_ast import PythonFile, Report, line_pattern, nodes_of, rule
from reviewbot.rules.python_sinks import RUNNERS, sql_arguments, wrapped
from reviewbot.rules.python_strings import is_formatted, literal_text
from reviewbot.rules.python_uses import OUTSIDE, Use, from_source, report_use, use_of

_SQL = lazy_re(r"\b(select\b[\s\S]*\bfrom|insert\s+into|update\b[\s\S]*\bset|delete\s+from|"
                  r"drop\s+table|where|explain|order\s+by)\b", re.IGNORECASE)


_QUERY_START = lazy_re(r"^\s*(select|insert|update|delete|with)\b", re.IGNORECASE)


# Django's raw fragments: SQL by definition, keywords or not.
_FRAGMENTS = frozenset({"extra", "RawSQL"})


# Calls that wrap SQL (or run it under a generic name: asyncpg's `fetch*`, databases'
# `fetch_*`): only with SQL text in sight.
_WRAPPERS = frozenset({"text", "exec", "literal_column", "query", "fetch", "fetchrow",
                       "fetchval", "fetch_all", "fetch_one", "fetch_val"}) | _FRAGMENTS


# A quoted placeholder used as a value in SQL (`WHERE name = '%s'`: compared, matched,
# listed or inserted; not prose such as "on platform '%s'") is only ever filled by string
# formatting: a database driver's parameters are never quoted.
_QUOTED_VALUE = lazy_re(r"""(=|<>|<|>|\blike|\bin\s*\(|\bvalues\s*\(|,)\s*"""
                           r"""(['"])(%s|%\(\w+\)s|\{\w*\})\2""", re.IGNORECASE)


_SINGLE_QUOTED_PLACEHOLDER = lazy_re(r"'(%s|%\(\w+\)s|\{\w*\})'")


# Functions that build SQL: Django's as_sql() and its per-database variants, query builders.
_SQL_FUNCTION = lazy_re(r"sql|query|^as_(postgresql|mysql|oracle|sqlite)$", re.IGNORECASE)


def sql_injection(parsed: PythonFile) -> Iterator[Report]:
    reported: set[int] = set()
    for call, name in parsed.scope_calls:
        method = name.rsplit(".", 1)[-1]
        if (method not in RUNNERS and method not in _WRAPPERS) or name in ("exec", "eval") \
                or (method == "raw" and _module_function(call, parsed)):
            continue
        for arg in sql_arguments(call, method):
            use = use_of(parsed, call, method, arg, "sql")
            found = _sql_finding(parsed, use, method)
            if found is not None:
                reported.update(id(node) for part in (use.value, *use.chain)
                                for node in walk(part))
                yield from report_use(parsed, use, *found)
    for call, name, arg, param, path in wrapped(parsed, "sql"):
        use = use_of(parsed, call, name, arg, "sql")
        text = literal_text(use.value, parsed.constants)
        if not ((use.formatted and _SQL.search(text)) or use.source in OUTSIDE):
            continue
        built = (("built by string formatting" if use.formatted else "taken")
                 + from_source(use.source))
        reported.update(id(node) for part in (use.value, *use.chain) for node in walk(part))
        yield from report_use(parsed, use, "error", (
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


_NAMED_QUOTED = lazy_re(r"""(['"])%\((\w+)\)s\1""")


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
_DISPLAY_FUNCTIONS = lazy_re(r"^(__str__|__repr__|last_executed_query|mogrify)$|debug")


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


def _sql_finding(parsed: PythonFile, use: Use,
                 method: str) -> tuple[Severity, str, str] | None:
    text = literal_text(use.value, parsed.constants)
    sql = bool(_SQL.search(text)) or method in _FRAGMENTS
    outside = use.source in OUTSIDE
    suggestion = "Use a parameterised query: cursor.execute(\"... WHERE id = %s\", (value,))."
    if use.formatted:
        if not sql and method not in RUNNERS:
            return None
        # Parameters passed along: the formatting is probably structure (a table name,
        # a list of placeholders), not values, unless input is in it.
        with_params = len(use.call.args) > 1 or any(
            k.arg in ("params", "parameters", "args") for k in use.call.keywords)
        return ("error" if outside or (sql and not with_params) else "warning",
                f"SQL built by string formatting{from_source(use.source)} is passed to `{method}`: "
                "values in it can change the query (SQL injection).", suggestion)
    if outside and method in RUNNERS:
        return ("error", f"`{method}` runs SQL that comes{from_source(use.source)}.", suggestion)
    return None


RULES = (
    rule("python.sql-injection", "SQL built by string formatting", "warning", "security",
         "Formatted SQL lets values change the query.", sql_injection,
         (line_pattern(r"\.execute(many)?\s*\(\s*(f[\"']|[\"'][^\"']*[\"']\s*[%+]|"
                       r"[\"'][^\"']*[\"']\.format)", "A query built by formatting is run.",
                       "warning"),), levels=("warning", "error")),
)
