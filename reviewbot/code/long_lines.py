"""A long line's code: its comments taken off where that is certain, in linear time.

A line past the long-line limit (rules/base.py MINIFIED_LINE_CHARS) is read by the line
patterns with RE2 (linear whatever the line); before that its comments are stripped, so that
`eval(location.hash); // xxxx...` padded to a megabyte is the short line it really is, read
as any other. A comment is stripped only where no lexing doubt is possible: the code before
it holds only plain strings (no `/`, whose meaning in JavaScript depends on what came before;
no template substitution, no shell command substitution). Where there is doubt, nothing is
stripped and the whole line is read: a comment left in costs at most a finding in it, a
comment wrongly stripped would hide code.
"""

from __future__ import annotations

import re

from reviewbot.lazy_re import lazy_re

# A line over this many characters is a long line (rules/base.py says what the rules do
# with one).
MINIFIED_LINE_CHARS = 1000

# The code before a comment, in C-like languages, as far as it can be read with certainty:
# any character but quotes, `/` and `\`; strings in double or single quotes; template
# literals without substitutions.
_C_PLAIN = lazy_re(r"""(?:[^"'`/\\\n]+|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|"""
                      r"""`(?:[^`\\$]|\\.|\$(?!\{))*`)*""")
_C_OPENER = lazy_re(r"//|/\*")
# Shell: outside quotes, `#` starts a comment at the start of a word. No `$(`, `${` or
# backticks before it (they nest quotes).
_SHELL_PLAIN = lazy_re(r"""(?:[^"'`\\$\n#]+|(?<=[^\s;&|(])#|\$(?![({])|'[^'\n]*'|"""
                          r""""(?:[^"\\`$\n]|\\.|\$(?![({]))*")*""")
_SHELL_OPENER = lazy_re("#")
# SQL: `--` and `/* */` outside quotes ('' is a quote inside a string).
_SQL_PLAIN = lazy_re(r"""(?:[^'"\-/\n]+|-(?!-)|/(?!\*)|'(?:[^'\n]|'')*'|"[^"\n]*")*""")
_SQL_OPENER = lazy_re(r"--|/\*")

_C_LIKE = frozenset({"javascript", "typescript", "go", "java", "kotlin", "scala", "vue",
                     "svelte", "rust", "c", "cpp", "csharp", "swift", "php", "dart"})
_HASH = frozenset({"shell", "dockerfile", "make"})

_FAMILIES: dict[str, tuple[re.Pattern[str], re.Pattern[str], bool]] = {
    **dict.fromkeys(_C_LIKE, (_C_PLAIN, _C_OPENER, True)),
    **dict.fromkeys(_HASH, (_SHELL_PLAIN, _SHELL_OPENER, False)),
    "sql": (_SQL_PLAIN, _SQL_OPENER, True),
}


def long_line_code(text: str, language: str) -> str:
    """The line with its comments stripped where certain (see above); the line as it is
    in a language whose comments are not stripped (YAML: a workflow's `${{ }}` is expanded
    inside a shell comment too)."""
    family = _FAMILIES.get(language)
    if family is None:
        return text
    plain, opener, blocks = family
    kept: list[str] = []
    at = 0
    while True:
        end = plain.match(text, at)
        stop = end.end() if end else at
        found = opener.match(text, stop)
        if found is None:
            # The end of the line, or doubt before any comment: the rest is read as it is.
            return "".join([*kept, text[at:]])
        kept.append(text[at:stop])
        if not (blocks and found.group(0) == "/*"):
            return "".join(kept)
        close = text.find("*/", found.end())
        if close == -1:
            return "".join(kept)
        kept.append(" ")
        at = close + 2
