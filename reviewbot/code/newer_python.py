"""Python newer than the running interpreter, read through a rewrite the interpreter parses.

CPython parses its own version's grammar only: on 3.11 one `type X = int` line makes a whole
module "not parse", and its rules would be left with line patterns. tree-sitter's grammar
knows the newer syntax. When it reads the file without an error, the newer constructs are
rewritten into older syntax on the same lines, and the rewrite is parsed instead:

- a type parameter list (`def f[T]`, `class Box[T]`) becomes blanks, and `type X = v` the
  assignment `X = v` (the alias's value is code: it stays where it is);
- a type parameter's bound or constraints are code too (evaluated lazily, but run): one that
  holds more than a type (a call, a lambda) is parsed on its own and placed, on its own
  lines, as a statement just before its definition, so the rules still see it;
- `except A, B:` becomes `except(A, B):`;
- a template string `t"..."` is read as a call of its interpolated values: a template is
  not a formatted string (an API taking one escapes the values), but its values are code;
- an f-string that reuses its quotes inside, or has a backslash or a comment in an
  expression, gets the other quote, and blanks for the escapes and the comments; one that
  cannot (a line break in a one-line string's expression, quotes nested three deep) becomes
  an empty tuple in the rewrite, replaced after the parse by the f-string's own tree, built
  from tree-sitter's reading of it (code/newer_fstrings.py); only one whose expressions do
  not parse even alone keeps the tuple, and its lines are named as not followed.

The rewrite only ever blanks type-level syntax: a call left inside a blanked range that no
statement carries on makes its lines "not followed" (checked by line patterns), never lost.
This runs only when `ast.parse` fails, so a file that parses never loads tree-sitter.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeGuard

from reviewbot.code.newer_fstrings import built, substitute

if TYPE_CHECKING:
    from tree_sitter import Node

RUNNING = sys.version_info[:2]

# Each construct the rewrite reads, with the Python version that introduced it.
CONSTRUCTS: dict[str, tuple[int, int]] = {
    "type parameters": (3, 12), "type aliases": (3, 12), "f-strings of PEP 701": (3, 12),
    "type parameter defaults": (3, 13),
    "except without parentheses": (3, 14), "template strings": (3, 14),
}
# Nodes that run something: one of them in a blanked range must reach the rules some way.
_CODE = frozenset({"call", "await", "lambda", "named_expression", "yield", "interpolation",
                   "list_comprehension", "set_comprehension", "dictionary_comprehension",
                   "generator_expression"})
_PYTHON2 = {"print_statement": "a print statement", "exec_statement": "an exec statement"}
# What a template string is read as: a call no rule knows, holding the interpolated values.
TEMPLATE = "__template__"


class NewerModule(ast.Module):
    """A module read through the rewrite: the newer constructs it uses, and the lines whose
    code could not be followed (rules check those with line patterns)."""

    constructs: tuple[str, ...]
    unfollowed: tuple[int, ...]


def version(constructs: tuple[str, ...]) -> str:
    """"3.12" for the newest version the constructs need."""
    major, minor = max(CONSTRUCTS[c] for c in constructs)
    return f"{major}.{minor}"


def running() -> str:
    return f"{RUNNING[0]}.{RUNNING[1]}"


@dataclass(frozen=True)
class _Edit:
    start: int  # byte offsets in the source
    end: int
    text: bytes


@dataclass
class _Rewrite:
    source: bytes
    edits: list[_Edit] = field(default_factory=list)
    # Ranges replaced whole (an f-string that cannot be rewritten): edits inside them drop.
    neutralised: list[tuple[int, int]] = field(default_factory=list)
    # Bounds that hold code: (byte range, the definition's line and column).
    carried: list[tuple[Node, tuple[int, int]]] = field(default_factory=list)
    templates: set[tuple[int, int]] = field(default_factory=set)
    # F-strings no older syntax holds, by where they start: built as trees after the parse.
    built: dict[int, Node] = field(default_factory=dict)
    constructs: set[str] = field(default_factory=set)
    unfollowed: set[int] = field(default_factory=set)
    blanked: list[tuple[int, int]] = field(default_factory=list)


def read_newer(text: str, error: str) -> tuple[ast.Module | None, str | None]:
    """The module read through the rewrite, or None and what the file is instead (Python 2,
    not valid Python, newer syntax the rewrite cannot read). `error` is CPython's complaint."""
    source = text.encode("utf-8", "surrogatepass")
    root = _parse(source)
    python2 = next(((n, _PYTHON2[n.type]) for n in _walk(root) if n.type in _PYTHON2), None)
    if python2 is not None:
        return None, (f"is not Python 3 that parses (Python 2: {python2[1]} on line "
                      f"{python2[0].start_point[0] + 1})")
    if root.has_error and not _errors_in_type_parameters(root):
        return None, f"is not valid Python ({error})"
    rewrite = _Rewrite(source)
    for node in _walk(root):
        _collect(node, rewrite)
    constructs = tuple(sorted(rewrite.constructs, key=list(CONSTRUCTS).index))
    newer = tuple(c for c in constructs if CONSTRUCTS[c] > RUNNING)
    if not newer:
        return None, f"does not parse with Python {running()} ({error})"
    try:
        tree = _parsed(rewrite, root)
    except SyntaxError as again:
        return None, (f"is not valid Python, even read as Python {version(newer)} (line "
                      f"{again.lineno}: {again.msg})")
    except (ValueError, MemoryError, RecursionError):
        return None, f"uses Python {version(newer)} syntax ({', '.join(newer)}) and is nested " \
                     "too deeply for the parser"
    module = NewerModule(body=tree.body, type_ignores=tree.type_ignores)
    module.constructs = newer
    module.unfollowed = tuple(sorted(rewrite.unfollowed))
    return module, None


