"""Where functions, methods and classes begin and end, per language.

Python, JavaScript, TypeScript, Go, Java and Rust are parsed with tree-sitter (grammar
wheels that ship their grammars, loaded on first use); anything else gets an
indentation/brace heuristic. Spans are 1-based, inclusive line ranges; decorators and
`const f = () => ...` declarations belong to the function they introduce.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Literal

from reviewbot.code.definitions import definition_name
from reviewbot.lazy_re import lazy_re

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

SpanKind = Literal["function", "class"]


@dataclass(frozen=True)
class Span:
    kind: SpanKind
    name: str
    start: int
    end: int
    # Dotted path of enclosing definitions, e.g. "Cart.total" or "outer.inner".
    qualname: str

    def contains(self, line: int) -> bool:
        return self.start <= line <= self.end


# node type -> kind, per grammar.
_FUNCTION_NODES: dict[str, dict[str, SpanKind]] = {
    "python": {"function_definition": "function", "class_definition": "class"},
    "javascript": {"function_declaration": "function", "generator_function_declaration":
                   "function", "function_expression": "function", "arrow_function": "function",
                   "method_definition": "function", "class_declaration": "class",
                   "class": "class"},
    "go": {"function_declaration": "function", "method_declaration": "function",
           "func_literal": "function", "type_declaration": "class"},
    "java": {"method_declaration": "function", "constructor_declaration": "function",
             "lambda_expression": "function", "class_declaration": "class",
             "interface_declaration": "class", "enum_declaration": "class",
             "record_declaration": "class"},
    "rust": {"function_item": "function", "closure_expression": "function",
             "impl_item": "class", "trait_item": "class", "struct_item": "class",
             "enum_item": "class", "mod_item": "class"},
}
_FUNCTION_NODES["typescript"] = {**_FUNCTION_NODES["javascript"],
                                 "interface_declaration": "class",
                                 "abstract_class_declaration": "class",
                                 "method_signature": "function"}
# Nodes that wrap a definition and belong to its span (decorators, `const f = () =>`).
_WRAPPERS = frozenset({"decorated_definition", "lexical_declaration", "variable_declaration",
                       "export_statement"})
# Where a definition's name is when the node has no `name` field.
_NAME_FIELDS = ("name", "type")


def parser_for(language: str) -> Parser | None:
    return _parser(language) if language in _FUNCTION_NODES else None


@cache
def _parser(language: str) -> Parser:
    from tree_sitter import Language, Parser

    loaders: dict[str, Callable[[], object]] = {
        "python": _load("tree_sitter_python", "language"),
        "javascript": _load("tree_sitter_javascript", "language"),
        "typescript": _load("tree_sitter_typescript", "language_tsx"),
        "go": _load("tree_sitter_go", "language"),
        "java": _load("tree_sitter_java", "language"),
        "rust": _load("tree_sitter_rust", "language"),
    }
    return Parser(Language(loaders[language]()))


def _load(module: str, function: str) -> Callable[[], object]:
    def load() -> object:
        import importlib

        return getattr(importlib.import_module(module), function)()
    return load


def spans(text: str, language: str) -> list[Span]:
    """Every function/method/class span in the file, outermost first."""
    return SyntaxIndex(text, language).all()


def _walk(node: Node, kinds: dict[str, SpanKind], outer: tuple[str, ...]) -> Iterator[Span]:
    for child in node.children:
        kind = kinds.get(child.type) if child.is_named else None
        inner = outer
        if kind is not None:
            name = _name(child)
            if _named(child, kind):
                start = _outermost_wrapper(child).start_point[0] + 1
                receiver = _go_receiver(child)
                inner = (*outer, *([receiver] if receiver else []), name)
                yield Span(kind=kind, name=name, start=start, end=child.end_point[0] + 1,
                           qualname=".".join(inner))
        yield from _walk(child, kinds, inner)


def _wrapped_definition(node: Node, kinds: dict[str, SpanKind]) -> Node | None:
    for child in node.named_children:
        if child.type in kinds:
            return child
        value = child.child_by_field_name("value") if child.type == "variable_declarator" else None
        if value is not None and value.type in kinds:
            return value
        if child.type in _WRAPPERS or child.type == "variable_declarator":
            inner = _wrapped_definition(child, kinds)
            if inner is not None:
                return inner
    return None


def _named(node: Node, kind: SpanKind) -> bool:
    """Anonymous functions (closures, lambdas, callbacks) are not a reviewer's unit."""
    return kind == "class" or _name(node) != "<anonymous>"


def _go_receiver(node: Node) -> str | None:
    """`func (c *Cart) Total()` belongs to Cart."""
    if node.type != "method_declaration":
        return None
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return None
    names = [n for n in _descendants(receiver) if n.type == "type_identifier"]
    return _text(names[0]) if names else None


def _descendants(node: Node) -> Iterator[Node]:
    for child in node.children:
        yield child
        yield from _descendants(child)


def _outermost_wrapper(node: Node) -> Node:
    """`@decorator def f`, `const f = () => ...`, `export function f`: the whole statement."""
    current = node
    parent = node.parent
    while parent is not None and (parent.type in _WRAPPERS or parent.type in (
            "variable_declarator", "pair", "assignment_expression")):
        if parent.type in ("pair", "assignment_expression") and parent.parent is not None \
                and parent.parent.type not in ("expression_statement",):
            break
        current = parent
        parent = parent.parent
    return current


