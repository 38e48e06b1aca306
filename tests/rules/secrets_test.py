"""The secrets rule's messages: the type of a secret, never its characters."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from reviewbot.rules.secret_detectors import DOCUMENTED_EXAMPLES
from reviewbot.rules.secret_lines import candidate_lines
from tests.rules.conftest import Base, findings

# Shaped like AWS's documented example secret key, and not it: a real key, for the rule.
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEQ"


def test_aws_secret_key_is_not_called_an_access_key() -> None:
    [finding] = findings("app/aws.py", f'aws_secret_access_key = "{AWS_SECRET}"\n')
    assert finding.title == "Hard-coded secret: AWS secret access key"
    assert "wJal" not in finding.message and AWS_SECRET not in finding.message


def test_preview_shows_only_a_public_prefix() -> None:
    [token] = findings("ci.sh", "export GH=ghp_abcdefghijklmnopqrstuvwxyz0123456789\n")
    assert "(gh********)" in token.message
    [keyword] = findings("app/db.py", 'password = "hunter2-correct-horse"\n')
    assert "(********)" in keyword.message and "hunt" not in keyword.message


def test_unquoted_token_is_reported_whole_once() -> None:
    found = findings("deploy/values.yaml", "token: ghp_abcdefghijklmnopqrstuvwxyz0123456789\n")
    assert [(f.title, f.severity) for f in found] == [("Hard-coded secret: GitHub token",
                                                      "error")]


def test_candidate_lines_are_the_lines_a_detector_could_report() -> None:
    lines = {
        1: 'DIRS = ("user_data_dir", "pip._internal.utils")',  # names, not base64 secrets
        2: 'SECRET = "Zm9vYmFyYmF6cXV4cXV1eHh5ejEyMzQ1"',  # base64, 32 characters
        3: 'DIGEST = "deadbeef0123"',  # hex, 12 characters
        4: 'SHORT = "c0ffee"',
        # detect-secrets pairs quotes from the left: the long string is the second pair.
        5: "x = 'ab' + 'Zm9vYmFyYmF6cXV4cXV1eHh5ejEyMzQ1'",
        6: "İ" * 40,  # `lower()` makes each of these two characters
        7: 'pwd = "x"',
        8: "token = value",
        9: "x" * 2000,  # minified: always scanned for the well-known formats
        10: "DSN = 'postgres://admin:s3cr3tP4ss@db/app'",
    }
    assert candidate_lines("app/settings.py", lines) == [2, 3, 5, 7, 9, 10]
    # In a config file values go unquoted: the word alone makes a candidate.
    assert candidate_lines("deploy/.env", lines) == [2, 3, 5, 7, 8, 9, 10]


def test_a_candidate_line_with_a_secret_is_found_between_others() -> None:
    source = "".join(f"name_{n} = 'label_number_{n}'\n" for n in range(50))
    source += 'api_key = "3f786850e387550fdab836ed7e6dc881de23001b"\n'
    [finding] = findings("app/keys.py", source)
    assert finding.start_line == 51


# One line for each detector that reports only what its own patterns match.
DETECTOR_SAMPLES = (
    'ARTIFACTORY = "AKCp5abcdefghijklmnopqrstuvwx"',
    'aws_key = "AKIAQWERTYUIOPASDFGHZ"',
    "conn = 'AccountKey=" + "a" * 86 + "=='",
    'url = "https://admin:hunter2hunter2@example.com/x"',
    'cloudant_password = "' + "a1b2c3d4" * 8 + '"',
    'DISCORD = "MTAx' + "a" * 20 + '.abcdef.' + "b" * 27 + '"',
    'token = "ghp_' + "a1B2c3D4e5" * 3 + 'abcdef"',
    'gitlab = "glpat-' + "x1" * 12 + '"',
    'ibm_cloud_api_key = "' + "a1B2c3D4e5" * 4 + 'abcd"',
    'ibm_cos_secret_access_key = "' + "ab12" * 12 + '"',
    'MAILCHIMP = "' + "a1b2c3d4" * 4 + '-us12"',
    "//registry.npmjs.org/:_authToken=npm_" + "a1B2" * 9,
    'key = "sk-' + "a1B2" * 5 + "T3BlbkFJ" + "c3D4" * 5 + '"',
    "-----BEGIN RSA PRIVATE KEY-----",
    'PYPI = "pypi-AgEIcHlwaS5vcmc' + "a1B2" * 18 + '"',
    'SENDGRID = "SG.' + "a1B2c3D4e5f6g7h8i9j0k1"[:22] + "." + "x1" * 21 + 'y"',
    'slack = "xoxb-123456789012-123456789012-abcdefghijklmnopqrstuvwx"',
    'softlayer_api_key = "' + "a1b2c3d4" * 8 + '"',
    'square = "sq0csp-' + "a1B2c3" * 7 + 'a"',
    'stripe = "sk_live_' + "a1B2c3" * 4 + '"',
    'TELEGRAM = "123456789:' + "a1B2c3D4e5" * 3 + 'abcde"',
    'twilio = "AC' + "a1b2c3d4" * 4 + '"',
)


def test_detectors_skipped_for_a_file_would_have_reported_nothing_on_it() -> None:
    """The gate runs a detector only on files where one of its patterns matches: on each
    line it says what running every detector says, and each sample is reported by some
    detector (the samples are real matches, not lines every gate lets through)."""
    from reviewbot.rules.secret_detectors import plugins_for, scan_line

    for sample in DETECTOR_SAMPLES:
        lines = ["import os", sample, "x = compute(key='value')"]
        plugins = plugins_for("\n".join(lines))
        assert len(plugins) < 26
        for line in lines:
            assert scan_line("app/x.py", line, candidate=True, plugins=plugins) == scan_line(
                "app/x.py", line, candidate=True), line
    reported = [s for s in DETECTOR_SAMPLES if scan_line("app/x.py", s, candidate=True)]
    assert len(reported) >= len(DETECTOR_SAMPLES) - 4, set(DETECTOR_SAMPLES) - set(reported)
    # Always: the entropy, keyword and JWT detectors, and those with line-anchored patterns.
    assert len(plugins_for("import os\nx = 1")) <= 10


def test_a_change_with_no_line_to_look_at_does_not_load_detect_secrets() -> None:
    """Most commits have no candidate line: they do not pay for detect-secrets' import."""
    probe = ("import sys\n"
             "from tests.rules.conftest import findings\n"
             "assert findings('app/x.py', 'def f(a):\\n    return a + 1\\n') == []\n"
             "print(sorted(m for m in sys.modules if m.startswith('detect_secrets')))\n"
             "findings('app/y.py', 'password = \"hunter2hunter2\"\\n')\n"
             "print('detect_secrets.plugins.keyword' in sys.modules)\n")
    root = Path(__file__).parents[2]
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True, cwd=root)
    assert result.stdout.splitlines() == ["[]", "True"]


