"""Step 2: the rule engine. Tags and rates every unit, and reports what rules can find.

`RULES` is the one registry: every rule of every family module, by id.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import cast

import msgspec

from reviewbot.code.docstrings import docstring_lines
from reviewbot.code.enclosing import Header, definition_headers
from reviewbot.code.path_kinds import matches_any, path_tags
from reviewbot.config import Config, RuleSetting
from reviewbot.levels import SEVERITY_RANK, Severity
from reviewbot.rules import (
    hygiene,
    patterns,
    python_ast,
    python_html,
    python_paths,
    python_shell,
    python_sql,
    python_tls,
    python_unsafe,
    removed_guards,
    scanners,
    secrets,
    workflows,
)
from reviewbot.rules.base import (
    SECRETS_ONLY_TAGS,
    FileChange,
    Hit,
    ProjectFiles,
    ProjectSource,
    Quiet,
    Rule,
)
from reviewbot.rules.change_lines import ChangeLines
from reviewbot.rules.linked import LINKED, as_linked, linked_changes
from reviewbot.rules.policy import Policy, file_quietenings, ignore_glob
from reviewbot.rules.processes import map_in_processes
from reviewbot.rules.quieting import QUIETING_TAGS, FileKind, file_kinds, is_prose
from reviewbot.rules.suppressions import NOTHING, suppression
from reviewbot.rules.tagging import Assessment, apply, assess
from reviewbot.schema.findings import Finding, Quieted, QuietKind, RuleMeta, RulesResult
from reviewbot.schema.records import Tag
from reviewbot.schema.units import HistoryLine, Link, ReviewUnit

_ALL: tuple[Rule, ...] = (
    *secrets.RULES, *python_unsafe.RULES, *python_tls.RULES, *python_shell.RULES,
    *python_sql.RULES, *python_paths.RULES, *python_html.RULES, *patterns.RULES,
    *workflows.RULES, *hygiene.RULES, *removed_guards.RULES, *scanners.RULES,
)
# Ids are unique (tests/rules/registry_test.py checks it); config addresses rules by id.
RULES: dict[str, Rule] = {rule.id: rule for rule in _ALL}

def rule_metadata() -> dict[str, RuleMeta]:
    return {rule.id: RuleMeta(id=rule.id, title=rule.title, severity=rule.severity,
                              category=rule.category, rationale=rule.rationale)
            for rule in RULES.values()}


_LOWER: dict[Severity, Severity] = {"error": "warning", "warning": "info", "info": "info"}
# The external analyzers: a file whose rules are skipped does not run them (a process each).
_SCANNERS = frozenset(rule.id for rule in scanners.RULES)

ReadNew = Callable[[str], str | None]


class _Checked(msgspec.Struct, frozen=True):
    """One file's outcome. Plain data: it is computed in whichever process checked the file
    and comes back by pickle."""

    findings: tuple[Finding, ...]
    notes: tuple[str, ...]
    # One per unit of the file, in the file's order.
    assessments: tuple[Assessment, ...]
    quieted: tuple[Quieted, ...] = ()
    # Added lines the line-pattern rules pass over (each longer than MINIFIED_LINE_CHARS).
    long_lines: int = 0


# Patch types whose file the base has under the same name, with its lines changed.
_SAME_NAME = frozenset({"modify", "mode"})

# A file the config's `ignore` names: checked for secrets only, and not reviewed otherwise.
IGNORED = "ignored_by_config"

# From this many characters of files to check (a file's text and its added lines: about
# 25 KB of new code) a second process pays: forking one costs ~3 ms, and the rules read
# about a millisecond of Python for each 2 KB (bench/hook_latency.py: 20 new modules and 20
# edited ones took 17 and 45 ms less; two new modules of 18 KB, the same).
PARALLEL_MIN_CHARS = 50_000


def run_rules(units: Iterable[ReviewUnit], read_new: ReadNew, config: Config,
              history: Iterable[HistoryLine] = (),
              project: ProjectSource | None = None,
              read_old: ReadNew | None = None, links: Iterable[Link] = ()) -> RulesResult:
    """Tag and rate every unit and collect the findings rules can make on added lines (and,
    for a range of commits, on lines a commit added and a later one removed). A large change
    is checked on more than one core (`limits.processes`); the result is the same.
    `project` reads other files of the reviewed side (a module a changed file imports);
    `read_old` a changed file as the base has it (a scanner asks whether a finding was
    there already); `links` the symlinks that make a file code (a link the change adds makes
    its target's whole content new code)."""
    all_units = tuple(units)
    policy = Policy.of(config, all_units)
    kept = tuple(u for u in all_units if not matches_any(u.file_path, config.ignore))
    # Files the config ignores are not reviewed, but a secret in them is still a secret.
    ignored = tuple(u for u in all_units if matches_any(u.file_path, config.ignore))
    # What quietens each file is decided by the base, never by a name the change adds.
    kinds = file_kinds(_by_path(all_units), project, read_new)
    shared = _Shared(ChangeLines(all_units, read_new), ProjectFiles(project), read_old)
    said: list[str] = []
    changes = (_file_changes(kept, read_new, shared, kinds)
               + _file_changes(ignored, read_new, shared, kinds, {IGNORED})
               + _linked(links, all_units, read_new, shared, kinds, config, said))
    # Read here, once: the workers start with the files in memory (and the context step
    # reads them again from the same cache). One file is checked here, read if a rule asks.
    weights = ([len(change.new_text or "") + _added_chars(change) for change in changes]
               if len(changes) > 1 else [1] * len(changes))
    processes = (config.limits.processes
                 if sum(weights) >= PARALLEL_MIN_CHARS and len(changes) > 1 else 1)
    # detect-secrets is loaded by each process that has a line for it, not before the fork:
    # most changes have no such line, and two processes load it at once on two cores.
    checked = map_in_processes(partial(_check_change, config=config, policy=policy), changes,
                               weights, processes)
    findings = [finding for outcome in checked for finding in outcome.findings]
    quieted = [quiet for outcome in checked for quiet in outcome.quieted]
    history_found, history_quieted = _history_findings(history, config, kinds, policy)
    findings += history_found
    quieted += history_quieted
    findings.sort(key=lambda f: (f.file_path, f.start_line, f.rule_id))
    assessed = {unit.unit_id: assessment for change, outcome in zip(changes, checked,
                                                                    strict=True)
                if not change.tags & {IGNORED, LINKED}
                for unit, assessment in zip(change.units, outcome.assessments, strict=True)}
    rated = tuple(apply(u, assessed.get(u.unit_id)
                        or assess(u, [], kind=kinds.get(u.file_path, FileKind()).tags))
                  for u in kept)
    notes = said + [note for outcome in checked for note in outcome.notes]
    quieted.sort(key=lambda q: (q.finding.file_path, q.finding.start_line, q.finding.rule_id))
    return RulesResult(units=rated, findings=tuple(findings), quieted=tuple(quieted),
                       quieted_files=file_quietenings(
                           changes, config, policy, IGNORED,
                           {c.path: o.long_lines for c, o in zip(changes, checked, strict=True)
                            if o.long_lines}),
                       ignored_units=len(all_units) - len(kept),
                       notes=tuple(dict.fromkeys(notes)))


def _by_path(units: tuple[ReviewUnit, ...]) -> dict[str, list[ReviewUnit]]:
    grouped: dict[str, list[ReviewUnit]] = {}
    for unit in units:
        grouped.setdefault(unit.file_path, []).append(unit)
    return grouped


def _added_chars(change: FileChange) -> int:
    return sum(len(line.text) for line in change.added)


def _check_change(change: FileChange, config: Config, policy: Policy) -> _Checked:
    """A file's findings, notes and the assessment of each of its units."""
    found, quieted = _check_file(change, config, policy)
    if change.linked:
        found = [as_linked(finding, change) for finding in found]
        quieted = [q.replace(finding=as_linked(q.finding, change)) for q in quieted]
    findings = sorted(found, key=lambda f: (f.start_line, f.rule_id))
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
    # The long lines of a file the base holds minified that the line patterns passed over.
    long_lines = change.minified_lines
    return _Checked(findings=tuple(findings), notes=tuple(notes), assessments=assessments,
                    quieted=tuple(quieted), long_lines=long_lines)


def _history_findings(history: Iterable[HistoryLine], config: Config,
                      kinds: dict[str, FileKind],
                      policy: Policy) -> tuple[list[Finding], list[Quieted]]:
    """Secrets in the pushed history, in every file (a file the config ignores too), and
    what quietened them."""
    rule = secrets.HISTORY_RULE
    lines = list(history)
    if not lines:
        return [], []
    # A file the range added and removed again had a name only the change gave it; a
    # Markdown page is documentation by what it is (rules/quieting.py).
    # Documentation's kind wins where a file has both: it quietens every type of secret.
    quiet = {path: Quiet("docs", kind.decided("docs")) if "docs" in kind.tags
             else Quiet("test_code", kind.decided("test_file"))
             for path, kind in kinds.items() if kind.tags & secrets.QUIET_TAGS}
    quiet |= {line.file_path: Quiet("docs", "change") for line in lines
              if is_prose(line.file_path)
              and (line.file_path not in quiet or quiet[line.file_path].kind != "docs")}
    findings: list[Finding] = []
    quieted: list[Quieted] = []
    for finding, said in rule.check_history(lines, quiet):
        setting = config.rule(rule.id, finding.file_path)
        if not setting.enabled:
            said = Quiet("config", policy.decided(setting.trusted), justification=setting.where)
        elif said is None or said.given is not None:
            finding, said = _levelled(finding, said, rule, FileKind(), setting, policy)
        if said is None or said.given is not None:
            findings.append(finding.replace(severity=said.given) if said else finding)
        if said is not None:
            quieted.append(_quieted(finding, said))
    return findings, quieted


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


def _linked(links: Iterable[Link], units: tuple[ReviewUnit, ...], read_new: ReadNew,
            shared: _Shared, kinds: dict[str, FileKind], config: Config,
            notes: list[str]) -> list[FileChange]:
    """The files links the change adds lead to, as the links make them (rules/linked.py);
    one the config ignores by the link's name is checked for secrets only."""
    changes = linked_changes(links, units, read_new, kinds, partial(
        FileChange, change=shared.change, project=shared.project), notes,
        ignored=lambda path: matches_any(path, config.ignore))
    for change in changes:
        if matches_any(change.linked, config.ignore):
            change.tags = change.tags | {IGNORED}
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


def _check_file(change: FileChange, config: Config,
                policy: Policy) -> tuple[list[Finding], list[Quieted]]:
    """A file's findings, and what quietenings removed or lowered. A rule the file's kind,
    the config's `ignore` or a setting switches off still runs (but an external analyzer),
    and its findings are recorded as quietened, with who decided it."""
    findings: list[Finding] = []
    quieted: list[Quieted] = []
    # One finding a rule and line: reported, else quietened.
    seen: set[tuple[str, int]] = set()
    seen_quiet: set[tuple[str, int]] = set()
    # What an analyzer does better is its own while it runs (not where the file is skipped).
    replaced = {rule_id for scanner in scanners.RULES
                if _skipped(scanner, change, config, policy) is None
                and scanner.available_for(change) for rule_id in scanner.replaces}
    for rule in RULES.values():
        setting = config.rule(rule.id, change.path)
        if rule.id in replaced or not rule.applies_to(change):
            continue
        skip = _skipped(rule, change, config, policy)
        if skip is not None and rule.id in _SCANNERS:
            continue
        for hit in _hits(rule, change):
            key = (hit.rule_id, hit.line)
            anchored = None if key in seen else _anchor(hit, rule, change, skip)
            if anchored is None:
                continue
            finding, quiet = _levelled(*anchored, rule, change.kind, setting, policy)
            if quiet is None or quiet.given is not None:
                seen.add(key)
                findings.append(finding.replace(severity=quiet.given) if quiet else finding)
            if quiet is not None and key not in seen_quiet:
                seen_quiet.add(key)
                quieted.append(_quieted(finding, quiet))
    return findings, quieted


def _quieted(finding: Finding, quiet: Quiet) -> Quieted:
    return Quieted(finding=finding, given=quiet.given, kind=quiet.kind,
                   decided_by=quiet.decided_by, justification=quiet.justification)


def _skipped(rule: Rule, change: FileChange, config: Config, policy: Policy) -> Quiet | None:
    """Why a rule's findings on this file are not reported, if they are not: the rule is
    off here, the config's `ignore` names the file, or its kind is checked for secrets
    only."""
    setting = config.rule(rule.id, change.path)
    if not setting.enabled:
        return Quiet("config", policy.decided(setting.trusted), justification=setting.where)
    if rule.category == "secrets":
        return None
    if IGNORED in change.tags:
        glob, origin = ignore_glob(change.linked or change.path, config)
        return Quiet("ignore", policy.decided(origin.trusted), justification=glob)
    kind = next((tag for tag in sorted(change.tags & SECRETS_ONLY_TAGS)), None)
    if kind is not None:
        return Quiet(cast(QuietKind, kind), change.kind.decided(cast(Tag, kind)))
    return None


def _hits(rule: Rule, change: FileChange) -> list[Hit]:
    """A rule's hits on a file, the most severe first; a file whose code is nested deeper
    than a rule can follow (a repository's file is untrusted input) loses that rule, with a
    note, not the run."""
    try:
        hits = list(rule.check(change))
    except RecursionError:
        change.notes.append(f"{change.path} is nested too deeply for `{rule.id}`: not checked "
                            "by it")
        return []
    # One finding a rule and line (_check_file): the most severe of its hits there, whatever
    # order the rule found them in (a key's armour after its material's entropy).
    return sorted(hits, key=lambda hit: -SEVERITY_RANK[hit.severity or rule.severity])


def _anchor(hit: Hit, rule: Rule, change: FileChange,
            skip: Quiet | None) -> tuple[Finding, Quiet | None] | None:
    """The finding for a hit on an added line (anywhere, for a rule that decides what the
    change brought itself), at the severity it would have had, and what quietens it: the
    rule being skipped here, a suppression on its first line, the rule's own word. None
    when it is not on the change."""
    lines = range(hit.line, hit.last_line + 1)
    if hit.base_line is not None:
        # On a line the change removed: the unit that removes it. No suppression can be
        # written on a removed line, and none elsewhere covers it.
        unit = next((u for u in change.units if _removes_line(u, hit.base_line)), None)
    else:
        unit = next((u for u in change.units for n in lines if _adds_line(u, n)), None)
    if unit is None and rule.whole_file and change.units:
        unit = change.units[0]  # the rule found the change brought it, away from its lines
    if unit is None:
        return None
    # No suppression can be written on a removed line, and none elsewhere covers it.
    suppressed = (NOTHING if hit.base_line is not None
                  else suppression(change, hit.line, rule.id, secret=rule.category == "secrets"))
    # Whatever the change added that would have quietened this finding is said with it.
    said = " ".join(filter(None, (hit.message, change.kind.note(
        secrets=rule.category == "secrets"), suppressed.note)))
    finding = Finding(
        file_path=change.path, start_line=hit.line, end_line=hit.last_line,
        severity=hit.severity or rule.severity, category=rule.category, rule_id=rule.id,
        title=hit.title or rule.title, message=said, suggestion=hit.suggestion,
        source="rule", unit_id=unit.unit_id, base_line=hit.base_line,
    )
    return finding, skip or suppressed.quiet or hit.quiet


def _levelled(finding: Finding, quiet: Quiet | None, rule: Rule, kind: FileKind,
              setting: RuleSetting, policy: Policy) -> tuple[Finding, Quiet | None]:
    """The finding and what quietens it, once the levels that lower a finding are applied
    (test code one level quieter; the config's level for the rule): the last that lowers
    it is the one said, at the level it leaves."""
    if quiet is not None and quiet.given is None:
        return finding, quiet  # removed: no level to apply
    severity: Severity = quiet.given if quiet is not None and quiet.given else finding.severity
    # Test code runs on developer machines with fixture data: one level quieter.
    if "test_file" in kind.tags and rule.category != "secrets":
        severity = _LOWER[severity]
        quiet = Quiet("test_code", kind.decided("test_file"), given=severity)
    if setting.severity is not None:
        severity = setting.severity
        quiet = Quiet("config", policy.decided(setting.trusted), given=severity,
                      justification=setting.where)
    if quiet is None or SEVERITY_RANK[severity] >= SEVERITY_RANK[finding.severity]:
        return finding.replace(severity=severity), None
    return finding, quiet


def _removes_line(unit: ReviewUnit, base_line: int) -> bool:
    return unit.hunk is not None and any(
        line.old_lineno == base_line for line in unit.hunk.lines if line.kind == "del")


def _adds_line(unit: ReviewUnit, number: int) -> bool:
    return unit.hunk is not None and any(
        line.new_lineno == number for line in unit.hunk.lines if line.kind == "add")
