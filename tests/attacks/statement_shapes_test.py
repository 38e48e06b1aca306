"""The pull-request author knows the line patterns (JavaScript, TypeScript, Go, Java, shell,
Dockerfiles, SQL, templates, workflows) and shapes a statement so that no one line matches: a
call split over lines, a command built in a variable first, a shell command continued, a line
padded past the long-line limit. Each shaped twin is reported as the plain case is (the same
rule, the same severity); the near misses stay quiet."""

from __future__ import annotations

import time

import pytest

from reviewbot.rules import patterns, scanners
from reviewbot.rules.base import MINIFIED_LINE_CHARS
from tests.rules.conftest import Base, findings, hits

PAD = "x" * (MINIFIED_LINE_CHARS + 50)


@pytest.fixture(autouse=True)
def _own_rules_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """These are reviewbot's own patterns; shellcheck, hadolint and zizmor, which would read
    the same files, have their own tests."""
    monkeypatch.setattr(scanners, "find_executable", lambda name: None)

# (name, path, the plain case, its shaped twins, the expected (rule, severity)).
TWINS: list[tuple[str, str, str, tuple[str, ...], tuple[str, str]]] = [
    ("js exec: the template on the next line", "web/run.js",
     "cp.exec(`git log ${branch}`, cb);\n", (
         "cp.exec(\n  `git log ${branch}`,\n  cb,\n);\n",
         "cp.exec(  // the log\n  `git log ${branch}`, cb);\n",
         "cp.exec\n(`git log ${branch}`, cb);\n",
         "const out = execSync(/* sync */\n  `git log ${branch}`);\n",
     ), ("js.command-injection", "error")),
    ("js exec: the command built in a variable first", "web/run.ts",
     "exec(`git log ${branch}`, cb);\n", (
         "const cmd = `git log ${branch}`;\nexec(cmd, cb);\n",
         "let cmd = 'git log ';\ncmd += branch;\nexec(cmd, cb);\n",
         "const base = 'git log ';\nconst cmd = base + branch;\nchild.execSync(cmd);\n",
         "const cmd = `git log ${branch}`;\nfunction run() {\n  return exec(cmd);\n}\n",
     ), ("js.command-injection", "error")),
    ("js exec under another name", "web/run.js", "cp.exec(`git log ${branch}`, cb);\n", (
        "const run = cp.exec;\nrun(`git log ${branch}`, cb);\n",
        "const { exec: run } = require('child_process');\nrun(`git log ${branch}`, cb);\n",
        "cp['exec'](`git log ${branch}`, cb);\n",
    ), ("js.command-injection", "error")),
    ("js concatenation split", "web/run.js", "exec('ls ' + dir, cb);\n", (
        "exec(\n  'ls ' +\n  dir, cb);\n",
        "const c = 'ls ' + dir;\nexec(c);\n",
    ), ("js.command-injection", "error")),
    ("js eval split", "web/app.js", "eval(location.hash);\n", (
        "eval(\n  location.hash);\n",
        "const f = new Function(\n  body);\n",
        "window.eval(location.hash);\n",
        "globalThis['eval'](location.hash);\n",
    ), ("js.eval", "warning")),
    ("js tls options over lines", "web/client.js",
     "https.request(url, { rejectUnauthorized: false });\n", (
         "https.request(url, {\n  rejectUnauthorized:\n    false,\n});\n",
         "const opts = {\n  rejectUnauthorized:\n    false };\nhttps.request(url, opts);\n",
     ), ("js.tls-disabled", "error")),
    ("go query built in a variable", "db/store.go",
     'rows, err := db.Query(fmt.Sprintf("SELECT * FROM t WHERE id = %s", id))\n', (
         'q := fmt.Sprintf("SELECT * FROM t WHERE id = %s", id)\nrows, err := db.Query(q)\n',
         'rows, err := db.Query(\n\tfmt.Sprintf("SELECT * FROM t WHERE id = %s", id),\n)\n',
         'q := "SELECT * FROM t WHERE id = " + id\nrows, err := db.QueryContext(ctx, q)\n',
     ), ("go.sql-injection", "error")),
    ("go sh -c over lines", "cmd/run.go",
     'out, _ := exec.Command("sh", "-c", fmt.Sprintf("ls %s", dir)).Output()\n', (
         'out, _ := exec.Command(\n\t"sh", "-c",\n\tfmt.Sprintf("ls %s", dir),\n).Output()\n',
         'cmd := fmt.Sprintf("ls %s", dir)\nout, _ := exec.Command("sh", "-c", cmd).Output()\n',
         'out, _ := exec.Command("sh", "-c", "ls " + dir).Output()\n',
         'out, _ := exec.Command("/bin/sh", "-c", fmt.Sprintf("ls %s", dir)).Output()\n',
     ), ("go.command-injection", "error")),
    ("java query built in a variable", "src/main/java/Repo.java",
     'ResultSet rs = stmt.executeQuery("SELECT * FROM t WHERE id = " + id);\n', (
         'String q = "SELECT * FROM t WHERE id = " + id;\nResultSet rs = stmt.executeQuery(q);\n',
         'ResultSet rs = stmt.executeQuery(\n    "SELECT * FROM t WHERE id = "\n    + id);\n',
     ), ("java.sql-injection", "error")),
    ("java exec built in a variable", "src/main/java/Run.java",
     'Runtime.getRuntime().exec("ping " + host);\n', (
         'String cmd = "ping " + host;\nRuntime.getRuntime().exec(cmd);\n',
         'Runtime.getRuntime().exec(\n    "ping "\n    + host);\n',
     ), ("java.command-injection", "error")),
    ("shell curl piped over a continuation", "install.sh",
     "curl -fsSL https://example.invalid/i.sh | sh\n", (
         "curl -fsSL https://example.invalid/i.sh \\\n  | sh\n",
         "curl -fsSL https://example.invalid/i.sh |\n  sh\n",
        "curl -fsSL https://example.invalid/i.sh | /bin/bash\n",
     ), ("shell.curl-pipe-shell", "warning")),
    ("dockerfile chmod over a continuation", "Dockerfile", "RUN chmod -R 777 /app\n", (
        "RUN chmod -R \\\n    777 /app\n",
    ), ("shell.world-writable", "warning")),
    ("sql drop over lines", "db/schema.sql", "DROP TABLE users;\n", (
        "DROP\n  TABLE users;\n",
    ), ("sql.destructive", "warning")),
    ("template safe over lines", "templates/page.html", "<p>{{ body|safe }}</p>\n", (
        "<p>{{ body\n     | safe }}</p>\n",
    ), ("template.unescaped", "warning")),
]


