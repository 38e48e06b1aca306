"""Reading Python newer than the running interpreter through a rewrite."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from reviewbot.code.newer_python import NewerModule
from reviewbot.code.python_parse import parse_python


def _calls(tree: ast.Module | None) -> list[tuple[int, str]]:
    assert tree is not None
    return sorted((node.lineno, ast.unparse(node)) for node in ast.walk(tree)
                  if isinstance(node, ast.Call))


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_every_call_keeps_its_line_through_the_rewrite(newline: str) -> None:
    """The rewrite keeps the file's lines: each call is found on the line that holds it,
    however many lines a type parameter list or an alias spans."""
    code = newline.join([
        "type Pair[", "    T,", "] = tuple[T, T]", "def run[", "    T: (make(1)),",
        "](x: T):", '    return f"{x["k"]}" + g(2)', "try:", "    h(3)",
        "except A, B:", "    k(4)", 'msg = t"{m(5)}"', ""])
    tree, why = parse_python(code)
    assert why is None and isinstance(tree, NewerModule)
    assert _calls(tree) == [(5, "make(1)"), (7, "g(2)"), (9, "h(3)"), (11, "k(4)"),
                            (12, "__template__(m(5))"), (12, "m(5)")]
    assert tree.unfollowed == ()


def test_a_file_that_parses_never_loads_tree_sitter() -> None:
    """The hook pays for tree-sitter only on a file the interpreter cannot parse."""
    script = ("import sys\nfrom reviewbot.code.python_parse import parse_python\n"
              "parse_python('x = 1\\n')\nassert 'tree_sitter' not in sys.modules\n"
              "parse_python('type X = int\\n')\nassert 'tree_sitter' in sys.modules\n")
    subprocess.run([sys.executable, "-c", script], check=True)
