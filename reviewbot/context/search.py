"""Repository search for the context stage: `git grep` over tracked files, ranked, bounded.

Hits in vendored, generated and lockfile paths are left out; the rest are ranked with
the changed file's own package first, then definitions, calls and other references, and
capped in count and bytes.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from reviewbot.code.definitions import definition_name
from reviewbot.code.languages import detect_language
from reviewbot.code.path_kinds import path_tags
from reviewbot.code.syntax import SyntaxIndex
from reviewbot.context.budget import numbered
from reviewbot.repo.source import RepoSource
from reviewbot.schema.bundles import CodeHit, HitKind

MAX_HITS = 20
MAX_HIT_BYTES = 16_000
# `git grep`s a run may make for all its units together (each costs a pass over the tree).
MAX_SEARCHES_PER_RUN = 150
CALLER_SNIPPET_LINES = 25
_NOISE = frozenset({"vendored", "generated", "lockfile"})
_KIND_ORDER: dict[HitKind, int] = {"definition": 0, "call": 1, "reference": 2}


def classify(text: str, symbol: str) -> HitKind:
    name = re.escape(symbol)
    if definition_name(text) == symbol or re.match(
            rf"^\s*(?:export\s+)?(?:class|struct|interface|type|trait)\s+{name}\b"
            rf"|^\s*(?:(?:export\s+)?(?:const|let|var)\s+)?{name}\s*(?::[^=]+)?=(?!=)", text):
        return "definition"
    if re.search(rf"(?<![\w$]){re.escape(symbol)}\s*\(", text):
        return "call"
    return "reference"


@dataclass
class SearchBudget:
    """The run's searches, shared by every unit's searcher (and the review's workers)."""

    left: int = MAX_SEARCHES_PER_RUN
    skipped: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def take(self) -> bool:
        with self._lock:
            if self.left <= 0:
                self.skipped += 1
                return False
            self.left -= 1
            return True


@dataclass
class Searcher:
    source: RepoSource
    origin: str
    budget: SearchBudget = field(default_factory=SearchBudget)
    skipped: int = 0
    _syntax: dict[str, SyntaxIndex] = field(default_factory=dict)

    def find(self, needle: str, *, keep: Callable[[CodeHit], bool] = lambda hit: True,
             limit: int = MAX_HITS) -> list[CodeHit]:
        """Ranked hits of a word, at most `limit` and MAX_HIT_BYTES of text."""
        found = sorted((h for h in self.hits(needle) if keep(h)), key=self._rank)
        kept: list[CodeHit] = []
        size = 0
        for hit in found[:limit]:
            size += len(hit.text)
            if size > MAX_HIT_BYTES:
                break
            kept.append(hit)
        return kept

    def hits(self, needle: str) -> list[CodeHit]:
        """Every hit of a word outside vendored, generated and lockfile paths, unranked;
        one search from the run's budget."""
        if not needle or len(needle) > 200 or not needle.isprintable():
            return []
        if not self.budget.take():
            self.skipped += 1
            return []
        return [CodeHit(file_path=path, line=line, text=text.strip()[:300],
                        kind=classify(text, needle))
                for path, line, text in self.source.grep(needle)
                if not _NOISE & set(path_tags(path))]

    def with_function(self, hit: CodeHit) -> CodeHit:
        """The hit with the function around it: its dotted name and its (clipped) code."""
        text = self.source.new_text(hit.file_path)
        if text is None:
            return hit
        if hit.file_path not in self._syntax:
            self._syntax[hit.file_path] = SyntaxIndex(text, detect_language(hit.file_path))
        span = self._syntax[hit.file_path].at(hit.line, "function")
        lines = text.split("\n")
        if span is None:
            snippet, _ = numbered(lines, max(1, hit.line - 3), hit.line + 3)
            return hit.replace(snippet=snippet)
        snippet, _ = numbered(lines, span.start, span.end, limit=CALLER_SNIPPET_LINES)
        return hit.replace(function=span.qualname, snippet=snippet)

    def _rank(self, hit: CodeHit) -> tuple[int, int, str, int]:
        return (self.distance(hit.file_path), _KIND_ORDER[hit.kind], hit.file_path, hit.line)

    def distance(self, path: str) -> int:
        """0 in the changed file's folder, 1 in its top-level package, 2 elsewhere."""
        here, there = PurePosixPath(self.origin).parent, PurePosixPath(path).parent
        if here == there:
            return 0
        return 1 if here.parts[:1] == there.parts[:1] else 2