def _parse(source: bytes) -> Node:
    from reviewbot.code.syntax import parser_for

    parser = parser_for("python")
    if parser is None:  # Python is one of syntax's grammars: a missing one is a broken install
        raise LookupError("tree-sitter's Python grammar is missing: reinstall reviewbot")
    return parser.parse(source).root_node


def _errors_in_type_parameters(root: Node) -> bool:
    """Whether tree-sitter's only errors are inside type parameter lists: its grammar lacks
    3.13's defaults (`def f[T=int]`), and the list is blanked whole anyway."""
    for node in _walk(root):
        if node.type == "ERROR" or node.is_missing:
            parent = node.parent
            while parent is not None and parent.type != "type_parameter":
                parent = parent.parent
            if parent is None:
                return False
    return True


def _walk(root: Node) -> Iterator[Node]:
    """Every node, in source order, without recursion (a hostile file nests deeply)."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def _collect(node: Node, rewrite: _Rewrite) -> None:
    if node.type in ("function_definition", "class_definition"):
        parameters = node.child_by_field_name("type_parameters")
        if parameters is not None:
            _parameters(rewrite, parameters)
            _blank(rewrite, parameters.start_byte, parameters.end_byte, b"")
            _carry_bounds(rewrite, parameters, node.start_point)
    elif node.type == "type_alias_statement":
        _alias(node, rewrite)
    elif node.type == "except_clause":
        _except(node, rewrite)
    elif node.type == "string" and not _inside_fstring(node):
        _string(node, rewrite)


def _alias(node: Node, rewrite: _Rewrite) -> None:
    """`type X[T] = v` -> `X = v` (padded): the value stays code at its place."""
    left = node.child_by_field_name("left")
    if left is None:
        return
    rewrite.constructs.add("type aliases")
    name = next((n for n in _walk(left) if n.type == "identifier"), None)
    if name is None or name.text is None:
        return
    _blank(rewrite, node.start_byte, left.end_byte, name.text)
    parameters = next((n for n in _walk(left) if n.type == "type_parameter"), None)
    if parameters is not None:
        _parameters(rewrite, parameters)
        _carry_bounds(rewrite, parameters, node.start_point)


def _parameters(rewrite: _Rewrite, parameters: Node) -> None:
    """A type parameter list tree-sitter could not read whole holds defaults (3.13): its
    bounds are not told apart from its defaults, so code in it is not followed."""
    rewrite.constructs.add("type parameters")
    if parameters.has_error:
        rewrite.constructs.add("type parameter defaults")
        if b"(" in (parameters.text or b""):
            rewrite.unfollowed.update(range(parameters.start_point[0] + 1,
                                            parameters.end_point[0] + 2))


def _except(node: Node, rewrite: _Rewrite) -> None:
    """`except A, B:` (3.14) -> `except(A, B):`."""
    values = [child for child in node.children if node.field_name_for_child(
        node.children.index(child)) == "value"]
    if len(values) < 2:
        return
    rewrite.constructs.add("except without parentheses")
    first, last = values[0], values[-1]
    before = rewrite.source[first.start_byte - 1:first.start_byte]
    if before in (b" ", b"\t"):
        rewrite.edits.append(_Edit(first.start_byte - 1, first.start_byte, b"("))
    else:
        rewrite.edits.append(_Edit(first.start_byte, first.start_byte, b"("))
    rewrite.edits.append(_Edit(last.end_byte, last.end_byte, b")"))


def _blank(rewrite: _Rewrite, start: int, end: int, keep: bytes) -> None:
    """Spaces over [start, end) after `keep`, line breaks kept and continued with `\\`, so
    the statement goes on on the next line as before."""
    out = bytearray(b if b in b"\r\n" else 0x20 for b in rewrite.source[start:end])
    out[:len(keep)] = keep
    lines = bytes(out).split(b"\n")
    for at in range(len(lines) - 1):
        line = lines[at]
        cr = line.endswith(b"\r")
        body = line[:-1] if cr else line
        cut = len(keep) if at == 0 else 0
        body = body[:-1] + b"\\" if len(body) > cut and body.endswith(b" ") else body + b"\\"
        lines[at] = body + (b"\r" if cr else b"")
    rewrite.edits.append(_Edit(start, end, b"\n".join(lines)))
    rewrite.blanked.append((start, end))


def _carry_bounds(rewrite: _Rewrite, parameters: Node, definition: tuple[int, int]) -> None:
    """Bounds and constraints that hold code, to be placed before their definition."""
    for child in parameters.named_children:
        constrained = next((n for n in child.named_children if n.type == "constrained_type"),
                           None)
        for bound in (constrained.named_children[1:] if constrained is not None else ()):
            if any(n.type in _CODE for n in _walk(bound)):
                rewrite.carried.append((bound, definition))


def _inside_fstring(node: Node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type == "interpolation":
            return True
        parent = parent.parent
    return False


def _delimiter(string: Node) -> tuple[bytes, bytes]:
    """A string's prefix and its quote: (b"f", b'"') or (b"rb", b"'''")."""
    start = string.children[0].text or b""
    prefix = start.rstrip(b"'\"")
    return prefix, start[len(prefix):]


def _string(node: Node, rewrite: _Rewrite) -> None:
    """A top-level string: a template string's prefix, and an f-string's PEP 701 parts."""
    strings = [n for n in _walk(node) if n.type == "string"]
    for string in strings:
        prefix, _ = _delimiter(string)
        if b"t" in prefix.lower():
            rewrite.constructs.add("template strings")
            rewrite.templates.add((string.start_point[0] + 1, string.start_point[1]))
            rewrite.edits.append(_Edit(string.start_byte, string.start_byte + len(prefix),
                                       prefix.replace(b"t", b"f").replace(b"T", b"F")))
    if not any(n.type == "interpolation" for n in _walk(node)):
        return
    edits: list[_Edit] = []
    if not _fstring(node, (), edits, rewrite.source):
        whole = node.parent if node.parent is not None and \
            node.parent.type == "concatenated_string" else node
        rewrite.constructs.add("f-strings of PEP 701")
        if whole.start_byte not in rewrite.built:
            rewrite.neutralised.append((whole.start_byte, whole.end_byte))
            rewrite.built[whole.start_byte] = whole
    elif edits:
        rewrite.constructs.add("f-strings of PEP 701")
        rewrite.edits += edits


def _fstring(string: Node, enclosing: tuple[bytes, ...], edits: list[_Edit],
             source: bytes, quote: bytes | None = None) -> bool:
    """Edits that make an f-string (and the strings nested in it) 3.11 syntax, or False.
    `quote` is the one the rewrite gives it, when not its own."""
    quote = quote or _delimiter(string)[1]
    inner = (*enclosing, quote)
    for part in (n for n in string.children if n.type == "interpolation"):
        if len(quote) == 1 and part.start_point[0] != part.end_point[0]:
            return False  # a line break inside a one-line string's expression
        for node in _walk(part):
            if node.type == "comment":
                edits.append(_Edit(node.start_byte, node.end_byte,
                                   b" " * (node.end_byte - node.start_byte)))
            elif (node.type == "string" and _owner(node) == string
                  and not _nested(node, inner, edits, source)):
                return False
    return True


def _owner(node: Node) -> Node | None:
    """The string whose interpolation holds the node."""
    parent = node.parent
    while parent is not None and parent.type != "interpolation":
        parent = parent.parent
    return None if parent is None else parent.parent


def _nested(string: Node, enclosing: tuple[bytes, ...], edits: list[_Edit],
            source: bytes) -> bool:
    """A string inside an f-string's expression: the quote none of its enclosers use, its
    escapes blanked (a 3.11 expression holds no backslash)."""
    prefix, quote = _delimiter(string)
    end = string.children[-1]
    body_start = string.start_byte + len(prefix) + len(quote)
    own = [_Edit(at, at + size, b" " * size) for at, size in
           _escapes(source, body_start, end.start_byte, string)]
    body = bytearray(source[body_start:end.start_byte])
    for edit in own:
        body[edit.start - body_start:edit.end - body_start] = edit.text
    choices = [quote] if len(quote) == 3 else [quote, b"'" if quote == b'"' else b'"']
    for choice in choices:
        text = prefix + choice + bytes(body) + choice
        if choice[:1] in bytes(body) and len(choice) == 1:
            continue
        if any(delimiter in text for delimiter in enclosing):
            continue
        if choice != quote:
            edits.append(_Edit(body_start - len(quote), body_start, choice))
            edits.append(_Edit(end.start_byte, end.end_byte, choice))
        edits += own
        if b"f" in prefix.lower() or b"t" in prefix.lower():
            return _fstring(string, enclosing, edits, source, choice)
        return True
    return False


def _escapes(source: bytes, start: int, end: int, string: Node) -> Iterator[tuple[int, int]]:
    """Each backslash with the character after it, outside the string's own expressions."""
    holes = [(n.start_byte, n.end_byte) for n in string.children if n.type == "interpolation"]
    at = start
    while at < end:
        if source[at] == 0x5C and not any(a <= at < b for a, b in holes):
            size = 1 + _char_size(source, at + 1)
            yield at, min(size, end - at)
            at += size
        else:
            at += 1


def _char_size(source: bytes, at: int) -> int:
    if at >= len(source):
        return 0
    lead = source[at]
    return 1 if lead < 0xC0 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


def _applied(rewrite: _Rewrite, start: int, end: int) -> bytes:
    """The source between two offsets with the rewrite's edits inside them. An edit inside a
    larger one (an f-string's quote in a blanked type parameter list) gives way to it."""
    out = bytearray(rewrite.source[start:end])
    inside = [e for e in rewrite.edits if start <= e.start and e.end <= end] + [
        _Edit(a, b, _neutral(rewrite.source[a:b])) for a, b in rewrite.neutralised
        if start <= a and b <= end]
    outermost = [e for e in inside if not any(
        o is not e and o.start <= e.start and e.end <= o.end and o.end - o.start > e.end - e.start
        for o in inside)]
    last = end
    # Last first, so each edit's offsets still hold; one range is replaced once (two parts of
    # one concatenation neutralise it twice).
    for edit in sorted(set(outermost), key=lambda e: (e.start, e.end), reverse=True):
        if edit.end <= last:
            out[edit.start - start:edit.end - start] = edit.text
            last = edit.start
    return bytes(out)


def _neutral(text: bytes) -> bytes:
    """An empty tuple over the same lines."""
    middle = bytes(b if b in b"\r\n" else 0x20 for b in text[1:-1])
    return b"(" + middle + b")"


def _parsed(rewrite: _Rewrite, root: Node) -> ast.Module:
    text = _applied(rewrite, 0, len(rewrite.source)).decode("utf-8", "surrogatepass")
    tree = ast.parse(text)
    _check_blanked(rewrite, root)
    statements: dict[tuple[int, int], list[ast.stmt]] = {}
    for bound, definition in rewrite.carried:
        carried = _bound_statement(rewrite, bound)
        if carried is None:
            rewrite.unfollowed.update(range(bound.start_point[0] + 1, bound.end_point[0] + 2))
        else:
            statements.setdefault((definition[0] + 1, definition[1]), []).append(carried)
    _place(tree, statements)
    for string in rewrite.built.values():
        joined = built(string)
        if joined is None or not substitute(tree, (string.start_point[0] + 1,
                                                   string.start_point[1]), joined):
            rewrite.unfollowed.update(range(string.start_point[0] + 1,
                                            string.end_point[0] + 2))
    if rewrite.templates:
        _templates(tree, rewrite.templates)
    return tree


def _check_blanked(rewrite: _Rewrite, root: Node) -> None:
    """Code in a blanked range that no carried bound holds: its lines are not followed."""
    if not rewrite.blanked:
        return
    carried = [(b.start_byte, b.end_byte) for b, _ in rewrite.carried]
    for node in _walk(root):
        if node.type in _CODE and any(a <= node.start_byte and node.end_byte <= b
                                      for a, b in rewrite.blanked) \
                and not any(a <= node.start_byte and node.end_byte <= b for a, b in carried):
            rewrite.unfollowed.update(range(node.start_point[0] + 1, node.end_point[0] + 2))


def _bound_statement(rewrite: _Rewrite, bound: Node) -> ast.stmt | None:
    """The bound as an expression statement on its own lines and columns."""
    text = _applied(rewrite, bound.start_byte, bound.end_byte).decode("utf-8",
                                                                       "surrogatepass")
    try:
        expression = ast.parse("(" + text + ")", mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    row, column = bound.start_point
    for node in ast.walk(expression):
        if isinstance(node, ast.expr):
            if node.lineno == 1:
                node.col_offset += column - 1
            if node.end_lineno == 1 and node.end_col_offset is not None:
                node.end_col_offset += column - 1
            node.lineno += row
            node.end_lineno = (node.end_lineno or 1) + row
    statement = ast.Expr(value=expression)
    ast.copy_location(statement, expression)
    return statement


def _place(tree: ast.Module, statements: dict[tuple[int, int], list[ast.stmt]]) -> None:
    """Each carried bound just before the definition whose bound it is."""
    if not statements:
        return
    for node in list(ast.walk(tree)):
        for name, value in ast.iter_fields(node):
            if not (isinstance(value, list) and value and isinstance(value[0], ast.stmt)):
                continue
            placed: list[ast.stmt] = []
            for stmt in value:
                placed += statements.get((stmt.lineno, stmt.col_offset), [])
                placed.append(stmt)
            setattr(node, name, placed)


def _templates(tree: ast.Module, starts: set[tuple[int, int]]) -> None:
    """Each template string (parsed as an f-string) becomes a call of its values; one pass a
    level, for a template inside a template's value."""
    def template(value: object) -> TypeGuard[ast.JoinedStr]:
        return isinstance(value, ast.JoinedStr) and (value.lineno, value.col_offset) in starts

    changed = True
    while changed:
        changed = False
        for node in list(ast.walk(tree)):
            for name, value in ast.iter_fields(node):
                if template(value):
                    setattr(node, name, _template_call(value))
                    changed = True
                elif isinstance(value, list) and any(template(v) for v in value):
                    setattr(node, name, [_template_call(v) if template(v) else v
                                         for v in value])
                    changed = True


def _template_call(string: ast.JoinedStr) -> ast.Call:
    values: list[ast.expr] = [v.value for v in string.values
                              if isinstance(v, ast.FormattedValue)]
    call = ast.Call(func=ast.Name(id=TEMPLATE, ctx=ast.Load()), args=values, keywords=[])
    ast.copy_location(call, string)
    ast.copy_location(call.func, string)
    return call
