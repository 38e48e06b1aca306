"""Walking a Python syntax tree faster than `ast.walk`, which the rules do for most of their
time on a new file: the children of each kind of node are read from the fields that can hold
nodes, and the nodes that carry no code of their own (`Load`, `Store`, `Add`, `Eq`: a
context or an operator, always reached through their parent's field) are not visited.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator

# Fields that hold names, numbers, flags and contexts or operators, never code.
_NOT_CODE = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "name", "asname", "module",
                       "level", "kind", "type_comment", "conversion", "is_async", "simple"})
_FIELDS: dict[type, tuple[str, ...]] = {}
# Where statements hold statements (an except clause or a match case holds them in its
# own `body`).
STATEMENT_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _fields(kind: type) -> tuple[str, ...]:
    fields = _FIELDS.get(kind)
    if fields is None:
        fields = _FIELDS[kind] = tuple(
            name for name in getattr(kind, "_fields", ())
            if name not in _NOT_CODE and not (kind is ast.Constant and name == "value"))
    return fields


def children(node: ast.AST) -> list[ast.AST]:
    """The node's child nodes, as `ast.iter_child_nodes` gives them (contexts and
    operators left out)."""
    found: list[ast.AST] = []
    fields = _FIELDS.get(node.__class__)
    for name in _fields(node.__class__) if fields is None else fields:
        value = getattr(node, name, None)
        if value.__class__ is list:
            found += [item for item in value if isinstance(item, ast.AST)]
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """The node and everything under it, in `ast.walk`'s order (contexts and operators left
    out)."""
    pending = deque([node])
    while pending:
        node = pending.popleft()
        pending.extend(children(node))
        yield node


def own_nodes(statement: ast.stmt, handlers: bool = False) -> list[ast.AST]:
    """A statement's nodes without its nested statements (they are walked on their own),
    depth first; with its except clauses' own nodes (`except ValueError as e`) if asked.
    (`children` written out: this runs for every statement of a new file.)"""
    skipped = ast.stmt if handlers else ast.stmt | ast.excepthandler
    found: list[ast.AST] = []
    pending: list[ast.AST] = [statement]
    while pending:
        node = pending.pop()
        found.append(node)
        fields = _FIELDS.get(node.__class__)
        for name in _fields(node.__class__) if fields is None else fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                pending += [item for item in value
                            if isinstance(item, ast.AST) and not isinstance(item, skipped)]
            elif isinstance(value, ast.AST) and not isinstance(value, skipped):
                pending.append(value)
    return found


def statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement in a body and in the bodies inside it (functions and classes are
    statements: they are all here, without walking a single expression)."""
    pending = list(body)
    while pending:
        statement = pending.pop()
        yield statement
        for name in STATEMENT_BODIES:
            for inner in getattr(statement, name, ()):
                if isinstance(inner, ast.stmt):
                    pending.append(inner)
                else:  # an except clause or a match case: its body holds statements
                    pending += getattr(inner, "body", [])
