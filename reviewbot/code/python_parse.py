"""Python source parsed into a syntax tree, or why not, whatever the source holds.

A repository's file is untrusted input: beyond a syntax error, CPython's parser answers
deeply nested source (ten thousand `-` before a number, thousands of parentheses) with a
MemoryError or a RecursionError, and a NUL byte with a ValueError. Every one of them means
"this file does not parse", never a failed run.
"""

from __future__ import annotations

import ast


def parse_python(text: str) -> tuple[ast.Module | None, str | None]:
    """The module's tree and None, or None and why it does not parse."""
    try:
        return ast.parse(text), None
    except SyntaxError as error:
        return None, f"line {error.lineno}: {error.msg}"
    except ValueError as error:
        return None, str(error)
    except (MemoryError, RecursionError):
        return None, "nested too deeply for the parser"


def parses(text: str) -> bool:
    return parse_python(text)[0] is not None
