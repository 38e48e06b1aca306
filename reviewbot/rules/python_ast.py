"""The Python rules' framework: checks on the syntax tree of the new file, reported on changed
lines only (the rules themselves are in the other `python_*` modules, by what they find).

Own `ast` checks rather than bandit: bandit reads files from disk and costs ~0.3 s
to import before it looks at a line (bench/hook_latency measures both); the tree
here is parsed once per file from the content under review (the index, in staged
mode), and names are resolved through the file's imports (`from subprocess import
run` is still subprocess.run).
"""

from __future__ import annotations

import ast
import heapq
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from typing import Literal, cast

import msgspec

from reviewbot.code.lexical import is_comment
from reviewbot.code.newer_python import NewerModule, running, version
from reviewbot.code.python_walk import STATEMENT_BODIES, own_nodes, walk
from reviewbot.code.whole_text import compile_whole_text
from reviewbot.lazy_re import lazy_re
from reviewbot.levels import Severity
from reviewbot.rules.base import FileChange, Hit, ProjectFiles, RuleBase, RuleInfo
from reviewbot.rules.python_calls import CallShapes, import_aliases
from reviewbot.rules.python_flow import FlowIndex
from reviewbot.rules.python_strings import literal_text, module_constants
from reviewbot.schema.records import Category

StringKind = Literal["formatted", "constant", "dynamic"]
Report = tuple[ast.AST, Severity | None, str, str]


class PythonFile(msgspec.Struct, frozen=True):
    """The parts of a parsed file that rules look at: only statements touching the change."""

    aliases: dict[str, str]
    calls: tuple[tuple[ast.Call, str], ...]
    nodes: tuple[ast.AST, ...]
    # Every call of the functions the change touches, changed lines or not: a command built
    # on an added line may be run on an unchanged one.
    scope_calls: tuple[tuple[ast.Call, str], ...]
    flow: FlowIndex
    # Neither a program, test code, an example nor documentation: a print in it is not output.
    library: bool
    # The added lines.
    changed: LineSet
    # The module's string constants (`QUERY = "SELECT ..."`), to read `QUERY % name`.
    constants: dict[str, str]
    # Test code as the base declares it (rules/quieting.py): its parameters are the tests'.
    test_code: bool = False
    # The new file's text, for a rule to see in one search whether it can apply at all.
    text: str = ""
    # The whole module, and what rules computed on it once (a module's wrapper functions).
    tree: ast.Module | None = None
    memo: dict[str, object] = msgspec.field(default_factory=dict)
    path: str = ""
    # The reviewed side's other files (the modules this one imports).
    project: ProjectFiles = msgspec.field(default_factory=ProjectFiles)
    # The module's calls read as they run (rules/python_calls.py).
    shapes: CallShapes = msgspec.field(default_factory=lambda: CallShapes(None, {}))


def nodes_of(parsed: PythonFile, *kinds: type[ast.AST]) -> tuple[ast.AST, ...]:
    """The file's walked nodes of exactly these kinds, in order: several rules loop over a
    few kinds each, and one index of the nodes by kind spares each a pass over all of them."""
    index = cast(dict[type, list[int]] | None, parsed.memo.get("nodes_by_kind"))
    if index is None:
        index = {}
        for at, node in enumerate(parsed.nodes):
            index.setdefault(node.__class__, []).append(at)
        parsed.memo["nodes_by_kind"] = index
    found = heapq.merge(*(index.get(kind, ()) for kind in kinds))
    return tuple(parsed.nodes[at] for at in found)


def python_file(change: FileChange) -> PythonFile | None:
    """The parsed new file, once per change however many rules ask."""
    if "python_file" not in change.memo:
        tree = change.python_tree
        change.memo["python_file"] = None if tree is None else _analyse(
            change.path, tree, change.new_text, frozenset(change.added_by_line),
            change.project, is_library(change.path, change.new_text, change.kind.tags),
            "test_file" in change.kind.tags)
    return cast(PythonFile | None, change.memo["python_file"])


