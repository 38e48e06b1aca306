"""Line-pattern rules for JavaScript/TypeScript, Go, Java, shell, Dockerfiles and SQL.

Each rule has variants tried in order; the first that matches an added line decides
the severity and message. Comment lines are skipped: a line that talks about eval()
is not a call to it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache, cached_property, lru_cache

import msgspec
import re2

from reviewbot.code.whole_text import WholeTextPattern, compile_whole_text, utf8
from reviewbot.lazy_re import lazy_re
from reviewbot.levels import SEVERITY_RANK, Severity
from reviewbot.rules.base import (
    MINIFIED_LINE_CHARS,
    FileChange,
    Hit,
    Quiet,
    RuleBase,
    RuleInfo,
)
from reviewbot.rules.pattern_views import code_line, views
from reviewbot.schema.records import Category

JS = frozenset({"javascript", "typescript", "vue", "svelte", "html"})
GO = frozenset({"go"})
JAVA = frozenset({"java", "kotlin", "scala"})
SHELLISH = frozenset({"shell", "dockerfile", "make", "yaml"})
SQL = frozenset({"sql"})


class Variant(msgspec.Struct, frozen=True, dict=True):
    """A pattern in the syntax `re` and RE2 share (no lookarounds, no backreferences): `re`
    reads ordinary lines (its cost a call is lower), RE2 long ones (linear in the line)."""

    source: str
    severity: Severity | None
    message: str
    flags: int = 0

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """Compiled when first used: most changes hold none of these languages, and the
        forty patterns cost every hook run their compilation at import."""
        return re.compile(self.source, self.flags)

    @property
    def long_source(self) -> str:
        return ("(?i)" if self.flags & re.IGNORECASE else "") + self.source

    @cached_property
    def long_pattern(self) -> WholeTextPattern:
        return compile_whole_text(self.long_source)

    def search(self, text: str, encoded: bytes | None = None) -> bool:
        """Whether the pattern matches the text; a long text by RE2, on its UTF-8 bytes
        (`encoded`, when the caller has them already), every rule's patterns in one pass."""
        if len(text) <= MINIFIED_LINE_CHARS:
            return self.pattern.search(text) is not None
        data = encoded if encoded is not None else text.encode("utf-8", "surrogatepass")
        found = _long_matches(data)
        if found is None:
            return self.long_pattern.search(data) is not None
        return self.long_source in found


class PatternRule(RuleBase, frozen=True):
    languages: frozenset[str]
    variants: tuple[Variant, ...]
    suggestion: str
    unless: Variant | None = None
    skip_tags: frozenset[str] = frozenset()
    # The functions whose calls the rule reads as expressions (rules/pattern_views.py).
    calls: frozenset[str] = frozenset()

    def applies_to(self, change: FileChange) -> bool:
        return change.language in self.languages and bool(change.added)

    def check(self, change: FileChange) -> Iterator[Hit]:
        # In a kind it skips (test code: a test's output is its own), what it finds is
        # recorded as quietened, not reported.
        quiet = (Quiet("test_code", change.kind.decided("test_file"))
                 if change.tags & self.skip_tags else None)
        found: dict[int, tuple[Variant, int | None]] = {}
        for number, text in change.pattern_lines.items():
            # A line that only starts like a comment is asked of the language's tokens, and
            # only when it matches: what matches in a comment is rare, lexing a file is not.
            if (variant := self.first_match(text)) is not None \
                    and not change.is_comment(number):
                found[number] = (variant, None)
        for view in views(change, self.calls):
            variant = self.first_match(view.text)
            if variant is None:
                continue
            alone = [match for n in view.lines
                     if (match := self.first_match(code_line(change, n))) is not None]
            if any(self._rank(match) >= self._rank(variant) for match in alone):
                continue  # a line has it on its own: reported there, or the base's
            added = change.added_by_line
            line = next((n for n in range(view.first, view.last + 1) if n in added),
                        None) or min(n for n in view.lines if n in added)
            for n in view.lines:  # what a line had on its own is part of this one
                found.pop(n, None)
            found[line] = (variant, view.last)
        for number in sorted(found):
            variant, last = found[number]
            yield self._hit(number, variant, last, quiet)

    def _rank(self, variant: Variant) -> int:
        return SEVERITY_RANK[variant.severity or self.severity]

    def first_match(self, text: str) -> Variant | None:
        """The first variant that matches the text, unless the rule's exception does."""
        pieces = line_pieces(text)
        if self.unless is not None and any(self.unless.search(piece, data)
                                           for piece, data in pieces):
            return None
        return next((v for v in self.variants for piece, data in pieces
                     if v.search(piece, data)), None)

    def _hit(self, line: int, variant: Variant, last: int | None,
             quiet: Quiet | None) -> Hit:
        return Hit(rule_id=self.id, line=line, end_line=last if last and last > line else None,
                   severity=variant.severity, message=variant.message,
                   suggestion=self.suggestion, quiet=quiet)