def test_the_keyword_detector_reports_only_on_lines_with_its_words() -> None:
    """Its lines are picked by its own `DENYLIST` words: that holds while every pattern of
    it (for every file type) contains them. A detect-secrets release that changes this
    fails here, not silently."""
    from reviewbot.rules.secret_detectors import _keyword_words, _plugins

    _plugins()
    from detect_secrets.plugins import keyword

    tables = (keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
              *keyword.REGEX_BY_FILETYPE.values())
    patterns = [pattern.pattern for table in tables for pattern in table]
    assert len(patterns) >= 5
    assert all(keyword.DENYLIST_REGEX in p for p in patterns)
    assert _keyword_words().search('DB_PASSWORD: "hunter2hunter2"')
    [finding] = findings("app/db.py", 'db_password = "hunter2-correct-horse"\n')
    assert finding.title.endswith("Secret Keyword")


def test_a_docs_page_cannot_spell_a_known_token_away() -> None:
    """A value that names itself is an illustration only when a name beside it is all that
    found it, and it is words: on a documentation page the self-named config value is
    quiet, while a known token format, a private key and a random key that spell "EXAMPLE"
    are reported as before (one level quieter)."""
    page = ("aws_access_key_id = AKIAZOSFODNN7EXAMPLE\n"
            f"aws_secret_access_key = {AWS_SECRET}\n"
            "token: ghp_EXAMPLEabcdefghijklmnopqrstuvwxyz0123\n"
            "-----BEGIN RSA PRIVATE KEY----- example\n"
            "MIIEowIBAAKCAQEAx7Yl3QkZs9mFqkTnB2dRzQ2hhbmdlTWVQ\n"
            'app.config.SECRET = "KEEP_IT_SECRET_KEEP_IT_SAFE"\n')
    found = {(f.start_line, f.title, f.severity) for f in findings("guide/setup.md", page)}
    assert found == {(1, "Hard-coded secret: AWS access key ID", "warning"),
                     (2, "Hard-coded secret: credential in a config file", "info"),
                     (3, "Hard-coded secret: GitHub token", "warning"),
                     (4, "Hard-coded secret: Private Key", "warning")}


