"""The fast walker visits what `ast` visits, in the same order, contexts and operators
aside: checked on every module of reviewbot itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from reviewbot.code.python_walk import children, own_nodes, statements, walk

_NOT_CODE = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)
MODULES = sorted((Path(__file__).parents[2] / "reviewbot").rglob("*.py"))


def _code(nodes: list[ast.AST]) -> list[ast.AST]:
    return [node for node in nodes if not isinstance(node, _NOT_CODE)]


def _own_nodes(statement: ast.stmt, skipped: type | tuple[type, ...]) -> list[ast.AST]:
    found, pending = [], [statement]
    while pending:
        node = pending.pop()
        found.append(node)
        pending += [c for c in ast.iter_child_nodes(node)
                    if not isinstance(c, skipped) and not isinstance(c, _NOT_CODE)]
    return found


@pytest.mark.parametrize("path", MODULES[::7], ids=lambda p: p.name)
def test_the_walker_sees_what_ast_sees(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert list(walk(tree)) == _code(list(ast.walk(tree)))
    every_statement = [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]
    assert {id(s) for s in statements(tree.body)} == {id(s) for s in every_statement}
    for statement in every_statement:
        assert own_nodes(statement) == _own_nodes(statement, (ast.stmt, ast.excepthandler))
        assert own_nodes(statement, handlers=True) == _own_nodes(statement, ast.stmt)
        assert children(statement) == _code(list(ast.iter_child_nodes(statement)))


def test_match_cases_and_except_clauses_hold_statements() -> None:
    tree = ast.parse("match x:\n    case 1:\n        def f(): pass\n"
                     "try:\n    pass\nexcept E as e:\n    class C: pass\n")
    names = {getattr(s, "name", None) for s in statements(tree.body)}
    assert {"f", "C"} <= names
