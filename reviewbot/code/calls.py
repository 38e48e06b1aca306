"""Calls read as expressions, not lines (JavaScript, TypeScript, Go, Java, through tree-sitter).

A line pattern sees `cp.exec(` on one line and its template literal on the next as two lines,
and `exec(cmd)` without the `const cmd = \\`ls ${dir}\\`` above it. Here each call of a
named function is rendered as one line: its comments dropped, its spacing collapsed, and each
name among its arguments that the function (or the program) assigned before the call
replaced by what was assigned (`+=` appended; three assignments deep). The line patterns then
read that rendering as they read a line.

A file is parsed only when its text names one of the calls asked about, and only up to
PARSE_LIMIT_BYTES (the run says when a file is larger); the parse is kept for the file's
other rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import cache
from typing import TYPE_CHECKING

import msgspec

from reviewbot.code.syntax import parser_for
from reviewbot.code.whole_text import WholeTextPattern, compile_whole_text

if TYPE_CHECKING:
    from tree_sitter import Node, Tree

# At most this much of a file is parsed for calls (tree-sitter reads about a megabyte a
# second on a loaded machine; a minified bundle is several): a larger file is parsed in
# windows around its added lines (WINDOW_LINES, WINDOW_BYTES each way), and a change whose
# added lines alone span more is read line by line only (the run says so).
PARSE_LIMIT_BYTES = 1_000_000
WINDOW_LINES = 200
WINDOW_BYTES = 64_000
# How many assignments deep a name's value is followed.
_DEPTH = 3
# A rendering is cut here: a call that long is no command a person wrote.
_MAX_RENDERING = 20_000

LANGUAGES = frozenset({"javascript", "typescript", "go", "java"})

_CALLS = frozenset({"call_expression", "new_expression", "method_invocation",
                    "object_creation_expression"})
_ARGUMENTS = frozenset({"arguments", "argument_list"})
_COMMENTS = frozenset({"comment", "line_comment", "block_comment"})
_FUNCTIONS = frozenset({"function_declaration", "function_expression", "arrow_function",
                        "method_definition", "generator_function_declaration",
                        "method_declaration", "constructor_declaration", "func_literal",
                        "lambda_expression", "program", "source_file"})


class CallView(msgspec.Struct, frozen=True):
    """One call as one line: `text` its rendering; `lines` the file's lines it was read from
    (the call's own, then those of the assignments followed into it), 1-based."""

    text: str
    first: int
    last: int
    lines: frozenset[int]


class ParsedFile:
    """A file's syntax tree, with each function's assignments indexed on first use."""

    def __init__(self, text: str, language: str, first_line: int = 1) -> None:
        # `text` may be a slice of a file that starts at line `first_line`.
        self.offset = first_line - 1
        self.source = text.encode("utf-8", "surrogatepass")
        parser = parser_for(language)
        self.tree: Tree | None = parser.parse(self.source) if parser else None
        self._assigned: dict[tuple[int, int], dict[str, list[tuple[int, Node, bool]]]] = {}

    def views(self, names: frozenset[str]) -> Iterator[CallView]:
        """A view of every call of one of `names` in the file, under its own name or another
        the file gave it (`const run = cp.exec`, `const { exec: run } = require(...)`,
        `cp['exec']`)."""
        if self.tree is None:
            return
        aliases = self._aliases(names)
        stack = [self.tree.root_node]
        while stack:
            node = stack.pop()
            if node.type in _CALLS:
                name = _callee(node)
                if name in names and not _subscripted(node):
                    yield self._view(node)
                elif name in aliases or (name in names and _subscripted(node)):
                    yield self._view(node, aliases.get(name, name))
            stack.extend(reversed(node.children))

    def _aliases(self, names: frozenset[str]) -> dict[str, str]:
        """Other names the file gives the functions: a name assigned one of them, or bound
        to one by destructuring."""
        found: dict[str, str] = {}
        assert self.tree is not None  # noqa: S101 (views checked)
        stack = [self.tree.root_node]
        while stack:
            node = stack.pop()
            stack.extend(node.children)
            if node.type == "variable_declarator":
                target, value = node.child_by_field_name("name"), node.child_by_field_name("value")
                if target is not None and target.type == "identifier" and value is not None \
                        and value.type in ("member_expression", "identifier") \
                        and (name := _last_name(value)) in names:
                    found[_node_text(target)] = name
            elif node.type == "pair_pattern":
                key, value = node.child_by_field_name("key"), node.child_by_field_name("value")
                if key is not None and value is not None and value.type == "identifier" \
                        and _node_text(key) in names:
                    found[_node_text(value)] = _node_text(key)
        return found

    def _view(self, call: Node, name: str | None = None) -> CallView:
        """The call on one line; under `name` (`exec(...)`) when the file called it by
        another name."""
        lines: set[int] = set(range(call.start_point[0] + 1, call.end_point[0] + 2))
        arguments = call.child_by_field_name("arguments")
        if name is not None and arguments is not None:
            text = name + self._render(arguments, _DEPTH, lines, inline=True)
        else:
            text = self._render(call, _DEPTH, lines, inline=False)
        return CallView(text=text[:_MAX_RENDERING], first=call.start_point[0] + 1 + self.offset,
                        last=call.end_point[0] + 1 + self.offset,
                        lines=frozenset(n + self.offset for n in lines))

    def _render(self, node: Node, depth: int, lines: set[int], inline: bool) -> str:
        """The node's source on one line: comments out, names assigned before it in (when
        `inline`: inside the arguments, or inside a value being followed)."""
        pieces: list[str] = []
        at = node.start_byte
        for child, within in _replaced(node, inline):
            pieces.append(self._text(at, child.start_byte))
            at = child.end_byte
            if child.type in _COMMENTS:
                pieces.append(" ")
                continue
            value = self._value(child, depth, lines) if within else None
            pieces.append(value if value is not None else self._text(child.start_byte,
                                                                     child.end_byte))
        pieces.append(self._text(at, node.end_byte))
        return " ".join("".join(pieces).split())

    def _value(self, name: Node, depth: int, lines: set[int]) -> str | None:
        """What the name was last assigned before this use, rendered; None when nothing in
        its function (or the program) assigned it."""
        if depth <= 0 or name.type != "identifier":
            return None
        text = self._text(name.start_byte, name.end_byte)
        before = next((found for scope in _scopes(name)
                       if (found := [entry for entry in self._assignments(scope).get(text, [])
                                     if entry[0] < name.start_byte])), None)
        if not before:
            return None
        rendered: list[str] = []
        for _, value, appended in reversed(before):
            lines.update(range(value.start_point[0] + 1, value.end_point[0] + 2))
            rendered.append(self._render(value, depth - 1, lines, inline=True))
            if not appended:
                break
        return " + ".join(reversed(rendered))

    def _assignments(self, scope: Node) -> dict[str, list[tuple[int, Node, bool]]]:
        key = (scope.start_byte, scope.end_byte)
        if key not in self._assigned:
            self._assigned[key] = self._index(scope)
        return self._assigned[key]

    def _index(self, scope: Node) -> dict[str, list[tuple[int, Node, bool]]]:
        """name -> (where, value, whether it appends) for each assignment in the scope, not
        in functions nested in it, in the order of the source."""
        found: dict[str, list[tuple[int, Node, bool]]] = {}
        stack = list(reversed(scope.children))
        while stack:
            node = stack.pop()
            if node.type in _FUNCTIONS:
                continue
            for target, value, appended in _assigned(node):
                found.setdefault(self._text(target.start_byte, target.end_byte), []).append(
                    (value.start_byte, value, appended))
            stack.extend(reversed(node.children))
        return found

    def _text(self, start: int, end: int) -> str:
        return self.source[start:end].decode("utf-8", "replace")


def _scopes(node: Node) -> Iterator[Node]:
    """The functions around a node, innermost first, then the program: where a name it uses
    may have been assigned."""
    scope = node.parent
    while scope is not None:
        if scope.type in _FUNCTIONS:
            yield scope
        scope = scope.parent


def _replaced(node: Node, inline: bool) -> Iterator[tuple[Node, bool]]:
    """The comments and names under a node, in order, each with whether a name is to be
    replaced by its value (inside the call's arguments, or anywhere in a followed value)."""
    stack: list[tuple[Node, bool]] = [(child, inline or node.type in _ARGUMENTS)
                                      for child in reversed(node.children)]
    while stack:
        child, within = stack.pop()
        if child.type in _COMMENTS or (child.type == "identifier" and within):
            yield child, within
            continue
        if child.type in _FUNCTIONS:
            continue  # a callback's body is not the call's value
        inner = within or child.type in _ARGUMENTS
        stack.extend((grandchild, inner) for grandchild in reversed(child.children))


def _assigned(node: Node) -> Iterable[tuple[Node, Node, bool]]:
    """(name, value, appends) for a declaration or an assignment of one name."""
    kind = node.type
    if kind in ("variable_declarator", "var_spec"):
        target = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if kind == "var_spec" and value is not None:
            value = value.named_children[0] if value.named_children else None
        if target is not None and value is not None and target.type == "identifier":
            return ((target, value, False),)
    elif kind in ("assignment_expression", "augmented_assignment_expression",
                  "assignment_statement", "short_var_declaration"):
        target = node.child_by_field_name("left")
        value = node.child_by_field_name("right")
        operator = node.child_by_field_name("operator")
        appends = (operator is not None and operator.type == "+=") or any(
            child.type == "+=" for child in node.children)
        if target is not None and target.type == "expression_list":
            target = target.named_children[0] if target.named_child_count == 1 else None
        if value is not None and value.type == "expression_list":
            value = value.named_children[0] if value.named_child_count == 1 else None
        if target is not None and value is not None and target.type == "identifier":
            return ((target, value, appends),)
    return ()


def _node_text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _last_name(node: Node) -> str:
    """`exec` of `cp.exec`, `exec` of `exec`."""
    if node.type == "member_expression":
        prop = node.child_by_field_name("property")
        return _node_text(prop) if prop is not None else ""
    return _node_text(node)


def _subscripted(call: Node) -> bool:
    target = call.child_by_field_name("function")
    return target is not None and target.type == "subscript_expression"


def _callee(call: Node) -> str:
    """The called function's own name: `exec` of `cp.exec(...)`, `Command` of
    `exec.Command(...)`, `ProcessBuilder` of `new ProcessBuilder(...)`."""
    target = (call.child_by_field_name("function") or call.child_by_field_name("constructor")
              or call.child_by_field_name("name") or call.child_by_field_name("type"))
    if target is None:
        return ""
    if target.type == "subscript_expression":
        index = target.child_by_field_name("index")
        fragment = next((c for c in index.named_children if c.type == "string_fragment"),
                        None) if index is not None and index.type == "string" else None
        return _node_text(fragment) if fragment is not None else ""
    if target.type in ("member_expression", "selector_expression"):
        target = (target.child_by_field_name("property")
                  or target.child_by_field_name("field") or target)
    elif target.type in ("scoped_type_identifier", "generic_type"):
        target = target.named_children[-1] if target.named_children else target
    return (target.text or b"").decode("utf-8", "replace")


@cache
def _names_pattern(names: frozenset[str]) -> WholeTextPattern:
    return compile_whole_text(r"\b(?:" + "|".join(re.escape(n) for n in sorted(names)) + r")\b")


def may_call(encoded: bytes, names: frozenset[str]) -> bool:
    """Whether the text (UTF-8) names one of the functions at all (one RE2 pass): a file
    that does not is not parsed."""
    return bool(names) and _names_pattern(names).search(encoded) is not None


def windows(text: str, added: Iterable[int]) -> list[tuple[int, str]] | None:
    """The parts of a large file to parse for the calls around its added lines: (first line,
    text) each, overlapping ones merged; None when they add up to more than
    PARSE_LIMIT_BYTES."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    spans: list[tuple[int, int]] = []
    for number in sorted(added):
        first = max(1, number - WINDOW_LINES)
        last = min(len(lines), number + WINDOW_LINES)
        while first < number and starts[number - 1] - starts[first - 1] > WINDOW_BYTES:
            first += 1
        while last > number and starts[last] - starts[number] > WINDOW_BYTES:
            last -= 1
        if spans and first <= spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], max(last, spans[-1][1]))
        else:
            spans.append((first, last))
    if sum(starts[last] - starts[first - 1] for first, last in spans) > PARSE_LIMIT_BYTES:
        return None
    return [(first, "\n".join(lines[first - 1:last])) for first, last in spans]
