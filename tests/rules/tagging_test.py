"""Tags, ratings and extra requests (the rule fields of seed 004)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reviewbot.code.path_kinds import path_tags
from reviewbot.schema.units import ReviewUnit
from tests.rules.conftest import review


def only_unit(path: str, new: str, old: str | None = None) -> ReviewUnit:
    [unit] = review(path, new, old).units
    return unit


@pytest.mark.parametrize(("path", "expected"), [
    ("config/settings.yaml", {"config_file"}),
    ("app/urls.py", {"routing_file"}),
    (".github/workflows/ci.yml", {"ci_workflow", "config_file"}),
    ("requirements-dev.txt", {"dependency_manifest"}),
    ("web/package.json", {"dependency_manifest", "config_file"}),
    ("app/migrations/0002_add_field.py", {"migration"}),
    ("tests/test_app.py", {"test_file"}),
    ("pkg/server_test.go", {"test_file"}),
    ("web/button.spec.ts", {"test_file"}),
    ("testing/fixtures.py", {"test_file"}),  # pre-commit's test helpers
    ("numpy/testing/utils.py", set()),  # a package's testing module, shipped to its users
    ("docs/guide.md", {"docs"}),
    ("README.rst", {"docs"}),
    ("proto/api_pb2.py", {"generated"}),
    ("vendor/github.com/x/y.go", {"vendored"}),
    ("poetry.lock", {"lockfile"}),
    ("web/package-lock.json", {"lockfile", "config_file"}),
    ("src/app.py", set()),
    ("notes.txt", set()),
])
def test_path_tags(path: str, expected: set[str]) -> None:
    assert set(path_tags(path)) == expected


def test_the_path_table_is_read_as_fnmatch_reads_it() -> None:
    """The table's globs are compiled for RE2 by hand: only `*`, which matches any run of
    characters (a `/` and a newline too), as fnmatch has it."""
    from fnmatch import fnmatch

    from reviewbot.code.path_kinds import _PATH_TAGS

    assert not any(c in glob for _, globs in _PATH_TAGS for glob in globs for c in "?[]")
    for path in ["tests/a\nb.py", "a/vendor/x\n/y.js", "docs/é.md", "x/pkg-lock.json.bak",
                 "third_party/a.c", "app/settings.py", "a/b/__fixtures__/c.json"]:
        expected = {tag for tag, globs in _PATH_TAGS if any(fnmatch(path, g) for g in globs)}
        assert set(path_tags(path)) == expected - ({"docs"} if path.endswith(".py") else set())


def test_whitespace_only_change_is_low_and_quiet() -> None:
    unit = only_unit("src/app.py", "def f():\n    return  1\n", "def f():\n    return 1\n")
    assert "only_whitespace" in unit.tags
    assert (unit.rule_context_level, unit.agent_decision.priority) == ("diff_only", "low")


def test_comment_only_change() -> None:
    unit = only_unit("src/app.py", "x = 1\n# explain x better\n", "x = 1\n# explain x\n")
    assert "only_comments" in unit.tags
    assert unit.rule_confidence == 0.9


def test_import_only_change() -> None:
    unit = only_unit("src/app.py", "import os\nimport sys\n\nx = 1\n", "import os\n\nx = 1\n")
    assert "only_imports" in unit.tags


@pytest.mark.parametrize(("path", "old", "new"), [
    ("requirements.txt", "flask==3.0.0\nrequests==2.31.0\n", "flask==3.0.3\nrequests==2.31.0\n"),
    # A name with a security word in it (SQL, JWT, a session) is a name.
    ("requirements.txt", "sqlalchemy==2.0.23\npyjwt==2.8.0\n",
     "sqlalchemy==2.0.36\npyjwt==2.9.0\n"),
    ("package.json", '{\n  "react": "^18.2.0",\n  "vite": "~5.0.0"\n}\n',
     '{\n  "react": "^18.3.1",\n  "vite": "~5.4.11"\n}\n'),
    ("go.mod", "module x\n\nrequire github.com/go-chi/chi/v5 v5.0.10\n",
     "module x\n\nrequire github.com/go-chi/chi/v5 v5.1.0\n"),
    ("pyproject.toml", '[project]\ndependencies = ["httpx>=0.26"]\n',
     '[project]\ndependencies = ["httpx>=0.27.0rc1"]\n'),
])
def test_a_dependency_bump_is_low_and_skippable(path: str, old: str, new: str) -> None:
    unit = only_unit(path, new, old)
    assert "only_versions" in unit.tags
    assert unit.agent_decision.priority == "low"


@pytest.mark.parametrize(("path", "old", "new"), [
    # Another package (a digit in its name is not a version), another source, a dependency
    # added beside a bump, an option added to a pin.
    ("requirements.txt", "boto3==1.0\n", "boto4==1.0\n"),
    ("requirements.txt", "pkg-2==1.0\n", "pkg-3==1.0\n"),
    ("package.json", '{\n  "lodash": "^4.17.20"\n}\n', '{\n  "lodash": "file:../lodash"\n}\n'),
    ("requirements.txt", "flask==3.0.0\n", "flask==3.0.3\nevil-pkg==1.0\n"),
    ("requirements.txt", "flask==3.0.0\n", "flask==3.0.3 --index-url https://x.invalid/\n"),
    ("requirements.txt", "flask==3.0.0\n", "flask==3.0.0  \n"),
    # The artifact changed under the same version, or a commit pinned: a hash is no version.
    ("requirements.txt", "flask==3.0.0 --hash=sha256:3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d\n",
     "flask==3.0.0 --hash=sha256:9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b\n"),
    ("requirements.txt", "lib @ git+https://x.invalid/lib@1a2b3c4d5e\n",
     "lib @ git+https://x.invalid/lib@9f8e7d6c5b\n"),
    # Not a manifest: a version in code is code.
    ("src/app.py", 'VERSION = "1.0"\n', 'VERSION = "1.1"\n'),
])
def test_what_is_more_than_a_bump_is_not_one(path: str, old: str, new: str) -> None:
    assert "only_versions" not in only_unit(path, new, old).tags


def test_large_change() -> None:
    new = "".join(f"v{n} = {n}\n" for n in range(250))
    assert "large_change" in only_unit("src/big.py", new).tags


def test_security_sensitive_with_reasons_and_previous_version() -> None:
    old = "def login(user, pw):\n    return check(user, pw)\n"
    new = "def login(user, pw):\n    return check(user, pw) or pw == 'admin'\n"
    unit = only_unit("src/accounts.py", new, old)
    assert "security_sensitive" in unit.tags
    assert any(note.startswith("security_sensitive: auth") for note in unit.rule_notes)
    assert unit.agent_decision.priority == "high" and unit.rule_confidence == 0.85
    assert [r.type for r in unit.rule_extra_requests] == ["previous_version"]


def test_signature_change_requests_callers_with_symbol() -> None:
    old = "def pay(amount):\n    return charge(amount)\n"
    new = "def pay(amount, currency):\n    return charge(amount, currency)\n"
    unit = only_unit("src/billing.py", new, old)
    callers = [r for r in unit.rule_extra_requests if r.type == "search_callers"]
    assert [(r.symbol, r.details) for r in callers] == [("pay", "pay")]
    assert unit.rule_extra_requests[0].type == "previous_version"


def test_config_key_change_requests_usage_search() -> None:
    old = "server:\n  timeout: 30\n"
    new = "server:\n  timeout: 60\n  retries: 3\n"
    unit = only_unit("config/app.yaml", new, old)
    keys = [r.keyword for r in unit.rule_extra_requests if r.type == "search_config_usage"]
    assert keys == ["timeout", "retries"]
    assert (unit.rule_context_level, unit.agent_decision.priority) == ("file_context", "medium")


def test_findings_raise_priority_and_request_scanner_issues() -> None:
    unit = only_unit("src/run.py", 'import os\nos.system("rm " + target)\n')
    assert unit.agent_decision.priority == "high"
    assert "scanner_issues" in [r.type for r in unit.rule_extra_requests]
    assert any(note.startswith("python.shell-injection (error) at L2") for note in unit.rule_notes)


def test_ordinary_code_is_medium_function_level() -> None:
    unit = only_unit("src/shapes.py", "def area(w, h):\n    return w * h\n")
    assert unit.tags == ()
    assert (unit.rule_context_level, unit.rule_confidence, unit.agent_decision.priority) == (
        "function", 0.5, "medium")


@pytest.mark.parametrize(("line", "name"), [
    ("def pay(amount):", "pay"),
    ("    async def fetch(self, url):", "fetch"),
    ("export async function load(id) {", "load"),
    ("const total = (items) => items.length;", "total"),
    ("func (s *Server) Handle(w http.ResponseWriter) {", "Handle"),
    ("func main() {", "main"),
    ("pub fn parse(input: &str) -> Result<()> {", "parse"),
    ("    public static List<String> names(int n) {", "names"),
    ("    return charge(amount)", None),
    ("    new Thing(a, b);", None),
    ("if (ready) {", None),
])
def test_definition_name(line: str, name: str | None) -> None:
    from reviewbot.code.definitions import definition_name
    assert definition_name(line) == name


def test_docs_only_changes() -> None:
    assert "only_docs" in only_unit("docs/guide.md", "# Guide\n\nMore words.\n",
                                    "# Guide\n\nWords.\n").tags
    old = 'def f():\n    """Do the thing.\n\n    Carefully.\n    """\n    return 1\n'
    new = old.replace("Carefully.", "Very carefully, twice.")
    unit = only_unit("src/app.py", new, old)
    assert "only_docs" in unit.tags
    assert unit.agent_decision.priority == "low"
    code_change = only_unit("src/app.py", old.replace("return 1", "return 2"), old)
    assert "only_docs" not in code_change.tags


def test_docs_about_security_are_not_security_sensitive() -> None:
    unit = only_unit("docs/auth.md", "# Login\n\nSet the password and API token in the session.\n")
    assert "security_sensitive" not in unit.tags
    assert unit.agent_decision.priority == "low"
    leaked = only_unit("docs/setup.md", 'Use `KEY = "AKIAQWERTYUIOPASDFGH"`\n')
    assert "security_sensitive" in leaked.tags


def test_security_patterns_survive_lowering() -> None:
    """They are lowered to match lowered text: an upper-case escape (\\S, \\W) would flip."""
    from reviewbot.rules.tagging import SECURITY_SOURCES
    assert not [reason for reason, source in SECURITY_SOURCES if re.search(r"\\[A-Z]", source)]


@pytest.mark.parametrize(("line", "reason"), [
    ("    query['where'] = build_filter(text)", "sql"),
    ("    return field.like(f'%{value}%')", "sql"),
    ("    return send_from_directory(folder, name)", "file paths"),
    ("    return redirect(next_url)", "redirects"),
    ("    return render_template_string(page)", "templates/html"),
    ("    sql, params = compiler.compile(self.lhs)", "sql"),
    ("    if os.path.commonpath([full, root]) != root:", "file paths"),
    ("    parts = [p for p in path.split('/') if p != '..']", "file paths"),
    ("    return clean_html(value)", "templates/html"),
    ("    cls = getattr(sys.modules[exc['exc_module']], exc['exc_type'])", "deserialisation"),
    ("    module = __import__(name)", "deserialisation"),
])
def test_security_sensitive_reasons(line: str, reason: str) -> None:
    [unit] = review("app/x.py", f"def f(x):\n{line}\n").units
    assert "security_sensitive" in unit.tags
    assert any(reason in note for note in unit.rule_notes if note.startswith("security"))


def test_security_reasons_say_what_python_re_says_of_their_patterns() -> None:
    """RE2 answers each reason; on every line of reviewbot's own code and on boundary cases
    it says what Python's `re` says of the same pattern. Its classes are ASCII: next to a
    non-ASCII letter a word still starts (`éauth` is about auth)."""
    from reviewbot.rules.tagging import _SECURITY_PATTERNS, SECURITY_SOURCES

    package = Path(__file__).parents[2] / "reviewbot"
    lines = [line.lower() for path in sorted(package.rglob("*.py"))
             for line in path.read_text(encoding="utf-8").splitlines()]
    lines += ["xauth login", "controller.role", "_session", "a.execute(", ".execute(",
              "x'where'", "('where')", "select a from b; select x from y", "select\nx from"]
    plain = {name: re.compile(source.lower()) for name, source in SECURITY_SOURCES}
    for name, pattern in _SECURITY_PATTERNS:
        for line in lines:
            assert bool(pattern.search(line.encode())) == bool(plain[name].search(line)), (
                name, line)
    auth = dict(_SECURITY_PATTERNS)["auth"]
    assert auth.search("éauth".encode()) and not plain["auth"].search("éauth")


@pytest.mark.parametrize("path", ["app/staticfiles.py", "web/static.py", "svc/uploads.py",
                                  "utils/archive.py", "lib/sanitizer.py",
                                  "orm/db/backends/postgresql/operations.py",
                                  "lxml/html/clean.py"])
def test_modules_that_serve_or_unpack_files_are_security_sensitive(path: str) -> None:
    [unit] = review(path, "def f(x):\n    return x + 1\n").units
    assert "security_sensitive" in unit.tags


def test_static_assets_are_not_security_sensitive_by_their_folder() -> None:
    [unit] = review("app/static/js/menu.js", "function f(x) {\n  return x + 1;\n}\n").units
    assert "security_sensitive" not in unit.tags


def _long_function(name: str, result: str) -> str:
    body = "".join(f"        step_{n} = step_{n - 1} + 1\n" for n in range(1, 30))
    return f"class Service:\n    def {name}(self, step_0):\n{body}        return {result}\n"


def test_a_change_deep_inside_a_function_is_about_that_function() -> None:
    """git's hunk header names the class, and the `def` line is far above the hunk: the
    definition around the change still says what it is about."""
    old = _long_function("authenticate", "step_29")
    [unit] = review("app/service.py", _long_function("authenticate", "step_29 + 1"), old).units
    assert "security_sensitive" in unit.tags
    assert any("auth" in note for note in unit.rule_notes if note.startswith("security"))

    plain = _long_function("arrange", "step_29")
    [unit] = review("app/service.py", _long_function("arrange", "step_29 + 1"), plain).units
    assert "security_sensitive" not in unit.tags


@pytest.mark.parametrize(("path", "text", "docs"), [
    ("data/prices.csv", "sku,price\nA1,10\n", False),
    (".gitmodules", '[submodule "lib"]\n\tpath = lib\n\turl = ../lib.git\n', False),
    ("tools/run.xyz", "do the thing\n", False),
    ("NOTES.txt", "Remember the release.\n", True),
    ("docs/api.html", "<p>words</p>\n", True),
])
def test_only_prose_is_only_docs(path: str, text: str, docs: bool) -> None:
    assert ("only_docs" in only_unit(path, text).tags) is docs


@pytest.mark.parametrize(("path", "text", "sensitive"), [
    # A Vim plugin's function that takes a cursor position runs no SQL.
    ("plugin/black.vim", "function BlackComplete(ArgLead, CmdLine, CursorPos)\n"
                         "  return ['target_version=py315']\nendfunction\n", False),
    ("app/db.py", "def rows(conn):\n    cursor = conn.cursor()\n    return cursor\n", True),
    # The tokenizer's constants are not a secret token; a token in a header is.
    ("src/black/comments.py", "def f(leaf):\n    return leaf.type == token.ASYNC\n", False),
    ("app/client.py", "def f(request):\n    token = request.headers['X-Token']\n", True),
    ("app/client.py", "def f(token):\n    return token.strip()\n", True),
])
def test_security_words_name_what_the_code_does(path: str, text: str,
                                                sensitive: bool) -> None:
    """A word inside another (`CursorPos`) or a tokenizer's constant (`token.ASYNC`) does not
    make code security sensitive; a database cursor and a token's handling still do."""
    [unit] = review(path, text).units
    assert ("security_sensitive" in unit.tags) is sensitive, unit.rule_notes


@pytest.mark.parametrize(("path", "sensitive"), [
    ("src/blib2to3/pgen2/tokenize.py", False), ("app/tokenizer.py", False),
    ("app/tokens.py", True), ("api/token_auth.py", True), ("net/tls.py", True),
])
def test_a_tokenizer_is_not_security_sensitive_by_its_name(path: str, sensitive: bool) -> None:
    """`tokenize` holds the letters of "token": a tokenizer is not about secrets."""
    [unit] = review(path, "def f(x):\n    return x + 1\n").units
    assert ("security_sensitive" in unit.tags) is sensitive