def _analyse(path: str, tree: ast.Module, text: str | None,
             changed: frozenset[int], project: ProjectFiles, library: bool,
             test_code: bool = False) -> PythonFile:
    # Walking only the statements that touch added lines keeps a hook fast on big files.
    lines = LineSet(tuple(sorted(changed)))
    touched = _touched(tree.body, lines)
    nodes = [node for stmt in touched for node in own_nodes(stmt)]
    # Imports are statements: the touched ones are all the walked nodes can hold.
    aliases = import_aliases((*_imports(tree.body),
                              *(s for s in touched if isinstance(s, ast.Import | ast.ImportFrom))))

    shapes = CallShapes(tree, aliases)
    name_of = shapes.name_of
    calls = tuple(shapes.normalised(node) for node in nodes if isinstance(node, ast.Call))
    # Functions with unchanged lines: their other calls may use what the change builds.
    partly = [f for f in _innermost_functions(touched)
              if not lines.covers(f.lineno, f.end_lineno or f.lineno)]
    scope_calls = calls + tuple(
        shapes.normalised(node) for function in partly for node in walk(function)
        if isinstance(node, ast.Call) and not on_lines(node, lines))
    return PythonFile(aliases=aliases, calls=calls, nodes=tuple(nodes),
                      scope_calls=scope_calls, flow=FlowIndex(tree, name_of, text or ""),
                      library=library, test_code=test_code, changed=lines,
                      constants=module_constants(tree), text=text or "", tree=tree,
                      path=path, project=project, shapes=shapes)


