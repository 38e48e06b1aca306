"""GitHub Actions' `${{ }}` expressions, as far as the README's workflow uses them, evaluated
on an event's context: literals, `github.*` paths, `steps.ID.outputs.NAME`, `==`, `!=`, `!`,
`&&`, `||` (which yield an operand, as GitHub's do), parentheses, `always()` and
`contains(a, b)` ("Expressions" in GitHub's docs: comparisons of strings ignore case; a path
that does not exist is null)."""

from __future__ import annotations

import re
from typing import Any

_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>\d+)|(?P<op>==|!=|&&|\|\||[!(),])"
                    r"|(?P<name>[A-Za-z_][\w.\-]*))")


def evaluate(expression: str, context: dict[str, Any]) -> Any:
    tokens = [match for match in _TOKEN.finditer(expression.strip())]
    assert "".join(m.group() for m in tokens).strip() == expression.strip(), expression
    parser = _Parser([(m.lastgroup or "", m.group(m.lastgroup or 0)) for m in tokens], context)
    value = parser.either()
    assert parser.at == len(parser.tokens), expression
    return value


def truthy(value: Any) -> bool:
    return value not in (None, False, 0, "")


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]], context: dict[str, Any]) -> None:
        self.tokens, self.context, self.at = tokens, context, 0

    def peek(self) -> str:
        return self.tokens[self.at][1] if self.at < len(self.tokens) else ""

    def take(self) -> tuple[str, str]:
        self.at += 1
        return self.tokens[self.at - 1]

    def either(self) -> Any:
        value = self.both()
        while self.peek() == "||":
            self.take()
            other = self.both()
            value = value if truthy(value) else other
        return value

    def both(self) -> Any:
        value = self.compare()
        while self.peek() == "&&":
            self.take()
            other = self.compare()
            value = other if truthy(value) else value
        return value

    def compare(self) -> Any:
        value = self.unary()
        while self.peek() in ("==", "!="):
            equal = _equal(value, (self.take(), self.unary())[1])
            value = equal if self.tokens[self.at - 2][1] == "==" else not equal
        return value

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            return not truthy(self.unary())
        if self.peek() == "(":
            self.take()
            value = self.either()
            assert self.take()[1] == ")"
            return value
        kind, text = self.take()
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "num":
            return int(text)
        if self.peek() == "(":
            return self.call(text)
        return {"true": True, "false": False, "null": None}.get(text, self.path(text))

    def call(self, name: str) -> Any:
        self.take()
        args = []
        while self.peek() != ")":
            args.append(self.either())
            if self.peek() == ",":
                self.take()
        self.take()
        if name == "always":
            return True
        assert name == "contains", name
        return str(args[1]).lower() in str(args[0]).lower()

    def path(self, text: str) -> Any:
        value: Any = self.context
        for part in text.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return value


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()
    return bool(a == b)
