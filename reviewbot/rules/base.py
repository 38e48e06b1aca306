"""What every rule is and sees: the Rule Protocol, the file change it checks, its hits."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from typing import Protocol

import msgspec

from reviewbot.code.comments import line_comments
from reviewbot.code.lexical import comment_flags
from reviewbot.code.line_breaks import has_bare_cr, to_git_lines
from reviewbot.code.long_lines import MINIFIED_LINE_CHARS as MINIFIED_LINE_CHARS
from reviewbot.code.long_lines import long_line_code
from reviewbot.code.python_encoding import python_source
from reviewbot.code.python_parse import parse_python
from reviewbot.errors import GitError
from reviewbot.levels import Severity
from reviewbot.rules.change_lines import ChangeLines
from reviewbot.rules.quieting import BaseLayout, FileKind
from reviewbot.schema.findings import DecidedBy, QuietKind
from reviewbot.schema.records import Category
from reviewbot.schema.units import DiffLine, ReviewUnit

# What reviews a file that is generated, vendored or a lockfile (as the base declares it,
# rules/quieting.py): secrets only.
SECRETS_ONLY_TAGS = frozenset({"generated", "vendored", "lockfile"})
# A changed line over MINIFIED_LINE_CHARS may be minified code, or code padded to look like
# it: the line patterns read it with its comments stripped where certain
# (code/long_lines.py) and with RE2, linear in the line (`re`'s backtracking took 17 s of
# pattern matching on a 5 MB line). Only in a file the base already holds minified are such
# lines passed over (FileChange.minified_at_base): the base decides, never the change's own
# shape.
# Languages whose comment lines are the ones their first characters mark (FileChange.is_comment).
_PREFIX_COMMENTS = frozenset({"yaml"})


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


class Quiet(msgspec.Struct, frozen=True):
    """What quietens a hit, said by the rule that found it: of which kind, decided by whom,
    and the severity it keeps when lowered (None: not reported). The engine carries it to
    the run's record of quietenings (schema.Quieted), which every report shows."""

    kind: QuietKind
    decided_by: DecidedBy
    given: Severity | None = None
    justification: str = ""


class Hit(msgspec.Struct, frozen=True):
    """A problem a rule found, on new-side lines. `severity` overrides the rule's default;
    `quiet`: the rule quietens it itself (its severity is then the one it would have had)."""

    rule_id: str
    line: int
    message: str
    end_line: int | None = None
    suggestion: str = ""
    severity: Severity | None = None
    title: str | None = None
    quiet: Quiet | None = None
    # Set when the hit is about a line the change removed: its number in the base's file
    # (`line` is then where the removal sits in the new file).
    base_line: int | None = None

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
    # How many added lines the line patterns pass over (long lines of a file the base holds
    # minified), once `pattern_lines` is read.
    minified_lines: int = 0
    # The symlink the change adds that makes this file code (rules/linked.py): every line
    # is new code, and `shown` holds the ones the diff itself shows as added.
    linked: str = ""
    shown: frozenset[int] = frozenset()

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

    @property
    def line_count(self) -> int:
        """How many lines the new file has (at least as many as the diff adds)."""
        return max(len(self._new_lines), max(self.added_by_line, default=0))

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

    def is_comment(self, number: int) -> bool:
        """Whether a new-side line is a comment: one its first characters mark as such
        (`comment_lines`) that the language's tokens read as a comment too. A line that starts
        inside a string or a heredoc (`// ${eval(x)}` in a template literal, `#$(curl ...)`
        in a heredoc) only looks like one. YAML's tokens do not count: a `#` line of a block
        scalar is the comment of the shell script it holds."""
        if number not in self.comment_lines:
            return False
        if self.new_text is None or self.language in _PREFIX_COMMENTS:
            return True
        # The comment tokens on the line, joined, hold all of it but its spacing.
        return _unspaced(self.line(number)) == _unspaced(self._comments.get(number, ""))

    def comment_on(self, number: int) -> str:
        """The text of the comments on a new-side line, read from the language's tokens
        (code/comments.py): a suppression's words in a string are no comment."""
        if self.new_text is None:
            return line_comments(self.line(number), self.language).get(1, "")
        return self._comments.get(number, "")

    @cached_property
    def _comments(self) -> dict[int, str]:
        return line_comments(self.new_text or "", self.language)

    @cached_property
    def pattern_lines(self) -> dict[int, str]:
        """The added lines that rules matching patterns line by line read, each as its code: a
        long line with its comments stripped where that is certain (code/long_lines.py).
        Only the long lines of a file the base already holds minified are passed over, and
        the run says so."""
        lines: dict[int, str] = {}
        skipped = 0
        for number, text in self.added_by_line.items():
            if not is_long(text):
                lines[number] = text
            elif self.minified_at_base:
                skipped += 1
            else:
                lines[number] = long_line_code(text, self.language)
        # The one place a long line is passed over, decided by the base: the engine records
        # the file with how many (QuietedFile, kind "minified", decided by the base).
        self.minified_lines = skipped
        return lines

    @cached_property
    def minified_at_base(self) -> bool:
        """Whether the base holds this file (under its name) as minified code: most of its
        characters on lines over MINIFIED_LINE_CHARS. What the change makes of a file never
        decides it."""
        old = self.old_text
        if not old or len(old) <= MINIFIED_LINE_CHARS:
            return False
        long_chars = sum(len(line) for line in old.split("\n") if is_long(line))
        return long_chars * 2 >= len(old)

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
        for name in ("python_tree", "_python_parse", "_new_lines", "old_text", "_comments"):
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


def _unspaced(text: str) -> str:
    return "".join(text.split())