@cache
def _every_pattern() -> tuple[re2.Set, tuple[str, ...]]:
    """Every pattern of every rule here, as one RE2 set: a long line is read once for all
    of them, not once for each (forty passes over a 4.5 MB bundle were a tenth of a
    second)."""
    sources = tuple(dict.fromkeys(v.long_source for rule in RULES
                                  for v in (*rule.variants, *filter(None, [rule.unless])))
                    )
    options = re2.Options()
    options.never_capture = True
    options.log_errors = False
    # Room for the set's automaton on a megabytes-long line (RE2's default is 8 MB).
    options.max_mem = 64 << 20
    patterns = re2.Set.SearchSet(options)
    for source in sources:
        patterns.Add(source)
    patterns.Compile()
    return patterns, sources


@lru_cache(maxsize=16)
def _long_matches(data: bytes) -> frozenset[str] | None:
    """The patterns (by their RE2 source) that match a long piece of a line; None when RE2's
    set cannot answer (it gave up on memory), and each pattern is searched alone."""
    patterns, sources = _every_pattern()
    try:
        found = patterns.Match(data)
    except re2.error:
        return None
    return frozenset(sources[index] for index in found or ())


@lru_cache(maxsize=64)
def line_pieces(text: str) -> tuple[tuple[str, bytes | None], ...]:
    """The pieces of a line the patterns read, each with its UTF-8 bytes when it is long
    (RE2 reads bytes): computed once for every rule that reads the line. Each piece a bare
    \r (or, in JavaScript, U+2028/U+2029) ends is a line to the language
    (code/line_breaks.py): an anchored pattern must see it as one."""
    broken = "\r" in text or "\u2028" in text or "\u2029" in text
    return tuple((piece, utf8(piece) if len(piece) > MINIFIED_LINE_CHARS else None)
                 for piece in (_BREAKS.split(text) if broken else (text,)))


def _v(pattern: str, severity: Severity | None, message: str, flags: int = 0) -> Variant:
    return Variant(pattern, severity, message, flags)


def _rule(rule_id: str, title: str, severity: Severity, category: Category,
          languages: frozenset[str], variants: tuple[Variant, ...], suggestion: str,
          rationale: str, unless: str | None = None,
          skip_tags: frozenset[str] = frozenset(),
          calls: frozenset[str] = frozenset()) -> PatternRule:
    # The severities its variants report: what `reviewbot rules` shows.
    levels = tuple(sorted({v.severity or severity for v in variants},
                          key=lambda level: SEVERITY_RANK[level]))
    return PatternRule(
        info=RuleInfo(id=rule_id, title=title, severity=severity, category=category,
                      rationale=rationale, levels=levels),
        languages=languages, variants=variants, suggestion=suggestion,
        unless=Variant(unless, None, "") if unless else None, skip_tags=skip_tags,
        calls=calls,
    )


