"""Well-kept analyzers run as rules, where they know a language better than our patterns:
shellcheck (shell scripts), hadolint (Dockerfiles), zizmor (GitHub Actions workflows).

They are optional (`pip install 'reviewbot[scanners]'`); a change that has such files while
the tool is missing gets a note saying so, and reviewbot's own patterns still run. Each tool
reads the content under review on stdin (the index in staged mode), never the repository's
own configuration for it (`--norc`, `--no-config`, a neutral working folder), never the
network (zizmor `--offline`, and no token in its environment), within a time limit. Its
findings are held to the added lines like every rule's, under one rule id per tool, with
the tool's own code in the title (`SC2086`, `DL3007`, `template-injection`). Where a
tool covers one of our rules better (zizmor's template injection), ours steps aside while
the tool runs.

A tool's finding is the change's when the line it starts on is added. A finding that starts
on an unchanged line and only spans an added one (zizmor's "no permissions: block" covers the
whole file, its job findings the whole job) is the change's only when the base's version of
the file, run through the same tool, lacks it: same code, message, severity, the text of the
line it starts on, and for zizmor the route of each location (`jobs.build.steps[2]`); when
the change has more findings of one identity than the base, all of them are the change's.
The base is run only for a file with such findings, and only when the base has the file
under the same name. A finding the base had is still the change's when the change made it
reachable: a trigger added that fills the event field its expression reads (`issues:` for
`${{ github.event.issue.title }}` in a workflow only `workflow_dispatch` started;
rules/workflow_events.py).

Severities: the tool's own levels (error, warning, info; style dropped) for shellcheck and
hadolint. zizmor's severities mean "how bad if exploitable", and most of its findings need a
reviewer's judgement, so high is a warning, medium info, low dropped, and unpinned actions
(every `@v4`) info.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import msgspec

from reviewbot.lazy_re import lazy_re
from reviewbot.levels import Severity
from reviewbot.rules.base import FileChange, Hit, Quiet, RuleBase, RuleInfo
from reviewbot.rules.tool_directives import directive_lines, inert
from reviewbot.rules.workflow_events import made_reachable

TIMEOUT_S = 20
MAX_OUTPUT_BYTES = 2_000_000
INSTALL_HINT = "pip install 'reviewbot[scanners]'"
_LEVELS: dict[str, Severity] = {"error": "error", "warning": "warning", "info": "info"}
_ZIZMOR_LEVELS: dict[str, Severity] = {"High": "warning", "Medium": "info"}
_ZIZMOR_OVERRIDES: dict[str, Severity] = {"unpinned-uses": "info"}
# Tokens a tool must not see: zizmor would use them to reach GitHub.
_SECRET_ENV = ("GITHUB_TOKEN", "GH_TOKEN", "ZIZMOR_GITHUB_TOKEN", "OPENAI_API_KEY")


class ToolHit(msgspec.Struct, frozen=True):
    line: int
    end_line: int
    code: str
    severity: Severity
    message: str
    # Where the tool says the finding is in the document's structure (zizmor's routes), for
    # telling it from another of the same code and message.
    where: tuple[str, ...] = ()

    def identity(self, lines: Sequence[str],
                 first_line: Callable[[str], str] = str.strip) -> tuple[object, ...]:
        """What the finding is, apart from its line number: the same on the base and the new
        side when the change only moved it (or, through `first_line`, only retagged it)."""
        start = first_line(lines[self.line - 1]) if 0 < self.line <= len(lines) else ""
        return (self.code, self.message, self.severity, self.where, start)


Parser = Callable[[str], Iterator[ToolHit]]


class ScannerRule(RuleBase, frozen=True):
    executable: str
    matches: Callable[[FileChange], bool]
    arguments: Callable[[FileChange, str], list[str]]
    parse: Parser
    what: str
    # Our own rules it does better, skipped while it runs.
    replaces: frozenset[str] = frozenset()
    # Set for a tool whose findings on an added line may still be the base's: how a finding's
    # first line is compared with the base's (zizmor: a `uses:` line without its tag).
    retagged: Callable[[str], str] | None = None
    # Whether a finding the base had too was latent there and the change made it reachable
    # (old text, new text, the finding's own text): then it is the change's (zizmor: a
    # trigger added that fills the event field an expression reads).
    reachable: Callable[[str | None, str | None, str], bool] | None = None

    @property
    def whole_file(self) -> bool:
        return True

    def available_for(self, change: FileChange) -> bool:
        return self.applies_to(change) and find_executable(self.executable) is not None

    def applies_to(self, change: FileChange) -> bool:
        # A change that only deletes (a `permissions:` block) can bring a finding too.
        return bool(change.added or change.removes) and self.matches(change)

    def check(self, change: FileChange) -> Iterator[Hit]:
        executable = find_executable(self.executable)
        text = change.new_text
        if text is None:
            return
        if executable is None:
            change.notes.append(f"{self.executable} is not installed: {self.what} were checked "
                                f"with reviewbot's own patterns only ({INSTALL_HINT})")
            return
        added = change.added_by_line
        # The tool's own suppressions count only on lines the change adds (tool_directives).
        own = directive_lines(self.executable, text, added)
        found = self._scan(executable, change, inert(self.executable, text))
        if found is None:
            return
        honoured = (self._scan(executable, change, inert(self.executable, text, keep=own))
                    if own else None)
        reported = Counter((hit.line, hit.code, hit.message)
                           for hit in (found if honoured is None else honoured))
        brought = [hit for hit in found if hit.line in added and self.retagged is None]
        if len(brought) < len(found):
            brought = self._brought(executable, change, text, found)
        for hit in brought:
            key = (hit.line, hit.code, hit.message)
            quiet = None
            if reported[key] > 0:
                reported[key] -= 1
            else:  # a directive the change adds quietens it: recorded, with its words
                said = [words for line, words in sorted(own.items()) if line <= hit.line]
                quiet = Quiet("suppression", "change", justification=(said or [""])[-1])
            yield Hit(rule_id=self.id, line=hit.line, end_line=max(hit.end_line, hit.line),
                      severity=hit.severity, title=f"{self.executable} {hit.code}",
                      message=hit.message, suggestion="", quiet=quiet)

    def _scan(self, executable: str, change: FileChange, text: str) -> list[ToolHit] | None:
        output = self._run(executable, change, text)
        if output is None:
            return None
        try:
            return list(self.parse(output))
        except (KeyError, TypeError, ValueError, AttributeError):
            change.notes.append(f"{self.executable} gave output reviewbot could not read on "
                                f"{change.path}; its findings there were left out")
            return None

    def _brought(self, executable: str, change: FileChange, text: str,
                 found: list[ToolHit]) -> list[ToolHit]:
        """The hits the change brought: each that starts on an added line, and each other
        that the base's file lacks, wherever it lands (a deleted `permissions:` block brings
        a finding to the job's first line); every hit when the base cannot be read or
        checked: a finding is not dropped because its past is unknown."""
        old_text = change.old_text
        old = (self._scan(executable, change, inert(self.executable, old_text))
               if old_text is not None else None)
        if old is None or old_text is None:
            return found
        new_lines, old_lines = text.split("\n"), old_text.split("\n")
        first_line = self.retagged or str.strip
        before = Counter(hit.identity(old_lines, first_line) for hit in old)
        now = Counter(hit.identity(new_lines, first_line) for hit in found)
        added = change.added_by_line if self.retagged is None else {}
        return [hit for hit in found if hit.line in added
                or now[key := hit.identity(new_lines, first_line)] > before[key]
                or (self.reachable is not None and self.reachable(
                    old_text, text, "\n".join(new_lines[hit.line - 1:hit.end_line])))]

    def _run(self, executable: str, change: FileChange, text: str) -> str | None:
        env = {k: v for k, v in os.environ.items() if k not in _SECRET_ENV}
        with tempfile.TemporaryDirectory(prefix="reviewbot-scan-") as neutral:
            try:
                done = subprocess.run([executable, *self.arguments(change, text)], input=text,
                                      capture_output=True, text=True, timeout=TIMEOUT_S,
                                      cwd=neutral, env=env, check=False)
            except subprocess.TimeoutExpired:
                change.notes.append(f"{self.executable} took over {TIMEOUT_S} s on "
                                    f"{change.path} and was stopped")
                return None
            except OSError as error:
                change.notes.append(f"{self.executable} could not run: {error}")
                return None
        if len(done.stdout) > MAX_OUTPUT_BYTES or not done.stdout.strip():
            return None
        return done.stdout


@cache
def find_executable(name: str) -> str | None:
    """On PATH, or next to this Python (a virtual environment whose bin is not on PATH)."""
    beside = Path(sys.executable).parent / name
    return shutil.which(name) or (str(beside) if beside.is_file() else None)


def _shellcheck(output: str) -> Iterator[ToolHit]:
    for comment in _json_object(output).get("comments", []):
        severity = _LEVELS.get(str(comment.get("level")))
        if severity is not None:
            yield ToolHit(int(comment["line"]), int(comment.get("endLine") or comment["line"]),
                          f"SC{comment['code']}", severity, str(comment["message"]))


def _hadolint(output: str) -> Iterator[ToolHit]:
    for result in _json_list(output):
        severity = _LEVELS.get(str(result.get("level")))
        if severity is not None:
            yield ToolHit(int(result["line"]), int(result["line"]), str(result["code"]),
                          severity, str(result["message"]))


def _zizmor(output: str) -> Iterator[ToolHit]:
    for finding in _json_list(output):
        ident = str(finding.get("ident"))
        level = finding.get("determinations", {}).get("severity")
        severity = _ZIZMOR_OVERRIDES.get(ident) or _ZIZMOR_LEVELS.get(str(level))
        primary = next((loc for loc in finding.get("locations", ())
                        if loc.get("symbolic", {}).get("kind") == "Primary"), None)
        if severity is None or primary is None or finding.get("ignored"):
            continue
        where = primary["concrete"]["location"]
        note = primary["symbolic"].get("annotation") or ""
        yield ToolHit(int(where["start_point"]["row"]) + 1, int(where["end_point"]["row"]) + 1,
                      ident, severity, f"{finding.get('desc')}" + (f": {note}" if note else ""),
                      tuple(_zizmor_route(loc) for loc in finding.get("locations", ())))


_USES_REF = lazy_re(r"(\buses:\s*['\"]?[^@\s'\"]+)@[^\s'\"#]+")


def _untagged(line: str) -> str:
    """A workflow line with its action's tag (and the comment naming it) taken off: a tag
    bumped or pinned (`@v4` to `@v5`, to `@<sha> # v4`) on the same step keeps what the
    base's step had (unpinned, credentials persisted); another action (`evil/checkout@v4`)
    or another step is another finding."""
    return _USES_REF.sub(r"\1", line.split(" #", 1)[0].strip())


def _zizmor_route(location: dict[str, Any]) -> str:
    """One location as its kind, annotation and route (`Primary jobs.build.steps[2].uses`)."""
    symbolic = location.get("symbolic", {})
    route = symbolic.get("route") or {}
    parts = route.get("route", []) if isinstance(route, dict) else []
    path = "".join(f"[{part['Index']}]" if "Index" in part else f".{part.get('Key')}"
                   for part in parts if isinstance(part, dict))
    return f"{symbolic.get('kind')} {symbolic.get('annotation')} {path}"


def _json_object(output: str) -> dict[str, Any]:
    value = _json(output)
    return value if isinstance(value, dict) else {}


def _json_list(output: str) -> list[Any]:
    value = _json(output)
    return value if isinstance(value, list) else []


def _json(output: str) -> Any:
    try:
        return json.loads(output)
    except json.JSONDecodeError:
        return None


def _shell_arguments(change: FileChange, text: str) -> list[str]:
    dialect = [] if text.startswith("#!") else ["--shell=bash"]
    return ["--format=json1", "--norc", *dialect, "-"]


def _zizmor_arguments(change: FileChange, text: str) -> list[str]:
    return ["--offline", "--no-config", "--format", "json", "--no-exit-codes", "--no-progress",
            "-"]


def _hadolint_arguments(change: FileChange, text: str) -> list[str]:
    return ["--format", "json", "--no-fail", "--no-color", "-"]


def _is_workflow(change: FileChange) -> bool:
    return change.path.startswith(".github/workflows/") and change.language == "yaml"


RULES = (
    ScannerRule(
        RuleInfo(id="shellcheck", title="shellcheck", severity="warning", category="bug",
                 rationale="shellcheck knows shell quoting, word splitting and portability "
                           "far better than a few patterns."),
        executable="shellcheck", matches=lambda c: c.language == "shell",
        arguments=_shell_arguments, parse=_shellcheck, what="shell scripts"),
    ScannerRule(
        RuleInfo(id="hadolint", title="hadolint", severity="warning", category="maintainability",
                 rationale="hadolint checks Dockerfiles against Docker's best practices and "
                           "runs shellcheck on RUN lines."),
        executable="hadolint", matches=lambda c: c.language == "dockerfile",
        arguments=_hadolint_arguments, parse=_hadolint, what="Dockerfiles"),
    ScannerRule(
        RuleInfo(id="zizmor", title="zizmor", severity="warning", category="security",
                 rationale="zizmor audits GitHub Actions workflows: template injection, "
                           "dangerous triggers, credential persistence, excessive permissions."),
        executable="zizmor", matches=_is_workflow, arguments=_zizmor_arguments, parse=_zizmor,
        what="GitHub workflows", replaces=frozenset({"gha.expression-injection"}),
        retagged=_untagged, reachable=made_reachable),
)
