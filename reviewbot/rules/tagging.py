"""Tags, risk rating and context suggestions for each unit (seed 004 section 1).

Tags come from the path (what kind of file) and the hunk (what kind of edit). The
rating turns tags and findings into `rule_context_level`, `rule_confidence`,
`rule_notes`, `rule_extra_requests` and the slim `agent_decision`. Confidence is
raised for security and config units and lowered for noisy tags (seed 004 section 6).
"""

from __future__ import annotations

import re

import msgspec

from reviewbot.code.definitions import (
    changed_config_keys,
    changed_signatures,
    definition_name,
    removed_definitions,
)
from reviewbot.code.enclosing import Header, enclosing_headers
from reviewbot.code.lexical import comment_flags, is_comment, is_import
from reviewbot.code.path_kinds import path_tags
from reviewbot.code.whole_text import compile_whole_text
from reviewbot.lazy_re import lazy_re
from reviewbot.levels import SEVERITY_RANK
from reviewbot.rules.base import SECRETS_ONLY_TAGS, is_long, is_minified
from reviewbot.rules.quieting import QUIETING_TAGS
from reviewbot.rules.version_bumps import only_versions
from reviewbot.schema.findings import Finding
from reviewbot.schema.records import ContextLevel, Priority, Tag
from reviewbot.schema.units import SECURITY_NOTE, AgentDecision, DiffLine, ExtraRequest, ReviewUnit

LARGE_CHANGE_LINES = 200

# security_sensitive: (reason, pattern over the changed lines). Matched against the lines
# lowered, with the pattern lowered too (it has no upper-case escapes such as \S; a test
# checks).
SECURITY_SOURCES: tuple[tuple[str, str], ...] = (
        ("auth", r"\b(auth\w*|login|logout|passw\w*|credential\w*|session|cookie|csrf|jwt|"
                 r"oauth\w*|sign_?in)\b"),
        ("crypto", r"\b(crypto\w*|cipher|encrypt\w*|decrypt\w*|hashlib|hmac|bcrypt|scrypt|"
                   r"pbkdf2|md5|sha1|random\.(random|randint)|secrets\.)"),
        ("permissions", r"\b(permission\w*|acl|is_admin|is_superuser|role\w*|privilege\w*|"
                        r"chmod|chown|umask|setuid|sudo)\b"),
        ("deserialisation", r"\b(pickle|marshal|shelve|yaml\.(unsafe_)?load|"
                            r"unserialize|ObjectInputStream|readObject|jsonpickle|dill)\b|"
                            # A class looked up by a name that came with the data.
                            r"\b(sys\.modules\s*\[|__import__\s*\()"),
        ("subprocess", r"\b(subprocess|os\.system|os\.popen|popen|child_process|execSync|"
                       r"spawn\w*|Runtime\.getRuntime|exec\.Command|shell\s*=\s*True|"
                       r"check_output|check_call|getoutput|create_subprocess_\w+|pty|shlex|"
                       r"os\.exec\w*|commands)\b|\b(eval|exec)\s*\("),
        ("sql", r"\b(select\s.+\sfrom|insert\s+into|update\s+\w+\s+set|delete\s+from|"
                r"\.execute(many|script)?\s*\(|cursors?\b|executeQuery|\.raw\s*\(|\.extra\s*\(|"
                r"psycopg\w*|where\s+\w+\s*=|\.i?like\s*\(|Criterion|pypika|"
                # An ORM's own SQL: Django's `as_sql(self, compiler, connection)` and kin.
                r"compiler|quote_name)|['\"](where|order_by|group_by|having)['\"]|"
                # Inside words too: RawSQL, as_sql, sqlalchemy, psql, mysql.
                r"sql"),
        ("templates/html", r"(innerHTML|outerHTML|dangerouslySetInnerHTML|v-html|"
                           r"render_template\w*|mark_safe|Markup\b|\|\s*safe\b|format_html|"
                           r"document\.write|autoescape|HttpResponse|make_response|HTMLResponse|"
                           r"jinja2?|Template\(|escape\(|<script|\{\{|\{%|html|xml|sanitiz|bleach)"),
        ("redirects", r"\b(redirect\w*|HttpResponseRedirect|next_url|return_to|return_url|"
                      r"redirect_uri|Location)\b"),
        ("network/tls", r"\b(ssl|tls|https?://|verify\s*=|certificate|cert_reqs|"
                        r"InsecureSkipVerify|rejectUnauthorized|check_hostname|cors)\b"),
        ("file paths", r"(\.\./|send_file|send_from_directory|FileResponse|os\.path\.join|"
                       r"(real|abs|norm)path|safe_join|secure_filename|tarfile|zipfile|"
                       r"extractall|rmtree|unlink|upload\w*|\bopen\s*\([^)]*(path|file|name|dir)|"
                       r"(open|join|resolve)\s*\(.*\b(request|req|params|user_input|argv)\b|"
                       # Containment checks and separators: where traversal is stopped or not.
                       r"commonprefix|commonpath|relative_to|os\.(alt)?sep|posixpath|"
                       r"['\"]\.\.['\"])"),
        ("secrets", r"\b(secret\w*|api[_-]?key|private[_-]?key|access[_-]?key|token)\b"),
)


