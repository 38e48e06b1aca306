"""Step 2: the rule engine. Tags and rates every unit, and reports what rules can find.

`RULES` is the one registry: every rule of every family module, by id.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial

import msgspec

from reviewbot.code.docstrings import docstring_lines
from reviewbot.code.enclosing import Header, definition_headers
from reviewbot.code.path_kinds import matches_any, path_tags
from reviewbot.config import Config
from reviewbot.rules import (
    hygiene,
    patterns,
    python_ast,
    python_injection,
    removed_guards,
    scanners,
    secrets,
    workflows,
)
from reviewbot.rules.base import (
    SECRETS_ONLY_TAGS,
    ChangeLines,
    FileChange,
    Hit,
    ProjectFiles,
    ProjectSource,
    Rule,
    suppressed,
)
from reviewbot.rules.quieting import QUIETING_TAGS, FileKind, file_kinds, is_prose
from reviewbot.rules.tagging import Assessment, apply, assess
from reviewbot.run.processes import map_in_processes
from reviewbot.schema import (
    Finding,
    HistoryLine,
    ReviewUnit,
    RuleMeta,
    RulesResult,
    Severity,
)

_ALL: tuple[Rule, ...] = (
    *secrets.RULES, *python_ast.RULES, *python_injection.RULES, *patterns.RULES,
    *workflows.RULES, *hygiene.RULES, *removed_guards.RULES, *scanners.RULES,
)
# Ids are unique (tests/rules/registry_test.py checks it); config addresses rules by id.
RULES: dict[str, Rule] = {rule.id: rule for rule in _ALL}

def rule_metadata() -> dict[str, RuleMeta]:
    return {rule.id: RuleMeta(id=rule.id, title=rule.title, severity=rule.severity,
                              category=rule.category, rationale=rule.rationale)
            for rule in RULES.values()}


_LOWER: dict[Severity, Severity] = {"error": "warning", "warning": "info", "info": "info"}

ReadNew = Callable[[str], str | None]


class _Anchored(msgspec.Struct, frozen=True):
    finding: Finding
    unit_id: str


class _Checked(msgspec.Struct, frozen=True):
    """One file's outcome. Plain data: it is computed in whichever process checked the file
    and comes back by pickle."""

    findings: tuple[Finding, ...]
    notes: tuple[str, ...]
    # One per unit of the file, in the file's order.
    assessments: tuple[Assessment, ...]


# Patch types whose file the base has under the same name, with its lines changed.
_SAME_NAME = frozenset({"modify", "mode"})

# A file the config's `ignore` names: checked for secrets only, and not reviewed otherwise.
IGNORED = "ignored_by_config"

# Below this many characters of files to check (about 25,000 lines), a second process saved
# nothing measurable (bench/large_change.py, bench/hook_latency.py): forking and the pool's
# import take ~20 ms and the other stages stay on one core. Above it, time drops by a fifth.
PARALLEL_MIN_CHARS = 1_000_000


def run_rules(units: Iterable[ReviewUnit], read_new: ReadNew, config: Config,
              history: Iterable[HistoryLine] = (),
              project: ProjectSource | None = None,
              read_old: ReadNew | None = None) -> RulesResult:
    """Tag and rate every unit and collect the findings rules can make on added lines (and,
    for a range of commits, on lines a commit added and a later one removed). A large change
    is checked on more than one core (`limits.processes`); the result is the same.
    `project` reads other files of the reviewed side (a module a changed file imports);
    `read_old` a changed file as the base has it (a scanner asks whether a finding was
    there already)."""
    all_units = tuple(units)
    kept = tuple(u for u in all_units if not matches_any(u.file_path, config.ignore))
    # Files the config ignores are not reviewed, but a secret in them is still a secret.
    ignored = tuple(u for u in all_units if matches_any(u.file_path, config.ignore))
    # What quietens each file is decided by the base, never by a name the change adds.
    kinds = file_kinds(_by_path(all_units), project, read_new)
    shared = _Shared(ChangeLines(all_units), ProjectFiles(project), read_old)
    changes = (_file_changes(kept, read_new, shared, kinds)
               + _file_changes(ignored, read_new, shared, kinds, {IGNORED}))
    # Read here, once: the workers start with the files in memory (and the context step
    # reads them again from the same cache). One file is checked here, read if a rule asks.
    weights = ([len(change.new_text or "") + _added_chars(change) for change in changes]
               if len(changes) > 1 else [1] * len(changes))
    processes = (config.limits.processes
                 if sum(weights) >= PARALLEL_MIN_CHARS and len(changes) > 1 else 1)
    if processes > 1:
        secrets.load_detectors()  # once, before the fork: the workers share them
    checked = map_in_processes(partial(_check_change, config=config), changes, weights,
                               processes)
    findings = [finding for outcome in checked for finding in outcome.findings]
    findings += _history_findings(history, config, kinds)
    findings.sort(key=lambda f: (f.file_path, f.start_line, f.rule_id))
    assessed = {unit.unit_id: assessment for change, outcome in zip(changes, checked,
                                                                    strict=True)
                if IGNORED not in change.tags
                for unit, assessment in zip(change.units, outcome.assessments, strict=True)}
    rated = tuple(apply(u, assessed.get(u.unit_id)
                        or assess(u, [], kind=kinds.get(u.file_path, FileKind()).tags))
                  for u in kept)
    notes = [note for outcome in checked for note in outcome.notes]
    return RulesResult(units=rated, findings=tuple(findings),
                       ignored_units=len(all_units) - len(kept),
                       notes=tuple(dict.fromkeys(notes)))


def _by_path(units: tuple[ReviewUnit, ...]) -> dict[str, list[ReviewUnit]]:
    grouped: dict[str, list[ReviewUnit]] = {}
    for unit in units:
        grouped.setdefault(unit.file_path, []).append(unit)
    return grouped


def _added_chars(change: FileChange) -> int:
    return sum(len(line.text) for line in change.added)


def _check_change(change: FileChange, config: Config) -> _Checked:
    """A file's findings, notes and the assessment of each of its units."""
    findings = sorted(_check_file(change, config), key=lambda f: (f.start_line, f.rule_id))
    notes = list(change.notes)
    docstrings: frozenset[int] = frozenset()
    headers: tuple[Header, ...] = ()
    if change.language == "python":
        docstrings = docstring_lines(change.python_tree)
        # A new file's hunk holds every definition line already.
        if any(unit.patch_type != "add" for unit in change.units):
            headers = definition_headers(change.python_tree, change.new_text)
        if not change.tags & (SECRETS_ONLY_TAGS | {IGNORED}):
            notes += python_ast.python_notes(change)
    by_unit: dict[str, list[Finding]] = {}
    for finding in findings:
        by_unit.setdefault(finding.unit_id or "", []).append(finding)
    assessments = tuple(assess(unit, by_unit.get(unit.unit_id, []), docstrings, headers,
                               kind=change.kind.tags)
                        for unit in change.units)
    change.release()
    return _Checked(findings=tuple(findings), notes=tuple(notes), assessments=assessments)