def enclosing_function(tree: ast.Module,
                       line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost function holding a line, found by descending through the statements
    that hold it (no walk of the whole file)."""
    found = None
    body: list[ast.stmt] = tree.body
    while True:
        holder = next((s for s in body if s.lineno <= line <= (s.end_lineno or s.lineno)),
                      None)
        if holder is None:
            return found
        if isinstance(holder, ast.FunctionDef | ast.AsyncFunctionDef):
            found = holder
        inner = [child for field in ("body", "orelse", "finalbody", "handlers")
                 for child in getattr(holder, field, [])]
        cases = [stmt for case in getattr(holder, "cases", []) for stmt in case.body]
        body = [*inner, *cases]


def module_imports(tree: ast.Module) -> list[ast.AST]:
    """Module-level imports, including those under `if`/`try`."""
    return _imports(tree.body)


def _innermost_functions(touched: list[ast.stmt]) -> list[ast.stmt]:
    """The touched functions that hold no other touched function (definitions nest or are
    disjoint, so a function holds another exactly when the next one starts inside it)."""
    functions = sorted((s for s in touched if isinstance(s, ast.FunctionDef
                                                         | ast.AsyncFunctionDef)),
                       key=lambda f: f.lineno)
    following: list[ast.stmt | None] = [*functions[1:], None]
    return [f for f, after in zip(functions, following[:len(functions)], strict=True)
            if after is None or after.lineno > (f.end_lineno or f.lineno)]


class LineSet(msgspec.Struct, frozen=True):
    """Sorted line numbers, asked about ranges in O(log n)."""

    lines: tuple[int, ...]

    def touches(self, start: int, end: int) -> bool:
        at = bisect_left(self.lines, start)
        return at < len(self.lines) and self.lines[at] <= end

    def covers(self, start: int, end: int) -> bool:
        return bisect_right(self.lines, end) - bisect_left(self.lines, start) == end - start + 1


def on_lines(node: ast.AST, lines: LineSet) -> bool:
    start = getattr(node, "lineno", 0)
    return lines.touches(start, getattr(node, "end_lineno", None) or start)


# Programs, examples and documentation, by their folder: what they print is their output.
_PROGRAM_PATH = lazy_re(r"(^|/)(__main__\.py|cli\.py|(commands?|scripts?|bin|cli|tools?|"
                           r"examples?|docs?|management/commands)/)")
# Searched over the whole file: RE2, one pass (`re` tried the alternation at every line). A
# module that exits at its top level is a program nobody imports (a GitHub Action's script).
_ENTRY_POINT_TEXT = compile_whole_text(
    r"(?m)__main__|^\s*(import argparse|from argparse |import click|from click |import typer|"
    r"def main\()|^(sys\.exit\(|raise SystemExit\b)")


def is_entry_point(path: str, text: str | None) -> bool:
    """A command-line program, an example or a documentation page's program, whose prints
    are its output: `__main__`, argparse/click/typer, a `main()`, an exit at the top level,
    or a file under commands/, scripts/, bin/, cli/, tools/, examples/, docs/."""
    return bool(_PROGRAM_PATH.search(path)
                or (text and _ENTRY_POINT_TEXT.search(text.encode())))


def is_library(path: str, text: str | None, kind: frozenset[str]) -> bool:
    """Library code: not a program (is_entry_point), and not test code or test data as the
    base declares it (`kind`, rules/quieting.py: a `tests/` folder the change invents is
    not test code). Only whether a print is a debugging leftover depends on it."""
    return "test_file" not in kind and not is_entry_point(path, text)


def _touched(body: list[ast.stmt], changed: LineSet) -> list[ast.stmt]:
    """The innermost statements whose lines include an added line."""
    found: list[ast.stmt] = []
    for stmt in body:
        if not changed.touches(stmt.lineno, stmt.end_lineno or stmt.lineno):
            continue
        found.append(stmt)
        for block in STATEMENT_BODIES:
            inner = getattr(stmt, block, None)
            if isinstance(inner, list):
                # An except clause and a match's case hold statements without being one.
                found += _touched([s for s in inner if isinstance(s, ast.stmt)]
                                  or [s for h in inner
                                      if isinstance(h, ast.ExceptHandler | ast.match_case)
                                      for s in h.body], changed)
    return found


def _imports(body: list[ast.stmt]) -> list[ast.AST]:
    """Module-level imports, including those under `if`/`try` (TYPE_CHECKING, fallbacks)."""
    found: list[ast.AST] = []
    for stmt in body:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            found.append(stmt)
        elif isinstance(stmt, ast.If | ast.Try):
            found += _imports([*stmt.body, *stmt.orelse])
    return found


def string_kind(node: ast.expr | None) -> StringKind:
    """Whether an expression is a constant string, one built by formatting, or unknown."""
    if node is None:
        return "dynamic"
    if isinstance(node, ast.Constant):
        return "constant"
    if isinstance(node, ast.JoinedStr):
        has_values = any(isinstance(v, ast.FormattedValue) for v in node.values)
        return "formatted" if has_values else "constant"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod | ast.Add):
        kinds = {string_kind(node.left), string_kind(node.right)}
        if kinds == {"constant"}:
            return "constant"
        if literal_text(node):
            return "formatted"
        return "dynamic"
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format" and isinstance(node.func.value, ast.Constant)):
        return "formatted" if node.args or node.keywords else "constant"
    if isinstance(node, ast.List | ast.Tuple):
        return "constant" if all(string_kind(e) == "constant" for e in node.elts) else "dynamic"
    return "dynamic"


def first_arg(call: ast.Call, keyword: str | None = None) -> ast.expr | None:
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def keyword_arg(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def is_const(node: ast.expr | None, value: object) -> bool:
    return isinstance(node, ast.Constant) and node.value is value


class LinePattern(msgspec.Struct, frozen=True):
    """What a rule still sees on a line of Python it cannot follow (Python 2, a file
    mid-edit, a line the newer-syntax rewrite had to leave out)."""

    pattern: re.Pattern[str]
    message: str
    # Without a tree a pattern cannot see where a value comes from: info unless the
    # pattern itself shows the danger.
    severity: Severity = "info"
    # When the same line also passes an f-string with a value in it: the evidence the tree
    # rule rates (a formatted command through a shell) is all on the line, and so is its
    # severity, whatever else in the file does not parse.
    formatted: Severity | None = None


# An f-string with a replacement field (`{{` is a brace, not a field), up to its quote.
_FORMATTED = lazy_re(r"(?<![\w'\"])[rR]?[fF][rR]?(?P<q>['\"])(?:(?!(?P=q))[^{])*"
                        r"(?:\{\{(?:(?!(?P=q))[^{])*)*\{(?!\{)")


class AstRule(RuleBase, frozen=True):
    finder: Callable[[PythonFile], Iterator[Report]]
    fallback: tuple[LinePattern, ...] = ()

    def applies_to(self, change: FileChange) -> bool:
        return change.language == "python" and bool(change.added)

    def check(self, change: FileChange) -> Iterator[Hit]:
        parsed = python_file(change)
        if parsed is None:
            yield from self._line_patterns(change, change.pattern_lines)
            return
        changed = change.added_by_line
        for node, severity, message, suggestion in self.finder(parsed):
            start = getattr(node, "lineno", 0)
            end = getattr(node, "end_lineno", None) or start
            if any(n in changed for n in range(start, end + 1)):
                yield Hit(rule_id=self.id, line=start, end_line=end, severity=severity,
                          message=message, suggestion=suggestion)
        # Lines of newer syntax the rewrite could not carry over: their code is not in the
        # tree, so patterns read them.
        unfollowed = unfollowed_lines(change.python_tree)
        if unfollowed:
            yield from self._line_patterns(change, {n: t for n, t in change.pattern_lines.items()
                                                    if n in unfollowed})

    def _line_patterns(self, change: FileChange, lines: dict[int, str]) -> Iterator[Hit]:
        """Without a tree, patterns on the added lines."""
        if change.new_text is None:
            return
        for number, text in lines.items():
            if is_comment(text, "python"):
                continue
            found = next((p for p in self.fallback if p.pattern.search(text)), None)
            if found is not None:
                severity = (found.formatted if found.formatted and _FORMATTED.search(text)
                            else found.severity)
                yield Hit(rule_id=self.id, line=number, severity=severity,
                          message=found.message + " (line pattern: the file does not parse)",
                          suggestion="")


def unfollowed_lines(tree: ast.Module | None) -> frozenset[int]:
    """The lines of a file read through the newer-syntax rewrite that it could not follow."""
    return frozenset(tree.unfollowed) if isinstance(tree, NewerModule) else frozenset()


def python_notes(change: FileChange) -> list[str]:
    """What the run should know about how a Python file was read: why it does not parse
    (newer syntax, Python 2, not valid Python), or which lines of newer syntax the rewrite
    could not follow."""
    if change.python_error:
        return [f"{change.path} {change.python_error}: checked with line patterns only"]
    tree = change.python_tree
    unfollowed = sorted(unfollowed_lines(tree))
    if not isinstance(tree, NewerModule) or not unfollowed:
        return []
    return [f"{change.path} uses Python {version(tree.constructs)} syntax "
            f"({', '.join(tree.constructs)}) that Python {running()} cannot parse: read "
            f"through a rewrite, and line{'s' if len(unfollowed) > 1 else ''} "
            f"{', '.join(map(str, unfollowed))} (code the rewrite cannot carry over) checked "
            "with line patterns only"]


def line_pattern(pattern: str, message: str, severity: Severity = "info",
                 formatted: Severity | None = None) -> LinePattern:
    return LinePattern(lazy_re(pattern), message, severity, formatted)


def rule(rule_id: str, title: str, severity: Severity, category: Category, rationale: str,
         finder: Callable[[PythonFile], Iterator[Report]],
         fallback: tuple[LinePattern, ...] = (),
         levels: tuple[Severity, ...] = ()) -> AstRule:
    info = RuleInfo(id=rule_id, title=title, severity=severity, category=category,
                    rationale=rationale, levels=levels)
    return AstRule(info=info, finder=finder, fallback=fallback)