# One pass over the text for each (`re` took 0.4 s on 200 new modules of pip, RE2 0.03 s).
_SECURITY_PATTERNS = tuple((name, compile_whole_text(source.lower()))
                           for name, source in SECURITY_SOURCES)
_SECURITY_PATH = lazy_re(
    # A token's module, not a tokenizer's (`tokenize.py`).
    r"(auth|login|session|crypto|security|permission|acl|oauth|jwt|password|secret|token(?!iz)|"
    r"cert|ssl|tls|sanitiz|upload|download|archive|(^|/)static(files)?\.py$|"
    # Database backends and HTML handling, by name: an ORM's SQL, a sanitizer.
    r"postgres|mysql|sqlite|oracle|(^|/)(db|sql|html)/)", re.IGNORECASE,
)

_TOKEN_CONSTANT = lazy_re(r"\btoken\.[A-Z][A-Z0-9_]*\b")

class Assessment(msgspec.Struct, frozen=True):
    tags: tuple[Tag, ...]
    level: ContextLevel
    confidence: float
    priority: Priority
    notes: tuple[str, ...]
    requests: tuple[ExtraRequest, ...]


def content_tags(unit: ReviewUnit, docstrings: frozenset[int] = frozenset()) -> list[Tag]:
    """Tags that describe the edit itself, from the hunk's added and removed lines."""
    if unit.hunk is None:
        return []
    changed = [line for line in unit.hunk.lines if line.kind != "ctx"]
    tags: list[Tag] = []
    if changed and _only_whitespace(changed, unit.language):
        tags.append("only_whitespace")
    meaningful = [line.text for line in changed if line.text.strip()]
    flags = comment_flags([line.text for line in unit.hunk.lines], unit.language)
    if meaningful and all(flag for line, flag in zip(unit.hunk.lines, flags, strict=True)
                          if line.kind != "ctx" and line.text.strip()):
        tags.append("only_comments")
    if meaningful and _only_docs(unit, changed, docstrings):
        tags.append("only_docs")
    if meaningful and _only_imports(meaningful, unit.language):
        tags.append("only_imports")
    if ("dependency_manifest" in path_tags(unit.file_path)
            and only_versions(unit.file_path, unit.hunk.lines)):
        tags.append("only_versions")
    if unit.metrics.added_lines + unit.metrics.removed_lines > LARGE_CHANGE_LINES:
        tags.append("large_change")
    if is_minified(unit):
        tags.append("minified")
    return tags


