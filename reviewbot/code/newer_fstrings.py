"""An f-string no older syntax can hold, built as the syntax tree Python 3.12 gives it.

code/newer_python.py rewrites most of PEP 701's f-strings into older syntax on the same
lines (another quote, blanks for escapes and comments). Some it cannot: a line break inside
a one-line string's braces, quotes nested three deep. Those are parsed as an empty tuple in
the rewrite, and built here from tree-sitter's reading of them: the text parts as
constants, each replacement field's expression parsed on its own (where it is ordinary
older Python again) at its own lines and columns, conversions and format specifications
kept, so the rules read the f-string at full strength. An expression that does not parse
on its own, even with its own f-strings built the same way, leaves the empty tuple, and its
lines are named as not followed.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from tree_sitter import Node

_MAX_DEPTH = 32
Located = TypeVar("Located", bound=ast.expr)


def built(node: Node, depth: int = 0) -> ast.JoinedStr | None:
    """The f-string (or a concatenation holding one) as a JoinedStr at its place."""
    strings = [c for c in node.children if c.type == "string"] \
        if node.type == "concatenated_string" else [node]
    values: list[ast.expr] = []
    for string in strings:
        for part in string.children:
            if part.type == "string_content":
                values.append(_text(part))
            elif part.type == "interpolation":
                value = _field(part, depth)
                if value is None:
                    return None
                values.append(value)
    joined = ast.JoinedStr(values=values)
    return _located(joined, node)


def _text(part: Node) -> ast.Constant:
    """A text part as a constant (`{{` is a brace; escapes are kept as written: the rules read
    the words, not the characters)."""
    raw = (part.text or b"").decode("utf-8", "surrogatepass")
    return _located(ast.Constant(value=raw.replace("{{", "{").replace("}}", "}")), part)


def _field(part: Node, depth: int) -> ast.FormattedValue | None:
    expression = next((c for c in part.named_children
                       if c.type not in ("type_conversion", "format_specifier")), None)
    if expression is None:
        return None
    value = parsed_expression(expression, depth)
    if value is None:
        return None
    conversion = next((c for c in part.children if c.type == "type_conversion"), None)
    spec = next((c for c in part.children if c.type == "format_specifier"), None)
    format_spec: ast.expr | None = None
    if spec is not None:
        format_spec = _spec(spec, depth)
        if format_spec is None:
            return None
    code = (conversion.text or b"!")[-1] if conversion is not None else -1
    return _located(ast.FormattedValue(value=value, conversion=code, format_spec=format_spec),
                    part)


def _spec(spec: Node, depth: int) -> ast.JoinedStr | None:
    """`:>{width}`: its text between the fields as constants, its fields as values."""
    values: list[ast.expr] = []
    source = spec.text or b""
    at = 1 if source.startswith(b":") else 0
    for child in spec.children:
        if child.type != "format_expression":
            continue
        gap = source[at:child.start_byte - spec.start_byte]
        if gap:
            values.append(_located(ast.Constant(value=gap.decode("utf-8", "surrogatepass")),
                                   child))
        inner = _field(child, depth)
        if inner is None:
            return None
        values.append(inner)
        at = child.end_byte - spec.start_byte
    if source[at:]:
        values.append(_located(ast.Constant(value=source[at:].decode("utf-8",
                                                                     "surrogatepass")), spec))
    return _located(ast.JoinedStr(values=values), spec)


def parsed_expression(node: Node, depth: int = 0) -> ast.expr | None:
    """An expression's text parsed on its own, at its lines and columns: its own PEP 701
    f-strings (quotes reused, a line break in braces) built as above."""
    if depth > _MAX_DEPTH or node.text is None:
        return None
    if node.type in ("string", "concatenated_string") and any(
            c.type == "interpolation" for s in (node, *node.children) for c in s.children):
        return built(node, depth + 1)
    source = node.text
    inner = [s for s in _top_strings(node) if any(c.type == "interpolation"
                                                   for c in s.children)]
    holes: dict[tuple[int, int], Node] = {}
    text = bytearray(source)
    for string in inner:
        start, end = string.start_byte - node.start_byte, string.end_byte - node.start_byte
        text[start:end] = _blank(source[start:end])
        holes[_point(string)] = string
    try:
        expression = ast.parse(b"(" + bytes(text) + b")", mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    _shift(expression, node.start_point[0], node.start_point[1])
    for string in inner:
        replacement = built(string, depth + 1)
        if replacement is None:
            return None
        if _hole(expression, _point(string)):
            expression = replacement
        elif not _replace(expression, _point(string), replacement):
            return None
    return expression


def _top_strings(node: Node) -> list[Node]:
    """The strings inside an expression that no other string holds."""
    found: list[Node] = []
    pending = list(reversed(node.children))
    while pending:
        child = pending.pop()
        if child.type in ("string", "concatenated_string"):
            found.append(child)
        else:
            pending.extend(reversed(child.children))
    return found


def _blank(text: bytes) -> bytes:
    """An empty tuple over the same lines and columns."""
    middle = bytes(b if b in b"\r\n" else 0x20 for b in text[1:-1])
    return b"(" + middle + b")"


def _point(node: Node) -> tuple[int, int]:
    return node.start_point[0] + 1, node.start_point[1]


def _shift(expression: ast.expr, row: int, column: int) -> None:
    """From `(text)` parsed alone (line 1, one column in) to the text's place."""
    for node in ast.walk(expression):
        if isinstance(node, ast.expr | ast.keyword | ast.arg):
            if node.lineno == 1:
                node.col_offset += column - 1
            if getattr(node, "end_lineno", None) == 1 and node.end_col_offset is not None:
                node.end_col_offset += column - 1
            node.lineno += row
            node.end_lineno = (node.end_lineno or 1) + row


def substitute(tree: ast.AST, place: tuple[int, int], replacement: ast.expr) -> bool:
    """Put the replacement where the empty tuple at `place` stands."""
    return _replace(tree, place, replacement)


def _replace(tree: ast.AST, place: tuple[int, int], replacement: ast.expr) -> bool:
    for node in ast.walk(tree):
        for name, value in ast.iter_fields(node):
            if _hole(value, place):
                setattr(node, name, replacement)
                return True
            if isinstance(value, list):
                for at, item in enumerate(value):
                    if _hole(item, place):
                        value[at] = replacement
                        return True
    return False


def _hole(value: object, place: tuple[int, int]) -> bool:
    return isinstance(value, ast.Tuple) and not value.elts \
        and (value.lineno, value.col_offset) == place


def _located(node: Located, where: Node) -> Located:
    node.lineno, node.col_offset = where.start_point[0] + 1, where.start_point[1]
    node.end_lineno, node.end_col_offset = where.end_point[0] + 1, where.end_point[1]
    return node
