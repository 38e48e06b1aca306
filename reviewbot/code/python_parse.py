"""Python source parsed into a syntax tree, or what the file is instead, whatever it holds.

A repository's file is untrusted input: beyond a syntax error, CPython's parser answers
deeply nested source (ten thousand `-` before a number, thousands of parentheses) with a
MemoryError or a RecursionError, and a NUL byte with a ValueError. Every one of them means
"this file does not parse", never a failed run.

Syntax newer than the running interpreter (`type X = int` on 3.11) is valid Python: one such
line must not take a whole file's checks away (anyone could add it). Such a file is read
through a rewrite into the running version's syntax (`newer_python`), only once `ast.parse`
has failed, so a file that parses costs nothing more.
"""

from __future__ import annotations

import ast


def parse_python(text: str) -> tuple[ast.Module | None, str | None]:
    """The module's tree and None, or None and what the file is instead, worded to follow its
    path: "is not valid Python (line 3: invalid syntax)", "uses Python 3.12 syntax (type
    parameters) that Python 3.11 cannot parse, ...", "is Python 2 (...)"."""
    try:
        return ast.parse(text), None
    except SyntaxError as error:
        from reviewbot.code.newer_python import read_newer

        where = f"line {error.lineno}: " if error.lineno else ""
        return read_newer(text, where + error.msg)
    except ValueError as error:
        return None, f"is not valid Python ({error})"
    except (MemoryError, RecursionError):
        return None, "is nested too deeply for the parser"


def parses(text: str) -> bool:
    return parse_python(text)[0] is not None