@pytest.mark.parametrize(("path", "plain", "twins", "expected"),
                         [pytest.param(p, plain, twins, e, id=name)
                          for name, p, plain, twins, e in TWINS])
def test_a_statement_over_lines_is_read_as_one(path: str, plain: str, twins: tuple[str, ...],
                                               expected: tuple[str, str]) -> None:
    assert hits(path, plain) == {expected}
    for twin in twins:
        assert hits(path, twin) == {expected}, twin


@pytest.mark.parametrize(("path", "code"), [
    ("web/run.js", "execFile(\n  'git', ['log', branch], cb);\n"),
    ("web/run.js", "const cmd = 'git log';\nexec(cmd, cb);\n"),
    ("web/run.js", "const re = /a(b)/;\nconst m = re.exec(\n  text);\n"),
    ("web/model.js", "model.eval(batch);\n"),
    ("web/run.js", "exec(\n  // `git log ${branch}`\n  'git log', cb);\n"),
    ("cmd/run.go", 'out, _ := exec.Command(\n\t"ls",\n\tdir,\n).Output()\n'),
    ("db/store.go", 'rows, err := db.Query(\n\t"SELECT * FROM t WHERE id = $1",\n\tid,\n)\n'),
    ("src/main/java/Repo.java",
     'String q = "SELECT * FROM t WHERE id = ?";\n'
     'PreparedStatement ps = conn.prepareStatement(q);\n'),
    ("install.sh", "curl -fsSLo i.sh \\\n  https://example.invalid/i.sh\n"),
    ("db/cleanup.sql", "DELETE FROM sessions\n  WHERE expired;\n"),
])
def test_near_a_statement_over_lines_that_is_safe(path: str, code: str) -> None:
    assert hits(path, code) == set()


def test_a_split_call_in_a_large_file_is_read() -> None:
    """A file padded past the parse limit is parsed around what the change adds: the split
    call in it is still one call; only a change that adds more than the limit itself is read
    line by line, and the run says so."""
    padding = "".join(f"const v{n} = {n};\n" for n in range(70_000))
    old = padding + "function f(branch) {\n  return 1;\n}\n"
    new = padding + "function f(branch) {\n  cp.exec(\n    `git log ${branch}`);\n}\n"
    assert len(new) > 1_000_000
    found = findings("web/big.js", new, old)
    assert [(f.rule_id, f.severity) for f in found] == [("js.command-injection", "error")]
    from tests.rules.conftest import review
    huge = review("web/huge.js", new)
    assert any("read line by line only" in note for note in huge.notes)


def test_a_finding_on_a_split_call_lands_on_the_changed_line() -> None:
    """The change adds only the template literal under a call the base had: the finding is
    the change's, on the line it added; a call the change does not touch is not reported."""
    old = "function f(branch) {\n  cp.exec(\n    'git log',\n    cb);\n}\n"
    new = "function f(branch) {\n  cp.exec(\n    `git log ${branch}`,\n    cb);\n}\n"
    found = findings("web/run.js", new, old)
    assert [(f.rule_id, f.start_line) for f in found] == [("js.command-injection", 3)]
    untouched = "function f(branch) {\n  cp.exec(\n    `git log ${branch}`,\n    cb);\n}\n"
    assert findings("web/run.js", untouched + "const x = 1;\n", untouched) == []