def _name(node: Node) -> str:
    for field in _NAME_FIELDS:
        child = node.child_by_field_name(field)
        if child is not None and child.type in ("identifier", "type_identifier",
                                                "property_identifier", "field_identifier",
                                                "private_property_identifier"):
            return _text(child)
    if node.type == "type_declaration":
        spec = next((c for c in node.children if c.type == "type_spec"), None)
        if spec is not None and spec.child_by_field_name("name") is not None:
            return _text(spec.child_by_field_name("name"))  # type: ignore[arg-type]
    # An anonymous function assigned to a name: `const total = () => ...`.
    parent = node.parent
    if parent is not None and parent.type == "variable_declarator":
        named = parent.child_by_field_name("name")
        if named is not None:
            return _text(named)
    return "<anonymous>"


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


class SyntaxIndex:
    """One file's definitions, parsed once; point look-ups walk up from the line's node."""

    def __init__(self, text: str, language: str) -> None:
        self.text = text
        self.language = language
        self._parser = parser_for(language)
        self._tree = (self._parser.parse(text.encode("utf-8", "surrogatepass"))
                      if self._parser else None)
        self._all: list[Span] | None = None
        self._lines = text.split("\n")

    def all(self) -> list[Span]:
        if self._all is None:
            self._all = (list(_walk(self._tree.root_node, _FUNCTION_NODES[self.language], ()))
                         if self._tree is not None else heuristic_spans(self.text, self.language))
        return self._all

    def at(self, line: int, kind: SpanKind | None = None) -> Span | None:
        """The innermost definition around a line (of the given kind, if one is given)."""
        if self._tree is None:
            return enclosing(self.all(), line, kind)
        chain = self._chain(line)
        found = [s for s in chain if kind is None or s.kind == kind]
        return found[-1] if found else None

    def _chain(self, line: int) -> list[Span]:
        """The definitions around a line, outermost first, with their dotted names."""
        if self._tree is None:
            return []
        lines = self._lines
        if not 1 <= line <= len(lines):
            return []
        column = len(lines[line - 1]) - len(lines[line - 1].lstrip())
        node: Node | None = self._tree.root_node.descendant_for_point_range(
            (line - 1, column), (line - 1, max(column, len(lines[line - 1]) - 1)))
        kinds = _FUNCTION_NODES[self.language]
        found: list[tuple[SpanKind, Node]] = []
        while node is not None:
            # A decorator or `export`/`const` line: the definition it wraps is around it too.
            target = _wrapped_definition(node, kinds) if node.type in _WRAPPERS else node
            kind = kinds.get(target.type) if target is not None and target.is_named else None
            if (kind is not None and target is not None and _named(target, kind)
                    and not any(target == seen for _, seen in found)):
                found.append((kind, target))
            node = node.parent
        spans_out: list[Span] = []
        names: list[str] = []
        for kind, found_node in reversed(found):
            receiver = _go_receiver(found_node)
            names += [*([receiver] if receiver else []), _name(found_node)]
            start = _outermost_wrapper(found_node).start_point[0] + 1
            spans_out.append(Span(kind=kind, name=_name(found_node), start=start,
                                  end=found_node.end_point[0] + 1, qualname=".".join(names)))
        return [s for s in spans_out if s.contains(line)]


def enclosing(all_spans: list[Span], line: int, kind: SpanKind | None = None) -> Span | None:
    """The innermost span containing the line (of the given kind, if one is given)."""
    found = [s for s in all_spans if s.contains(line) and (kind is None or s.kind == kind)]
    return min(found, key=lambda s: s.end - s.start) if found else None


_BRACES = frozenset({"c", "cpp", "csharp", "kotlin", "scala", "swift", "php", "dart",
                     "groovy", "css"})


def heuristic_spans(text: str, language: str) -> list[Span]:
    """Definitions found by their first line; the end by braces or by indentation."""
    lines = text.splitlines()
    found: list[Span] = []
    for index, line in enumerate(lines):
        name = definition_name(line) or _keyword_definition(line) or _class_name(line)
        if not name:
            continue
        end = (_brace_end(lines, index) if language in _BRACES or line.rstrip().endswith("{")
               else _indent_end(lines, index))
        kind: SpanKind = "class" if _class_name(line) else "function"
        found.append(Span(kind=kind, name=name, start=index + 1, end=end + 1, qualname=name))
    return found


_CLASS = lazy_re(r"^\s*(?:export\s+|public\s+|private\s+|abstract\s+|final\s+|data\s+)*"
                    r"(?:class|struct|interface|object|module|trait)\s+(?P<name>\w+)")


_KEYWORD_DEF = lazy_re(r"^\s*(?:def|fun|fn|sub|proc|function)\s+(?:self\.)?(?P<name>\w+[?!]?)")


def _keyword_definition(line: str) -> str | None:
    match = _KEYWORD_DEF.match(line)
    return match.group("name") if match else None


def _class_name(line: str) -> str | None:
    match = _CLASS.match(line)
    return match.group("name") if match else None


def _brace_end(lines: list[str], start: int) -> int:
    depth = 0
    opened = False
    for index in range(start, len(lines)):
        depth += lines[index].count("{") - lines[index].count("}")
        opened = opened or "{" in lines[index]
        if opened and depth <= 0:
            return index
    return len(lines) - 1


def _indent_end(lines: list[str], start: int) -> int:
    indent = len(lines[start]) - len(lines[start].lstrip())
    last = start
    for index in range(start + 1, len(lines)):
        if not lines[index].strip():
            continue
        if len(lines[index]) - len(lines[index].lstrip()) <= indent:
            break
        last = index
    return last