def _history_findings(history: Iterable[HistoryLine], config: Config,
                      kinds: dict[str, FileKind]) -> list[Finding]:
    rule_id = secrets.HISTORY_RULE.id
    lines = [line for line in history if not matches_any(line.file_path, config.ignore)
             and config.rule(rule_id, line.file_path).enabled]
    if not lines:
        return []
    # A file the range added and removed again had a name only the change gave it; a
    # Markdown page is documentation by what it is (rules/quieting.py).
    prose = frozenset(line.file_path for line in lines if is_prose(line.file_path))
    quiet = frozenset(path for path, kind in kinds.items()
                      if kind.tags & secrets.QUIET_TAGS) | prose
    formats_quiet = frozenset(path for path, kind in kinds.items()
                              if kind.tags & secrets.FORMATS_QUIET_TAGS) | prose
    found = secrets.HISTORY_RULE.check_history(lines, quiet, formats_quiet)
    return [f.replace(severity=setting.severity) if (setting := config.rule(
        rule_id, f.file_path)).severity else f for f in found]


class _Shared(msgspec.Struct, frozen=True):
    """What every file of one change shares: its added lines, the project's other files."""

    change: ChangeLines
    project: ProjectFiles
    read_old: ReadNew | None = None


def _file_changes(units: tuple[ReviewUnit, ...], read_new: ReadNew, shared: _Shared,
                  kinds: dict[str, FileKind],
                  extra_tags: frozenset[str] | set[str] = frozenset()) -> list[FileChange]:
    grouped: dict[str, list[ReviewUnit]] = {}
    for unit in units:
        if unit.patch_type not in ("delete", "binary") and unit.language != "submodule":
            grouped.setdefault(unit.file_path, []).append(unit)
    changes = []
    for path, file_units in grouped.items():
        kind = kinds.get(path, FileKind())
        # The path's descriptive tags, and of its quietening ones those the base declared.
        tags = ({tag for tag in path_tags(path) if tag not in QUIETING_TAGS}
                | kind.tags | set(extra_tags))
        changes.append(FileChange(
            path=path, language=file_units[0].language, tags=frozenset(tags),
            units=tuple(file_units), read_new=partial(read_new, path),
            read_old=_old_reader(file_units, shared.read_old, path),
            change=shared.change, project=shared.project, kind=kind,
        ))
    return changes


