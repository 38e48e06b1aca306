"""What every rule is and sees: the Rule Protocol, the file change it checks, its hits."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from typing import Protocol

import msgspec

from reviewbot.code.lexical import comment_flags
from reviewbot.code.line_breaks import has_bare_cr, to_git_lines
from reviewbot.code.python_encoding import python_source
from reviewbot.code.python_parse import parse_python
from reviewbot.errors import GitError
from reviewbot.rules.quieting import BaseLayout, FileKind
from reviewbot.schema import Category, DiffLine, ReviewUnit, Severity

# What reviews a file that is generated, vendored or a lockfile (as the base declares it,
# rules/quieting.py): secrets only.
SECRETS_ONLY_TAGS = frozenset({"generated", "vendored", "lockfile"})
# A changed line this long is minified or generated code, not something a person wrote: the
# rules that match patterns line by line pass over it (a 5 MB line took 17 s of pattern
# matching), and only it: the file's other lines are checked as any others, and the secrets
# and syntax-tree rules read it too.
MINIFIED_LINE_CHARS = 1000


def is_long(text: str) -> bool:
    """A line the line-pattern rules pass over (see MINIFIED_LINE_CHARS). A bare `\r` ends a
    line for Python and JavaScript (code/line_breaks.py): such a line is as long as its
    longest piece."""
    return len(text) > MINIFIED_LINE_CHARS and (
        "\r" not in text or max(len(piece) for piece in text.split("\r")) > MINIFIED_LINE_CHARS)


def is_minified(unit: ReviewUnit) -> bool:
    """Every line the hunk changes is minified: nothing in it is for a person to review."""
    changed = [line.text for line in unit.hunk.lines if line.kind != "ctx"
               and line.text.strip()] if unit.hunk is not None else []
    return bool(changed) and all(is_long(text) for text in changed)


class Rule(Protocol):
    """One check. `check` sees a whole file's change and yields hits on its lines."""

    @property
    def id(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def severity(self) -> Severity: ...

    @property
    def category(self) -> Category: ...

    @property
    def rationale(self) -> str: ...

    @property
    def levels(self) -> tuple[Severity, ...]: ...

    @property
    def whole_file(self) -> bool:
        """Whether the rule itself decides which of its hits the change brought, wherever
        they land (a tool that reads the whole file, compared with the base's); the others'
        hits count on added lines only."""
        ...

    def applies_to(self, change: FileChange) -> bool: ...

    def check(self, change: FileChange) -> Iterator[Hit]: ...


class Hit(msgspec.Struct, frozen=True):
    """A problem a rule found, on new-side lines. `severity` overrides the rule's default."""

    rule_id: str
    line: int
    message: str
    end_line: int | None = None
    suggestion: str = ""
    severity: Severity | None = None
    title: str | None = None

    @property
    def last_line(self) -> int:
        return self.end_line if self.end_line is not None else self.line


class RuleInfo(msgspec.Struct, frozen=True):
    """The descriptive half of a rule; rule classes embed one."""

    id: str
    title: str
    severity: Severity
    category: Category
    rationale: str
    # Every severity its findings can have, when a finding says how sure or how bad it is
    # (a value from a request is worse than one from a parameter); empty: `severity` only.
    levels: tuple[Severity, ...] = ()


class RuleBase(msgspec.Struct, frozen=True):
    """Implements the descriptive half of `Rule` from a RuleInfo; subclasses add `check`."""

    info: RuleInfo

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def title(self) -> str:
        return self.info.title

    @property
    def severity(self) -> Severity:
        return self.info.severity

    @property
    def category(self) -> Category:
        return self.info.category

    @property
    def rationale(self) -> str:
        return self.info.rationale

    @property
    def levels(self) -> tuple[Severity, ...]:
        return self.info.levels or (self.severity,)

    @property
    def whole_file(self) -> bool:
        return False

    def applies_to(self, change: FileChange) -> bool:
        return bool(change.added)


class ChangeLines:
    """The added lines of every file in one change, for a rule that asks whether a line a
    file lost was added somewhere else (moved, not deleted: a check that went into a base
    class's new module). Built on the first question, so a change nobody asks about pays
    nothing; forked workers inherit it unbuilt."""

    def __init__(self, units: tuple[ReviewUnit, ...] = ()) -> None:
        self._units = units

    @cached_property
    def _added(self) -> frozenset[str]:
        return frozenset(normal_line(line.text) for unit in self._units if unit.hunk
                         for line in unit.hunk.added())

    def added(self, text: str) -> bool:
        """Whether a line like this one (spacing aside) is added anywhere in the change."""
        return normal_line(text) in self._added

    @cached_property
    def _defined(self) -> frozenset[str]:
        return frozenset(match.group(1) for line in self._added
                         if (match := _PYTHON_DEF.match(line)))

    def defines(self, name: str) -> bool:
        """Whether an added line anywhere in the change defines a Python function of this
        name (a function moved or rewritten, not deleted)."""
        return name in self._defined


_PYTHON_DEF = re.compile(r"(?:async )?def (\w+)\s*\(")


class ProjectSource(BaseLayout, Protocol):
    """The reviewed side's files as the rules may read them (RepoSource is one), and what the
    base holds (what a name declares, rules/quieting.py)."""

    def readable_files(self) -> frozenset[str]: ...

    def rules_texts(self, paths: Sequence[str]) -> dict[str, str | None]: ...


class ProjectFiles:
    """Files of the reviewed side beyond the change, for a rule that follows a call into the
    module that defines it. Each path is read at most once a run, what a file's calls need
    in one batch (`prefetch`); there is no budget shared by the calls, which an author
    could spend on decoys before the call that matters. `memo` keeps what rules computed on
    a file."""

    def __init__(self, source: ProjectSource | None = None) -> None:
        self._source = source
        self._texts: dict[str, str | None] = {}
        self.memo: dict[str, object] = {}

    def any_of(self, candidates: Sequence[str]) -> bool:
        """Whether one of the paths is a readable file of the reviewed side (one listing a
        run: a path that is not there costs no read)."""
        if self._source is None:
            return False
        try:
            files = self._source.readable_files()
        except GitError:
            return False
        return any(path in files for path in candidates)

    def prefetch(self, paths: Sequence[str]) -> None:
        """Read the paths not read yet, in one batch."""
        missing = sorted({path for path in paths if path not in self._texts})
        if missing and self._source is not None:
            try:
                found = self._source.rules_texts(missing)
            except GitError:
                found = {}  # what cannot be read is not followed; the rules go on
            self._texts.update((path, found.get(path)) for path in missing)

    def first(self, candidates: Sequence[str]) -> tuple[str, str] | None:
        """The first candidate path that exists, with its text; None when none does."""
        self.prefetch(candidates)
        for path in candidates:
            text = self._texts.get(path)
            if text is not None:
                return path, text
        return None


def normal_line(text: str) -> str:
    return " ".join(text.split())


class FileChange(msgspec.Struct, dict=True):
    """One file's change as rules see it: its units, added lines, and (lazily) new content."""

    path: str
    language: str
    tags: frozenset[str]
    units: tuple[ReviewUnit, ...]
    read_new: Callable[[], str | None] = lambda: None
    # The same file at the base, when the base has it under this name (None otherwise: a new,
    # renamed or copied file, or a base the caller does not offer).
    read_old: Callable[[], str | None] = lambda: None
    # The whole change's added lines, shared by every file of it.
    change: ChangeLines = msgspec.field(default_factory=ChangeLines)
    # The reviewed side's other files, shared by every file of the change.
    project: ProjectFiles = msgspec.field(default_factory=ProjectFiles)
    # Per-file analyses that several rules share (e.g. a parsed tree with its imports).
    memo: dict[str, object] = msgspec.field(default_factory=dict)
    # What the run should know about how this file was checked (a tool missing, a timeout).
    notes: list[str] = msgspec.field(default_factory=list)
    # Its quietening as the base declares it, and what the change would have given itself.
    kind: FileKind = msgspec.field(default_factory=FileKind)

    def __repr__(self) -> str:
        # Without the shared change, the project and the memo (which holds the whole file).
        return (f"FileChange(path={self.path!r}, language={self.language!r}, "
                f"tags={self.tags!r}, units={self.units!r}, notes={self.notes!r})")

    @cached_property
    def added(self) -> tuple[DiffLine, ...]:
        return tuple(line for unit in self.units if unit.hunk for line in unit.hunk.added())

    @cached_property
    def added_by_line(self) -> dict[int, str]:
        return {line.new_lineno: line.text for line in self.added if line.new_lineno is not None}

    @cached_property
    def removes(self) -> bool:
        return any(unit.hunk and unit.hunk.removed() for unit in self.units)

    def line(self, number: int) -> str:
        """A line of the new file: an added one from the diff, any other from the file."""
        if number in self.added_by_line:
            return self.added_by_line[number]
        lines = self._new_lines
        return lines[number - 1] if 0 < number <= len(lines) else ""

    @cached_property
    def _new_lines(self) -> list[str]:
        return (self.new_text or "").split("\n")

    @cached_property
    def comment_lines(self) -> frozenset[int]:
        """The new-side lines that are comments, read hunk by hunk (lexical.comment_flags:
        a line that only looks like a doc comment's is code)."""
        found: set[int] = set()
        for unit in self.units:
            lines = [line for line in unit.hunk.lines if line.kind != "del"] if unit.hunk else []
            flags = comment_flags([line.text for line in lines], self.language)
            found.update(line.new_lineno for line, flag in zip(lines, flags, strict=True)
                         if flag and line.new_lineno is not None)
        return frozenset(found)

    @cached_property
    def pattern_lines(self) -> dict[int, str]:
        """The added lines that rules matching patterns line by line read: all but the long
        ones (minified code, see MINIFIED_LINE_CHARS). A long line quietens only itself."""
        return {number: text for number, text in self.added_by_line.items()
                if not is_long(text)}

    @cached_property
    def new_text(self) -> str | None:
        return self.read_new()

    @cached_property
    def old_text(self) -> str | None:
        return self.read_old()

    @cached_property
    def python_tree(self) -> ast.Module | None:
        """The new side's syntax tree, or None when it does not parse (yet)."""
        return self._python_parse[0]

    @property
    def python_error(self) -> str | None:
        """Why the new side does not parse ("line 3: invalid syntax"), or None."""
        return self._python_parse[1]

    def release(self) -> None:
        """Drop the parsed tree and the analyses built on it, once the file is checked: a
        large change then holds one file's trees at a time, not every file's."""
        self.memo.clear()
        for name in ("python_tree", "_python_parse", "_new_lines", "old_text"):
            self.__dict__.pop(name, None)

    @cached_property
    def _python_parse(self) -> tuple[ast.Module | None, str | None]:
        text = self.new_text
        if text is None:
            return None, None
        tree, error = parse_python(python_source(text))
        if tree is not None and has_bare_cr(text):
            to_git_lines(tree, text)  # the diff's line numbers, not the parser's
        return tree, error


# In a comment (`#`, `//`, `/*`, `--`, `<!--`, `;`): a string that holds the words is no
# suppression.
_SUPPRESSION = re.compile(r"(?:#|//|/\*|--|<!--|;)\s*reviewbot:\s*ignore"
                          r"(?:\[(?P<ids>[^\]]*)\])?")


# bandit's `# nosec` (bare, or with its test ids: `# nosec B602, B607`), for the Python rules
# that find what those tests find. A bare one quiets those rules, never a secret (detect-secrets
# has its own pragma) nor a rule bandit has no test for.
_NOSEC = re.compile(r"#.*?\bnosec\b(?P<ids>(?:[\s,:]+B\d{3})*)")
_BANDIT: dict[str, frozenset[str]] = {
    "python.shell-injection": frozenset({"B602", "B604", "B605", "B609"}),
    "python.sql-injection": frozenset({"B608", "B610", "B611"}),
    "python.eval-exec": frozenset({"B102", "B307"}),
    "python.unsafe-deserialization": frozenset({"B301", "B302", "B403", "B506"}),
    "python.tls-verify-disabled": frozenset({"B501", "B502", "B503", "B504", "B323"}),
    "python.weak-hash": frozenset({"B303", "B324"}),
    "python.world-writable": frozenset({"B103"}),
    "python.insecure-tempfile": frozenset({"B306"}),
    "python.xss": frozenset({"B308", "B701", "B703"}),
    "python.path-traversal": frozenset({"B202"}),
    "python.debug-leftover": frozenset({"B101"}),
}


def suppressed(line_text: str, rule_id: str) -> bool:
    """`# reviewbot: ignore[rule-id, other-id]` (or bare `ignore`) in a comment on the line,
    or bandit's `# nosec` for a rule that finds what bandit's tests named there find."""
    for match in _SUPPRESSION.finditer(line_text):
        ids = match.group("ids")
        if ids is None or rule_id in {part.strip() for part in ids.split(",")}:
            return True
    tests = _BANDIT.get(rule_id)
    if tests is None or "nosec" not in line_text:
        return False
    for match in _NOSEC.finditer(line_text):
        named = set(re.findall(r"B\d{3}", match.group("ids")))
        if not named or named & tests:
            return True
    return False