def security_reasons(unit: ReviewUnit, headers: tuple[Header, ...] = ()) -> list[str]:
    """Why a unit is security sensitive (empty when it is not). `headers`: the file's
    definitions (Python), for the ones around the change."""
    reasons: list[str] = []
    if _SECURITY_PATH.search(unit.file_path):
        reasons.append("path")
    if unit.hunk is None:
        return reasons
    # Changed lines, plus the enclosing definition: a change inside login() is about auth.
    # Minified lines are nobody's to read line by line (their words are a library's).
    code = [line.text for line in unit.hunk.lines
            if not is_long(line.text) and (line.kind != "ctx" or definition_name(line.text))
            and not is_comment(line.text, unit.language)]
    code.append(unit.hunk.section)
    changed = [line.new_lineno for line in unit.hunk.lines
               if line.kind == "add" and line.new_lineno is not None]
    if headers and changed:
        code += enclosing_headers(headers, min(changed), max(changed))
    # One search per reason over the lines joined (not one per line: 11 x 2,600 searches
    # on a new file of 2,600 lines).
    # A tokenizer's constants (`token.NAME`, `token.ASYNC`) are no secret: upper case is
    # what tells them from a token's use, and the patterns see the text lowered.
    text = _TOKEN_CONSTANT.sub("", "\n".join(code)).lower().encode()
    reasons += [name for name, pattern in _SECURITY_PATTERNS if pattern.search(text)]
    return reasons


def assess(unit: ReviewUnit, findings: list[Finding],
           docstrings: frozenset[int] = frozenset(),
           headers: tuple[Header, ...] = (), *,
           kind: frozenset[Tag] = frozenset()) -> Assessment:
    """Tags, context level, confidence, priority, notes and requests for one unit. `kind`:
    the file's quietening tags that the base declares (rules/quieting.py); the path's other
    quietening tags are not the unit's."""
    tags = [tag for tag in path_tags(unit.file_path) if tag not in QUIETING_TAGS or tag in kind]
    tags += sorted(kind - set(tags))
    tags += content_tags(unit, docstrings)
    # Words in prose ("token", "password") do not make documentation security-sensitive
    # code; a secret found in it still does, through its finding.
    # Nor does minified code (every changed line of the unit is one), which nobody reviews
    # line by line.
    # Nor do the names in a dependency bump (`sqlalchemy`, `pyjwt`): what the release
    # changed is not in the diff.
    reasons = (security_reasons(unit, headers)
               if not (SECRETS_ONLY_TAGS | {"docs", "minified", "only_versions"}) & set(tags)
               else [])
    if findings and any(f.category in ("security", "secrets") for f in findings):
        reasons.append("rule findings")
    if reasons:
        tags.append("security_sensitive")
    tags = list(dict.fromkeys(tags))
    notes = [f"tag {tag}" for tag in tags if tag != "security_sensitive"]
    if reasons:
        notes.append(f"{SECURITY_NOTE}{', '.join(dict.fromkeys(reasons))}")
    notes += [f"{f.rule_id} ({f.severity}) at L{f.start_line}" for f in findings]
    level, confidence, priority = _rate(unit, set(tags), findings)
    return Assessment(
        tags=tuple(tags), level=level, confidence=confidence, priority=priority,
        notes=tuple(notes), requests=tuple(_requests(unit, set(tags), findings, priority)),
    )


def apply(unit: ReviewUnit, assessment: Assessment) -> ReviewUnit:
    return unit.replace(
        tags=assessment.tags,
        rule_context_level=assessment.level,
        rule_confidence=assessment.confidence,
        rule_notes=assessment.notes,
        rule_extra_requests=assessment.requests,
        agent_decision=AgentDecision(context_level=assessment.level,
                                     priority=assessment.priority))


_QUIET = frozenset({"only_whitespace", "only_comments", "only_docs", "docs"})


def _rate(unit: ReviewUnit, tags: set[str],
          findings: list[Finding]) -> tuple[ContextLevel, float, Priority]:
    worst = max((SEVERITY_RANK[f.severity] for f in findings), default=-1)
    if worst >= SEVERITY_RANK["warning"]:
        return ("file_context" if unit.patch_type != "add" else "function"), 0.95, "high"
    if "security_sensitive" in tags:
        level: ContextLevel = "file_context" if "large_change" in tags else "function"
        return level, 0.85, "high"
    if tags & SECRETS_ONLY_TAGS:
        return "diff_only", 0.95, "low"
    if tags & _QUIET or tags & {"only_imports", "only_versions"}:
        return "diff_only", 0.9, "low"
    if tags & {"ci_workflow", "dependency_manifest", "migration", "routing_file"}:
        return "file_context", 0.8, "medium"
    if "config_file" in tags:
        return "file_context", 0.75, "medium"
    if unit.hunk is None:
        return "diff_only", 0.8, "low"
    if "test_file" in tags:
        return "function", 0.6, "low"
    if "large_change" in tags:
        return "file_context", 0.6, "medium"
    return "function", 0.5, "medium"


