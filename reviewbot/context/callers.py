"""Call sites of a changed function: every one as a location, the nearest with their code.

One `git grep` of the name. A hit is a call when its line calls the name (`name(`,
`obj.name(`, `module.name(`) outside comments, docstrings, doctests and documentation
files. Sites are ranked: source files before tests; then by how the call is qualified (a
file that imports the name, or `module.name(` with the changed module, before a bare or
method call that may be another function of the same name); then by folder. The first
CALLER_SNIPPETS get the function around them; every site, up to MAX_CALL_SITES, is listed
with its line, so a budget that cuts code still leaves the reviewer every place to check.
An import under another name (`from billing import pay as charge`) adds a search for the
alias.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from reviewbot.code.docstrings import python_docstring_lines
from reviewbot.code.languages import detect_language
from reviewbot.code.lexical import is_comment, is_import
from reviewbot.code.path_kinds import path_tags
from reviewbot.context.search import Searcher
from reviewbot.schema.bundles import CodeHit

MAX_CALL_SITES = 100
CALLER_SNIPPETS = 5
LOCATION_CHARS = 60
MAX_ALIASES = 3
_PROSE = frozenset({"docs"})


@dataclass
class CallSites:
    """Finds and ranks the call sites of one symbol defined in `origin`."""

    searcher: Searcher
    origin: str
    is_own_change: Callable[[CodeHit], bool]
    _docstrings: dict[str, frozenset[int]] = field(default_factory=dict)

    def find(self, symbol: str) -> list[CodeHit]:
        hits = self.searcher.hits(symbol)
        importers = {h.file_path for h in hits if _imports(h, symbol)}
        aliases = [a for h in hits for a in _aliases(h, symbol)][:MAX_ALIASES]
        calls = [(h, symbol) for h in hits if self._is_call(h, symbol)]
        for alias in dict.fromkeys(aliases):
            calls += [(h, alias) for h in self.searcher.hits(alias) if self._is_call(h, alias)]
        ranked = sorted({(h.file_path, h.line): (h, name) for h, name in calls}.values(),
                        key=lambda pair: self._rank(pair[0], pair[1], importers))
        return [self.searcher.with_function(h) if n < CALLER_SNIPPETS else _location(h)
                for n, (h, _name) in enumerate(ranked[:MAX_CALL_SITES])]

    def _is_call(self, hit: CodeHit, name: str) -> bool:
        language = detect_language(hit.file_path)
        text = hit.text
        if (not _calls(text, name) or self.is_own_change(hit) or is_comment(text, language)
                or text.startswith((">>>", "...")) or _PROSE & set(path_tags(hit.file_path))):
            return False
        return language != "python" or hit.line not in self._docstring_lines(hit.file_path)

    def _docstring_lines(self, path: str) -> frozenset[int]:
        if path not in self._docstrings:
            text = self.searcher.source.new_text(path)
            self._docstrings[path] = python_docstring_lines(text) if text else frozenset()
        return self._docstrings[path]

    def _rank(self, hit: CodeHit, name: str, importers: set[str]) -> tuple[int, int, int, str,
                                                                            int]:
        test = int("test_file" in path_tags(hit.file_path))
        return (test, self._qualification(hit, name, importers),
                self.searcher.distance(hit.file_path), hit.file_path, hit.line)

    def _qualification(self, hit: CodeHit, name: str, importers: set[str]) -> int:
        """0: certainly this function; 1: a bare call of the name; 2: a method call of the
        name on some object, which may be another class's method."""
        modules = "|".join(re.escape(m) for m in _module_names(self.origin))
        if (hit.file_path in importers or hit.file_path == self.origin
                or re.search(rf"\b(?:{modules})\.{re.escape(name)}\s*\(", hit.text)):
            return 0
        return 2 if re.search(rf"\.{re.escape(name)}\s*\(", hit.text) else 1


def _calls(text: str, name: str) -> bool:
    return bool(re.search(rf"(?<![\w$]){re.escape(name)}\s*\(", text)) and not re.match(
        rf"^\s*(?:async\s+)?(?:def|function|func|fn)\s+{re.escape(name)}\b", text)


def _imports(hit: CodeHit, symbol: str) -> bool:
    return is_import(hit.text, detect_language(hit.file_path)) and bool(
        re.search(rf"\b{re.escape(symbol)}\b", hit.text))


def _aliases(hit: CodeHit, symbol: str) -> list[str]:
    if not _imports(hit, symbol):
        return []
    return re.findall(rf"\b{re.escape(symbol)}\s+as\s+(\w+)", hit.text)


def _module_names(path: str) -> list[str]:
    """The changed file's module and its package (`billing.pay` re-exported as
    `billing.pay` from billing/__init__.py)."""
    posix = PurePosixPath(path)
    names = [posix.parent.name] if posix.stem == "__init__" else [posix.stem, posix.parent.name]
    return [name for name in names if name]


def _location(hit: CodeHit) -> CodeHit:
    return hit.replace(text=hit.text[:LOCATION_CHARS], snippet="")