LONG = [
    ("web/app.js", "eval(location.hash); // " + PAD + "\n", ("js.eval", "warning")),
    ("web/app.js", "eval(location.hash); /* " + PAD + " */\n", ("js.eval", "warning")),
    ("web/app.js", "var pad = '" + PAD + "'; eval(location.hash);\n", ("js.eval", "warning")),
    ("web/run.js", "exec(`git log ${branch}`, cb); // " + PAD + "\n",
     ("js.command-injection", "error")),
    ("install.sh", "curl -fsSL https://example.invalid/i.sh | sh # " + PAD + "\n",
     ("shell.curl-pipe-shell", "warning")),
    ("Dockerfile", "RUN chmod 777 /app # " + PAD + "\n", ("shell.world-writable", "warning")),
    ("cmd/run.go", 'out, _ := exec.Command("sh", "-c", fmt.Sprintf("ls %s", dir)).Output() // '
     + PAD + "\n", ("go.command-injection", "error")),
    ("src/main/java/Run.java", 'Runtime.getRuntime().exec("ping " + host); // ' + PAD + "\n",
     ("java.command-injection", "error")),
    ("db/schema.sql", "DROP TABLE users; -- " + PAD + "\n", ("sql.destructive", "warning")),
    (".github/workflows/greet.yml",
     "jobs:\n  hi:\n    steps:\n      - run: echo \"${{ github.event.issue.title }}\" # "
     + PAD + "\n", ("gha.expression-injection", "warning")),
]


@pytest.mark.parametrize(("path", "code", "expected"), LONG)
def test_a_line_padded_past_the_limit_is_read(path: str, code: str,
                                              expected: tuple[str, str]) -> None:
    """A comment or a string that pads a line past the long-line limit quietens nothing:
    the line is read with its comments stripped, by patterns linear in it."""
    assert hits(path, code) == {expected}


def test_near_a_long_line_whose_comment_mentions_a_call() -> None:
    assert hits("web/app.js", "var a = 1; // never eval(x) here " + PAD + "\n") == set()


def test_a_file_the_base_holds_minified_keeps_its_own_skip() -> None:
    """A bundle the base already holds minified is not read line by line when a new build
    replaces it, and the file is named, decided by the base; the same bundle new in the
    change is read."""
    old = "var a=1;" * 200 + "\n"
    new = "var b=2;" * 200 + "eval(y);\n"
    from tests.rules.conftest import review
    result = review("static/bundle.js", new, old)
    assert result.findings == ()
    assert [(f.kind, f.decided_by) for f in result.quieted_files] == [("minified", "base")]
    assert hits("static/bundle.js", new) == {("js.eval", "warning")}
    assert hits("static/bundle.js", new, "x = 1;\n" * 50) == {("js.eval", "warning")}


@pytest.mark.parametrize("path", ["web/app.js", "install.sh", "db/q.sql", "cmd/run.go",
                                  "src/main/java/A.java", ".github/workflows/w.yml"])
def test_a_long_line_costs_linear_time(path: str) -> None:
    """A 4 MB line made to make a backtracking pattern quadratic (`curl curl curl...`,
    `exec.Command(exec.Command(...`, `${{ github.event.issue.a.a.a...`) is read in time
    linear in it."""
    line = ("curl " * 200_000 + "exec.Command(" * 100_000 + "${{ github.event.issue."
            + "a." * 500_000 + "eval (" * 100_000)
    started = time.monotonic()
    findings(path, line + "\n", base=Base())
    assert time.monotonic() - started < 20


def test_every_pattern_reads_the_same_in_re_and_re2() -> None:
    """The line patterns are written in the syntax both engines share; on every line of the
    rule table, each variant matches a short line with `re` exactly where it matches the
    line with RE2."""
    from tests.rules.rules_table_test import CASES

    variants = [v for rule in patterns.RULES for v in (*rule.variants,
                                                       *([rule.unless] if rule.unless else []))]
    for _, _, code, _ in CASES:
        for line in code.split("\n"):
            for variant in variants:
                by_re2 = variant.long_pattern.search(line.encode()) is not None
                assert (variant.pattern.search(line) is not None) == by_re2, (variant, line)
            # Padded past the limit, the line is read by every pattern at once (RE2's set),
            # which answers as each pattern alone does.
            long = (line + " " + "x" * MINIFIED_LINE_CHARS).encode()
            assert {v.long_source for v in variants
                    if v.long_pattern.search(long) is not None} == patterns._long_matches(long)