def _requests(unit: ReviewUnit, tags: set[str], findings: list[Finding],
              priority: Priority) -> list[ExtraRequest]:
    requests: list[ExtraRequest] = []
    signatures = changed_signatures(unit)
    removed = removed_definitions(unit)
    # A risky edit, or a changed or removed definition: the reviewer needs to see what it
    # was before.
    risky = priority == "high" or "migration" in tags or bool(signatures or removed)
    if risky and unit.patch_type in ("modify", "rename") and unit.metrics.removed_lines:
        requests.append(ExtraRequest(type="previous_version"))
    # Callers of a function whose signature changed, or that the hunk removes or moves.
    for name in [*signatures, *removed][:4]:
        requests.append(ExtraRequest(type="search_callers", details=name, symbol=name))
    if "config_file" in tags:
        for key in changed_config_keys(unit)[:3]:
            requests.append(ExtraRequest(type="search_config_usage", details=key, keyword=key))
    if findings:
        requests.append(ExtraRequest(type="scanner_issues"))
    return requests


# Languages whose indentation is syntax: a line moved out of an `if` changes only its spaces.
_INDENTED = frozenset({"python", "yaml", "make", "coffeescript", "haskell"})


def _only_whitespace(changed: list[DiffLine], language: str) -> bool:
    if len({line.kind for line in changed}) == 1:  # only added, or only removed, lines
        return all(not line.text.strip() for line in changed)

    def squash(kind: str) -> list[str]:
        lines = [line.text for line in changed if line.kind == kind]
        if language in _INDENTED:
            # Leading space kept, line by line: an indent is not a formatting detail here.
            return [_indent(text) + "".join(text.split()) for text in lines
                    if text.strip()]
        return ["".join("".join(lines).split())]
    return squash("add") == squash("del")


def _indent(text: str) -> str:
    return text[:len(text) - len(text.lstrip())].expandtabs(8)


_DOCS_LANGUAGES = frozenset({"markdown", "rst", "text"})


def _only_docs(unit: ReviewUnit, changed: list[DiffLine], docstrings: frozenset[int]) -> bool:
    """Documentation files, or edits that stay inside docstrings and comments.

    `docstrings` are the new file's docstring lines. A removed line was inside a docstring
    when the new-side lines around it both are.
    """
    if unit.language in _DOCS_LANGUAGES or (unit.language == "html"
                                            and "docs" in path_tags(unit.file_path)):
        # "text" is also what a name with no known suffix gets: prose only as `.txt`.
        return unit.language != "text" or unit.file_path.lower().endswith(".txt") or (
            "docs" in path_tags(unit.file_path))
    if not docstrings or unit.hunk is None:
        return False
    lines = unit.hunk.lines
    new_numbers = [line.new_lineno for line in lines]
    for index, line in enumerate(lines):
        if line.kind == "ctx" or not line.text.strip() or is_comment(line.text, unit.language):
            continue
        if line.kind == "add" and line.new_lineno not in docstrings:
            return False
        if line.kind == "del":
            before = next((n for n in reversed(new_numbers[:index]) if n), None)
            after = next((n for n in new_numbers[index + 1:] if n), None)
            if before not in docstrings or after not in docstrings:
                return False
    return True


def _only_imports(texts: list[str], language: str) -> bool:
    return any(is_import(t, language) for t in texts) and all(
        is_import(t, language) or _is_import_continuation(t) for t in texts)


_CONTINUATION = lazy_re(r"^\s*(?:[\w.]+(?:\s+as\s+\w+)?,?|\)|\"[\w./@-]+\",?|[{}],?)\s*$")


def _is_import_continuation(text: str) -> bool:
    return bool(_CONTINUATION.match(text))



