"""Text as a Python expression builds it, read from the syntax alone: whether a string is
built by formatting (an f-string with values, `%`, `.format`, `+`, `.join`), the values it
puts into its text, and the constant text an expression holds with the module's string
constants it names (to see SQL, HTML or a shell command in a template)."""

from __future__ import annotations

import ast

from reviewbot.code.python_walk import walk


def is_formatted(expr: ast.expr) -> bool:
    """A string built from parts: an f-string with values, %, .format, + or .join."""
    if isinstance(expr, ast.JoinedStr):
        return any(isinstance(v, ast.FormattedValue) for v in expr.values)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mod):
        # `TEMPLATE % values`: a template from a constant or a name.
        return not _all_constant(expr) and (
            _has_text(expr.left) or isinstance(expr.left, ast.Name | ast.Attribute))
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return _has_text(expr) and not _all_constant(expr)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        # `.format(...)`, `.format_map(d)`, `str.format(template, ...)`, a
        # `string.Template`'s `substitute`: the same formatting in other words.
        if expr.func.attr in _FORMATTERS and (expr.args or expr.keywords):
            return True
        if expr.func.attr == "join" and isinstance(expr.func.value, ast.Constant):
            return bool(expr.args) and not _all_constant(expr.args[0])
    return False


_FORMATTERS = frozenset({"format", "format_map", "substitute", "safe_substitute"})


def formatted_values(expr: ast.expr) -> list[ast.expr]:
    """The values a formatted string puts into its text."""
    if isinstance(expr, ast.JoinedStr):
        return [v.value for v in expr.values if isinstance(v, ast.FormattedValue)]
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mod):
        right = expr.right
        values = right.elts if isinstance(right, ast.Tuple) else \
            [v for v in right.values if v is not None] if isinstance(right, ast.Dict) else [right]
        return [expr.left, *values]
    if isinstance(expr, ast.BinOp):
        return [*formatted_values(expr.left), *formatted_values(expr.right)] \
            if is_formatted(expr.left) or is_formatted(expr.right) else [expr.left, expr.right]
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        if expr.func.attr in _FORMATTERS:
            return [*expr.args, *(k.value for k in expr.keywords)]
        return list(expr.args[:1])
    return [expr]


def literal_text(expr: ast.expr, constants: dict[str, str] | None = None) -> str:
    """The constant text parts of an expression (to see SQL or HTML in a template), with
    the module's string constants it names (`QUERY % name`)."""
    parts: list[str] = []
    for node in walk(expr):
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
            parts.append(node.value if isinstance(node.value, str)
                         else node.value.decode("latin-1"))
        elif constants and isinstance(node, ast.Name) and node.id in constants:
            parts.append(constants[node.id])
    return " ".join(parts)


def module_constants(tree: ast.Module) -> dict[str, str]:
    """`NAME = "text"` (or `NAME: Final = "text"`) at module level and in class bodies."""
    found: dict[str, str] = {}
    for statement in (*tree.body, *(s for c in tree.body if isinstance(c, ast.ClassDef)
                                    for s in c.body)):
        targets = (statement.targets if isinstance(statement, ast.Assign) else
                   [statement.target] if isinstance(statement, ast.AnnAssign) else [])
        value = getattr(statement, "value", None)
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            for target in targets:
                if isinstance(target, ast.Name):
                    found[target.id] = value.value
    return found


def _has_text(expr: ast.expr) -> bool:
    return any(isinstance(n, ast.Constant) and isinstance(n.value, str | bytes)
               for n in walk(expr))


def _all_constant(expr: ast.expr) -> bool:
    return all(isinstance(n, ast.Constant | ast.BinOp | ast.operator | ast.List | ast.Tuple
                          | ast.Dict | ast.expr_context) for n in walk(expr))