def _no_text() -> str | None:
    return None


def _old_reader(units: list[ReviewUnit], read_old: ReadNew | None,
                path: str) -> Callable[[], str | None]:
    """The file at the base, when the base has it under the same name. A renamed or copied
    file has no old side here: what it was under another name (a sample under `docs/`, say)
    is not what it is now (a workflow that runs)."""
    if read_old is None or any(unit.patch_type not in _SAME_NAME for unit in units):
        return _no_text
    return partial(read_old, path)


def _check_file(change: FileChange, config: Config) -> list[Finding]:
    findings: list[Finding] = []
    seen: set[tuple[str, int]] = set()
    replaced = {rule_id for scanner in scanners.RULES
                if config.rule(scanner.id, change.path).enabled
                and scanner.available_for(change) for rule_id in scanner.replaces}
    for rule in RULES.values():
        setting = config.rule(rule.id, change.path)
        if not setting.enabled or rule.id in replaced or not rule.applies_to(change):
            continue
        if change.tags & (SECRETS_ONLY_TAGS | {IGNORED}) and rule.category != "secrets":
            continue
        for hit in _hits(rule, change):
            anchored = _anchor(hit, rule, change, setting.severity)
            if anchored and (hit.rule_id, hit.line) not in seen:
                seen.add((hit.rule_id, hit.line))
                findings.append(anchored.finding)
    return findings


def _hits(rule: Rule, change: FileChange) -> list[Hit]:
    """A rule's hits on a file; a file whose code is nested deeper than a rule can follow
    (a repository's file is untrusted input) loses that rule, with a note, not the run."""
    try:
        return list(rule.check(change))
    except RecursionError:
        change.notes.append(f"{change.path} is nested too deeply for `{rule.id}`: not checked "
                            "by it")
        return []


def _anchor(hit: Hit, rule: Rule, change: FileChange,
            configured: Severity | None) -> _Anchored | None:
    """The finding for a hit on an added line (anywhere, for a rule that decides what the
    change brought itself), or None (not on the change, or suppressed)."""
    lines = range(hit.line, hit.last_line + 1)
    unit = next((u for u in change.units for n in lines if _adds_line(u, n)), None)
    if unit is None and rule.whole_file and change.units:
        unit = change.units[0]  # the rule found the change brought it, away from its lines
    if unit is None:
        return None
    # On the line the finding starts on, the one it is reported at: a suppression further
    # down a long statement (a value a hundred lines below the call) is no suppression.
    if suppressed(change.line(hit.line), rule.id):
        return None
    severity = configured or _default_severity(hit, rule, change)
    # Whatever the change added that would have quietened this finding is said with it.
    refused = change.kind.note(secrets=rule.category == "secrets")
    finding = Finding(
        file_path=change.path, start_line=hit.line, end_line=hit.last_line,
        severity=severity, category=rule.category, rule_id=rule.id,
        title=hit.title or rule.title,
        message=f"{hit.message} {refused}" if refused else hit.message,
        suggestion=hit.suggestion,
        source="rule", unit_id=unit.unit_id,
    )
    return _Anchored(finding=finding, unit_id=unit.unit_id)


def _default_severity(hit: Hit, rule: Rule, change: FileChange) -> Severity:
    severity = hit.severity or rule.severity
    # Test code runs on developer machines with fixture data: one level quieter.
    if "test_file" in change.tags and rule.category != "secrets":
        severity = _LOWER[severity]
    return severity


def _adds_line(unit: ReviewUnit, number: int) -> bool:
    return unit.hunk is not None and any(
        line.new_lineno == number for line in unit.hunk.lines if line.kind == "add")