@pytest.mark.parametrize(("path", "line", "expected"), [
    # A known token format is a key in a test file as anywhere: error, and the commit stops.
    ("tests/test_k.py", 'KEY = "AKIAZ7Q2MXC5LFPN3WKB"\n',
     {("Hard-coded secret: AWS access key ID", "error")}),
    ("tests/conftest.py", "TOKEN = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789'\n",
     {("Hard-coded secret: GitHub token", "error")}),
    # What a keyword detector finds cannot be told from a fixture: one level lower there.
    ("tests/test_db.py", 'password = "hunter2-correct-horse"\n',
     {("Hard-coded secret: Secret Keyword", "info")}),
    ("app/db.py", 'password = "hunter2-correct-horse"\n',
     {("Hard-coded secret: Secret Keyword", "warning")}),
    # Documentation shows tokens to explain them: a known format is a warning there.
    ("docs/setup.md", "Set `KEY=AKIAZ7Q2MXC5LFPN3WKB` first.\n",
     {("Hard-coded secret: AWS access key ID", "warning")}),
])
def test_a_known_token_format_in_test_code_keeps_its_level(
        path: str, line: str, expected: set[tuple[str, str]]) -> None:
    """docs/RULES.md: every rule is one level lower in test code, except a known token
    format (a real key in a test file is still a leaked key)."""
    found = findings(path, line, base=Base(everything=True))
    assert {(f.title, f.severity) for f in found} == expected


@pytest.mark.parametrize("path", ["app/aws.py", "tests/test_aws.py", "docs/aws.md",
                                  "deploy/.env"])
@pytest.mark.parametrize("value", sorted(DOCUMENTED_EXAMPLES))
def test_a_documented_example_is_no_secret(path: str, value: str) -> None:
    """The values a service publishes as examples in its own documentation, exactly, are
    nobody's credential: pasting one from a tutorial does not stop a commit."""
    line = (f'KEY = "{value}"\n' if path.endswith(".py")
            else f"aws_secret_access_key={value}\n")
    assert findings(path, line, base=Base(everything=True)) == []


@pytest.mark.parametrize("value", ["AKIAZOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLF",
                                   "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEQ",
                                   "sk_test_4eC39HqLyjWDarjtT1zdp7dX"])
def test_a_value_near_an_example_is_reported(value: str) -> None:
    """Only the published values themselves: one that merely contains EXAMPLE, or differs
    from an example by a character, is reported like any other."""
    [finding] = findings("app/keys.py", f'aws_secret_access_key = "{value}"\n')
    assert finding.severity in ("error", "warning")


def test_loading_the_detectors_leaves_detect_secrets_whole_for_others() -> None:
    """The plugins load without the package's `__init__` (its scanner and
    `multiprocessing`); afterwards `import detect_secrets` is the real package."""
    probe = ("import sys\n"
             "from reviewbot.rules.secret_detectors import _plugins\n"
             "_plugins()\n"
             "print(len(_plugins()), 'multiprocessing' in sys.modules)\n"
             "import detect_secrets\n"
             "from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class\n"
             "print(detect_secrets.SecretsCollection.__name__,\n"
             "      len(get_mapping_from_secret_type_to_class()))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["26", "False", "SecretsCollection", "27"]