_TESTS = frozenset({"test_file"})
# Calls whose options may switch TLS checks off (`https.request(url, {rejectUnauthorized:
# false})`, `new Agent({...})`).
_CLIENTS = frozenset({"Agent", "request", "get", "post", "put", "fetch", "connect", "create",
                      "createServer", "createSecureContext", "Client", "axios"})
_BREAKS = lazy_re("[\r\u2028\u2029]")

RULES = (
    _rule("js.eval", "eval or new Function", "warning", "security", JS, (
        _v(r"(?:^|[^\w.$])eval\s*\(|\b(?:window|globalThis|self)\s*\.\s*eval\s*\(", None,
           "`eval` runs a string as code."),
        _v(r"(?:^|[^\w.$])(?:new\s+)?Function\s*\(\s*[^\s)]", None,
           "`Function` compiles a string into code, with `new` or without."),
        _v(r"\(\s*0\s*,\s*eval\s*\)|\[\s*['\"]eval['\"]\s*\]\s*\(", None,
           "An indirect `eval` runs a string as code in the global scope."),
        _v(r"\bset(?:Timeout|Interval)\s*\(\s*(?:['\"`]|[\w$.]+\s*\+)", None,
           "A timer given a string compiles it as code, as `eval` does."),
        _v(r"(?:\bvm|\brequire\(\s*['\"](?:node:)?vm['\"]\s*\))\s*\.\s*(?:runIn(?:New|This)?"
           r"Context|compileFunction)\s*\(|\brunIn(?:New|This)Context\s*\(|"
           r"\bnew\s+vm\.Script\s*\(", None,
           "`vm` compiles a string into code, and its context is no security boundary."),
    ), "Parse data with JSON.parse; dispatch on values instead of building code.",
        "Code built from strings runs whatever the string says.",
        calls=frozenset({"eval", "Function", "setTimeout", "setInterval", "runInNewContext",
                         "runInThisContext", "runInContext", "compileFunction", "Script"})),
    _rule("js.command-injection", "Shell command built from a template", "error", "security",
          JS, (
        _v(r"\b(exec|execSync)\s*(?:\?\.)?\s*\(\s*`[^`]*\$\{", None,
           "A shell command is built with a template literal: input in it can run commands."),
        _v(r"\b(exec|execSync)\s*(?:\?\.)?\s*\(\s*('[^'\"]*'|\"[^'\"]*\")\s*\+", None,
           "A shell command is built by concatenation: input in it can run commands."),
        _v(r"\b(exec|execSync)\s*(?:\?\.)?\s*\(\s*\[\s*(('[^']*'|\"[^\"]*\")\s*,\s*)*[\w$.]+[^\]]*\]"
           r"\s*\.\s*join\(",
           None, "A shell command is joined from a list with values in it: input in it can "
                 "run commands."),
        _v(r"\b(spawn|spawnSync|execFile|execFileSync)\s*\(\s*(`[^`]*\$\{|('[^']*'|\"[^\"]*\")"
           r"\s*\+)[^;]*\bshell\s*:\s*(true|1|['\"]/)", None,
           "A command built from values is run with `shell: true`: input in it can run "
           "commands."),
        _v(r"\b(spawn|spawnSync|execFile|execFileSync)\s*\(\s*['\"](/usr)?(/bin/)?(ba|z|da)?sh"
           r"['\"]\s*,\s*\[\s*['\"]-\w*c['\"]\s*,\s*(`[^`]*\$\{|('[^']*'|\"[^\"]*\")"
           r"\s*\+)", None,
           "A command built from values is run through `sh -c`: input in it can run "
           "commands."),
    ), "Use execFile/spawn with an argument array instead of a shell string.",
        "child_process.exec passes its string to a shell.",
        calls=frozenset({"exec", "execSync", "spawn", "spawnSync", "execFile",
                         "execFileSync"})),
    _rule("js.sql-injection", "SQL built from a template or by concatenation", "error",
          "security", JS, (
        _v(r"\.\s*(query|execute|raw|prepare|unsafe|\$queryRawUnsafe|\$executeRawUnsafe)\s*"
           r"(?:\?\.)?\s*\(\s*(`[^`]*\b(?:SELECT|INSERT|UPDATE|DELETE|WITH|REPLACE)\b[^`]*\$\{|"
           r"`[^`]*\$\{[^`]*\b(?:SELECT|INSERT|UPDATE|DELETE|FROM|WHERE|SET|VALUES)\b|"
           r"'\s*(?:SELECT|INSERT|UPDATE|DELETE|WITH|REPLACE)\b[^']*'\s*\+|"
           r"\"\s*(?:SELECT|INSERT|UPDATE|DELETE|WITH|REPLACE)\b[^\"]*\"\s*\+)", None,
           "A query built from a template or by concatenation is run: values can change "
           "the query.", re.IGNORECASE),
    ), "Pass values as parameters (`db.query('... WHERE id = $1', [id])`, a tagged "
       "`sql` template, Prisma's `$queryRaw` tag).",
        "SQL built from values lets them change the query.",
        calls=frozenset({"query", "execute", "raw", "prepare", "unsafe", "$queryRawUnsafe",
                         "$executeRawUnsafe"})),
    _rule("js.inner-html", "HTML injected without escaping", "warning", "security", JS, (
        _v(r"(?:\.|\[\s*['\"`])(innerHTML|outerHTML)(?:['\"`]\s*\])?\s*\+?=(?:[^=]|$)", None,
           "Assigning to innerHTML/outerHTML parses the value as HTML (XSS if it holds input)."),
        _v(r"\bcreateContextualFragment\s*\(\s*[^\s)'\"`]", None,
           "createContextualFragment parses its string as HTML, scripts included."),
        _v(r"\binsertAdjacentHTML\s*\(|\bdocument\.write(ln)?\s*\(", None,
           "This writes raw HTML into the page (XSS if it holds input)."),
        _v(r"dangerouslySetInnerHTML", None,
           "dangerouslySetInnerHTML renders raw HTML (XSS if it holds input)."),
        _v(r"\bv-html\s*=", None, "v-html renders raw HTML (XSS if it holds input)."),
    ), "Set textContent, or sanitise with DOMPurify before inserting HTML.",
        "Raw HTML from input is cross-site scripting.",
        calls=frozenset({"insertAdjacentHTML", "write", "writeln",
                         "createContextualFragment"}),
        unless=r"(\.|\[\s*['\"`])(innerHTML|outerHTML)(['\"`]\s*\])?\s*=\s*(''|\"\"|``)\s*;?\s*$"),
    _rule("template.unescaped", "Template output without escaping", "warning", "security",
          frozenset({"html"}), (
        _v(r"\{\{[^}]*\|\s*safe\b", None,
           "`|safe` inserts the value as HTML without escaping (XSS if it holds input)."),
        _v(r"\{%-?\s*autoescape\s+(false|off)\b", None,
           "Autoescaping is switched off for this block: every value in it is raw HTML."),
        _v(r"\{%-?\s*filter\s+safe\b", None, "This filter inserts raw HTML."),
    ), "Escape in the template (drop |safe), or build the HTML with format_html/escape "
       "in code and mark only that as safe.",
        "Autoescaping is what keeps values from becoming markup."),
    _rule("js.tls-disabled", "TLS verification disabled", "error", "security",
          JS | SHELLISH, (
        _v(r"rejectUnauthorized\s*:\s*false", None,
           "rejectUnauthorized: false accepts any certificate."),
        _v(r"NODE_TLS_REJECT_UNAUTHORIZED['\"]?\s*\]?\s*[=:]\s*['\"]?0", None,
           "NODE_TLS_REJECT_UNAUTHORIZED=0 turns off certificate checks for the process."),
    ), "Keep verification on; add a private CA with the `ca` option or NODE_EXTRA_CA_CERTS.",
        "Without certificate checks TLS protects against nobody.", calls=_CLIENTS),
    _rule("js.weak-hash", "MD5/SHA-1 hash", "info", "security", JS, (
        _v(r"createHash\(\s*['\"](md5|sha1)['\"]", None,
           "MD5/SHA-1 are broken for security use; fine for checksums."),
    ), "Use sha256 (or a password hash such as scrypt/argon2 for passwords).",
        "MD5 and SHA-1 collide.", calls=frozenset({"createHash"})),
    _rule("js.debugger", "debugger statement", "warning", "maintainability", JS, (
        _v(r"^\s*debugger\s*;?\s*$", None, "`debugger` stops the page in the dev tools."),
    ), "Remove it before committing.", "Debugger statements left in code halt users."),
    _rule("js.console-log", "console.log left in code", "info", "maintainability", JS, (
        _v(r"\bconsole\.(log|debug|trace)\s*\(", None,
           "console.log is usually a debugging leftover."),
    ), "Remove it, or use the project's logger.", "Leftover logging clutters output.",
        skip_tags=_TESTS),
    _rule("go.sql-injection", "SQL built by string formatting", "warning", "security", GO, (
        _v(r"\.(Query|QueryRow|Exec|Prepare|Raw|Select|Get|Queryx|QueryRowx)(Context)?\(\s*"
           r"(ctx\s*,\s*)?(&?\w+\s*,\s*)?(fmt\.Sprintf\(|\"[^\"]*\"\s*\+)", "error",
           "A query built by formatting is executed: values can change the query."),
        _v(r"fmt\.Sprintf\(\s*\"\s*(SELECT|INSERT|UPDATE|DELETE)\b", None,
           "A SQL query is built with fmt.Sprintf.", re.IGNORECASE),
    ), "Use placeholders: db.Query(\"... WHERE id = $1\", id).",
        "Formatted SQL lets values change the query.",
        calls=frozenset({"Query", "QueryRow", "Exec", "Prepare", "QueryContext",
                         "QueryRowContext", "ExecContext", "PrepareContext", "Sprintf", "Raw",
                         "Select", "Get", "SelectContext", "GetContext", "Queryx",
                         "QueryRowx"})),
    _rule("go.command-injection", "Shell command built at run time", "warning", "security", GO, (
        _v(r"exec\.Command(Context)?\([^)]*\"(/usr)?(/bin/)?(ba|z|da)?sh\"\s*,\s*\"-\w*c\"\s*,\s*"
           r"(fmt\.Sprint|strings\.Join\(|\"[^\"]*\"\s*\+|[^\")][^)]*\+)", "error",
           "A formatted command is run through `sh -c`: input in it can run commands."),
        _v(r"exec\.Command(Context)?\([^)]*\"(/usr)?(/bin/)?(ba|z|da)?sh\"\s*,\s*\"-\w*c\"\s*,\s*"
           r"[A-Za-z_]",
           None,
           "A non-constant command is run through `sh -c`."),
    ), "Run the program directly: exec.Command(\"tool\", arg).",
        "sh -c interprets its string as a shell script.",
        calls=frozenset({"Command", "CommandContext"})),
    _rule("go.tls-disabled", "TLS verification disabled", "error", "security", GO, (
        _v(r"InsecureSkipVerify\s*[:=]\s*true", None,
           "InsecureSkipVerify accepts any certificate."),
    ), "Keep verification on; add a private CA to tls.Config.RootCAs.",
        "Without certificate checks TLS protects against nobody."),
    _rule("go.weak-hash", "MD5/SHA-1 hash", "info", "security", GO, (
        _v(r"\b(md5|sha1)\.(New|Sum)\(", None,
           "MD5/SHA-1 are broken for security use; fine for checksums."),
    ), "Use crypto/sha256, or bcrypt/argon2 for passwords.", "MD5 and SHA-1 collide."),
    _rule("java.sql-injection", "SQL built by string concatenation", "warning", "security",
          JAVA, (
        _v(r"\.(executeQuery|executeUpdate|execute|prepareStatement|addBatch|createQuery|"
           r"createNativeQuery)\(\s*\"[^\"]*\"\s*\+", "error",
           "A query built by concatenation is executed: values can change the query."),
        _v(r"\.(query|queryForList|queryForObject|queryForMap|queryForRowSet|update|batchUpdate|"
           r"createSQLQuery)\(\s*\"\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b[^\"]*\"\s*\+", "error",
           "A query built by concatenation is executed: values can change the query.",
           re.IGNORECASE),
        _v(r"String\.format\(\s*\"\s*(SELECT|INSERT|UPDATE|DELETE)\b|"
           r"\"\s*(SELECT|INSERT|UPDATE|DELETE)\b[^\"]*\"\s*\.\s*formatted\(", None,
           "A SQL query is built with String.format.", re.IGNORECASE),
    ), "Use a PreparedStatement with ? placeholders and setString/setInt.",
        "Concatenated SQL lets values change the query.",
        calls=frozenset({"executeQuery", "executeUpdate", "execute", "prepareStatement",
                         "addBatch", "createQuery", "createNativeQuery", "format", "formatted",
                         "query", "queryForList", "queryForObject", "queryForMap",
                         "queryForRowSet", "update", "batchUpdate", "createSQLQuery"})),
    _rule("java.command-injection", "Command built at run time", "warning", "security", JAVA, (
        _v(r"\.exec\(\s*(\"[^\"]*\"\s*\+|\w+\s*\+)", "error",
           "Runtime.exec gets a command built by concatenation."),
        _v(r"\.exec\(\s*new\s+String\s*\[\s*\]\s*\{\s*\"(/usr)?(/bin/)?(ba|z|da)?sh\"\s*,\s*"
           r"\"-\w*c\"\s*,\s*(\"[^\"]*\"\s*\+|\w+\s*\+)", "error",
           "A command built by concatenation is run through `sh -c`."),
        _v(r"new\s+ProcessBuilder\(\s*((List\.of|Arrays\.asList)\(\s*)?\"(/usr)?(/bin/)?(ba|z|da)?sh\""
           r"\s*,\s*\"-\w*c\"", None, "A command is run through `sh -c`."),
    ), "Pass the program and its arguments separately to ProcessBuilder.",
        "A command string built from input can run other commands.",
        calls=frozenset({"exec", "ProcessBuilder"})),
    _rule("java.unsafe-deserialization", "Unsafe deserialisation", "warning", "security",
          JAVA, (
        _v(r"new\s+ObjectInputStream\s*\(", None,
           "ObjectInputStream runs code from the classes named in the data it reads."),
        _v(r"\bnew\s+XMLDecoder\s*\(|enableDefaultTyping\s*\(", None,
           "This deserialiser instantiates types chosen by the data."),
    ), "Read data in a plain format (JSON with fixed types); add an ObjectInputFilter if not.",
        "Java deserialisation of untrusted data is remote code execution."),
    _rule("java.tls-disabled", "TLS verification disabled", "error", "security", JAVA, (
        _v(r"\bcheckServerTrusted\s*\([^)]*\)\s*(throws\s+[\w.,\s]+)?\{\s*\}", None,
           "A trust manager whose checkServerTrusted does nothing accepts any certificate."),
        _v(r"NoopHostnameVerifier|ALLOW_ALL_HOSTNAME_VERIFIER|TrustAllStrategy|"
           r"setHostnameVerifier\(\s*\(\s*\w*\s*,\s*\w*\s*\)\s*->\s*true", None,
           "Host name or certificate checking is switched off."),
    ), "Keep the default verifier; add a private CA to the trust store.",
        "Without certificate checks TLS protects against nobody."),
    _rule("java.weak-hash", "MD5/SHA-1 hash", "info", "security", JAVA, (
        _v(r"MessageDigest\.getInstance\(\s*\"(MD5|SHA-?1)\"", None,
           "MD5/SHA-1 are broken for security use; fine for checksums.", re.IGNORECASE),
    ), "Use SHA-256, or a password hash for passwords.", "MD5 and SHA-1 collide."),
    _rule("java.debug-leftover", "Console output or printStackTrace", "info", "maintainability",
          JAVA, (
        _v(r"System\.(out|err)\.print(ln|f)?\(|\.printStackTrace\(\s*\)", None,
           "Console output is usually a debugging leftover."),
    ), "Use the project's logger.", "Leftover output clutters logs.", skip_tags=_TESTS),
    _rule("shell.curl-pipe-shell", "Downloaded script piped into a shell", "warning",
          "security", SHELLISH, (
        # Up to the pipe, a word at a time: a `#` starts a comment only after a space (a
        # URL's fragment, `x#y`, is a word), and a quoted word may hold one. Each character
        # has one way through (no ReDoS on a line of quotes).
        _v(r"\b(curl|wget)\b(?:\"[^\"]*\"|'[^']*'|[^|\s#\"']#*|\s)*\|\s*(sudo(\s+-\S+)*\s+)?"
           r"(env\s+)?(/usr)?(/bin/)?((ba|z|da|k)?sh|python[0-9.]*|perl|ruby|node)\b", None,
           "A script is downloaded and run without being checked."),
        _v(r"(\b((ba|z|da|k)?sh|source)|(^|[;&|]\s*)\.)\s+<\(\s*(curl|wget)\b|"
           r"\b((ba|z|da|k)?sh\s+-\w*c|eval)\s+[\"']?(\$\(|`)\s*(curl|wget)\b", None,
           "A script is downloaded and run without being checked."),
    ), "Download to a file, verify its checksum or signature, then run it.",
        "Whoever controls the URL controls the machine."),
    _rule("shell.eval", "eval of a variable", "warning", "security", frozenset({"shell"}), (
        _v(r"^\s*eval\s+[\"']?(\$|`)", None, "`eval` runs the variable's value as shell code."),
    ), "Use arrays for commands, or `case` to dispatch.",
        "eval of data is code injection."),
    _rule("shell.world-writable", "World-writable permissions", "warning", "security",
          SHELLISH, (
        _v(r"\bchmod\s+(-\S+\s+)*([02-7]?[0-7][0-7][2367]|[ugoa]*[ao][ugoa]*[+=][rwxXst]*w"
           r"[rwxXst]*)(\s|$)|--chmod=[02-7]?[0-7][0-7][2367]\b", None,
           "chmod gives every local user write access."),
    ), "Grant the owner (and group) only: 644 for files, 755 for directories.",
        "Any local user can change a world-writable file."),
    _rule("shell.tls-disabled", "TLS verification disabled", "warning", "security", SHELLISH, (
        _v(r"\bcurl\b.*\s(-[a-zA-Z]*k[a-zA-Z]*|--insecure)(\s|$)", None,
           "curl -k accepts any certificate."),
        _v(r"\bwget\b.*--no-check-certificate", None,
           "wget --no-check-certificate accepts any certificate."),
        _v(r"GIT_SSL_NO_VERIFY|http\.sslVerify(\s+|\s*=\s*)false", None,
           "git's TLS verification is switched off."),
        _v(r"\bstrict-ssl(\s+|\s*=\s*)false\b|--trusted-host\b|--no-verify-ssl\b", None,
           "The package manager is told to skip the TLS check for a registry."),
    ), "Keep verification on; install the CA certificate instead.",
        "Without certificate checks TLS protects against nobody."),
    _rule("sql.destructive", "Destructive SQL", "warning", "bug", SQL, (
        _v(r"\bDROP\s+(TABLE|COLUMN|DATABASE|SCHEMA)\b|\bTRUNCATE\b", None,
           "This statement destroys data; check it is intended and reversible.", re.IGNORECASE),
        _v(r"\bDELETE\s+FROM\s+[\w.\"`]+\s*;", None, "DELETE without WHERE empties the table.",
           re.IGNORECASE),
    ), "Back up or migrate the data first; in migrations provide a down step.",
        "Dropped data does not come back."),
)
