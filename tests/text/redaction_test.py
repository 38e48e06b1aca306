"""The one redaction pass: secret shapes it finds itself, and code it leaves alone."""

from __future__ import annotations

import json

import pytest

from reviewbot.text.private_keys import block_lines
from reviewbot.text.redaction import TOKEN_FORMATS, Redactor, find_secrets, preview

PAT = "github_pat_11ABCDEFG0123456789_" + "a" * 59
SAMPLES = {
    "GitHub fine-grained token": PAT,
    "GitHub token": "ghp_" + "A1" * 18,
    "OpenAI API key": "sk-proj-" + "x" * 30,
    "Anthropic API key": "sk-ant-" + "y" * 30,
    "AWS access key ID": "AKIAZ3MSJV4WWNKWW5FG",
    "Google API key": "AIza" + "B" * 35,
    "GitLab token": "glpat-" + "c" * 20,
    "Slack token": "xoxb-1234567890-abcdef",
    "Stripe key": "sk_live_" + "d" * 24,
    "npm token": "npm_" + "e" * 36,
    "PyPI token": "pypi-AgEIcHlwaS5vcmc" + "f" * 60,
    "Hugging Face token": "hf_" + "g" * 34,
    "JSON Web Token": "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4fw",
}


def test_every_format_has_a_sample_and_is_found() -> None:
    assert {t.kind for t in TOKEN_FORMATS} == set(SAMPLES)
    redactor = Redactor()
    for kind, token in SAMPLES.items():
        assert redactor.text(f"value = {token} # x") == "value = [REDACTED] # x", kind


@pytest.mark.parametrize(("text", "expected"), [
    ('password = "hunter2hunter2"', 'password = "[REDACTED]"'),
    ("DB_PASSWORD=hunter2hunter2", "DB_PASSWORD=[REDACTED]"),
    ("export API_TOKEN=abcd1234efgh", "export API_TOKEN=[REDACTED]"),
    ('"client_secret": "s3cr3t-v4lue"', '"client_secret": "[REDACTED]"'),
    ("postgres://admin:Sup3rS3cret@db:5432/app", "postgres://admin:[REDACTED]@db:5432/app"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----\nok",
     "[REDACTED]\nok"),
    ("-----BEGIN PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc=", "[REDACTED]"),  # cut off
    # Cut off, and text that is no key material after it: the text stays.
    ("-----BEGIN PRIVATE KEY-----\nMIIEow\n\nsee the notes | here",
     "[REDACTED]\nsee the notes | here"),
])
def test_shapes_are_redacted(text: str, expected: str) -> None:
    assert Redactor().text(text) == expected


@pytest.mark.parametrize("code", [
    "password = settings.db_password",
    "token = get_token(user)",
    "api_key = os.environ['API_KEY']",
    "secret: ${VAULT_SECRET}",
    "passwords = []",
    "x = compute(value)",
])
def test_references_are_not_secrets(code: str) -> None:
    assert Redactor().text(code) == code


def test_bare_values_are_literal_only_where_the_file_says_so() -> None:
    redactor = Redactor()
    assert redactor.for_path("token = token_value", "app/auth.py") == "token = token_value"
    assert redactor.for_path("token = token_value", ".env") == "token = [REDACTED]"


def test_known_values_and_key_blocks() -> None:
    redactor = Redactor(["zq-internal-value-991"])
    assert redactor.text("x zq-internal-value-991 y") == "x [REDACTED] y"
    redactor.add(["another-known-one"])
    assert "another" not in redactor.text("another-known-one")
    lines = ["-----BEGIN OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAA",
             "-----END OPENSSH PRIVATE KEY-----", "unrelated line"]
    assert block_lines(lines) == set(lines[:3])


def test_previews_show_only_public_prefixes() -> None:
    assert preview(SAMPLES["GitHub token"]) == "gh********"
    assert preview("hunter2hunter2") == "********"


def test_long_text_finds_the_same_tokens_as_short_text() -> None:
    """Past LONG_TEXT characters the prefixes are found with str.find, not the regex."""
    from reviewbot.text.redaction import LONG_TEXT, could_hold_secret, token_matches

    token = "ghp_" + "a1B2c3D4e5" * 3 + "abcdef"
    filler = "var a=function(b){return b+1};" * (LONG_TEXT // 10)
    text = f"{filler}x='{token}';u='https://bob:hunter22@db.example.invalid/';{filler}"
    assert len(text) > LONG_TEXT
    assert [m.group(0) for m, _ in token_matches(text)] == [m.group(0) for m, _ in
                                                            token_matches(f"x='{token}'")]
    assert could_hold_secret(text) and could_hold_secret(filler + "://bob:pw@host/")
    assert not could_hold_secret(filler)
    assert "[REDACTED]" in Redactor().text(text) and token not in Redactor().text(text)


def test_every_format_is_found_in_long_text() -> None:
    from reviewbot.text.redaction import LONG_TEXT, token_matches

    filler = "var a=function(b){return b+1};" * (LONG_TEXT // 10)
    for kind, token in SAMPLES.items():
        found = token_matches(f"{filler} '{token}' {filler}")
        assert [(t.kind, m.group(0)) for m, t in found] == [(kind, token)], kind


@pytest.mark.parametrize("text", [
    *SAMPLES.values(),
    'password = "hunter2hunter2"',
    'postgres://ad"min:Sup3r\\S3cret@db',
    "postgres://admin:Sup3r\x01S3cret@db",
    "-----BEGIN PRIVATE KEY-----\nMIIEow",
    'known "quoted\\value',
    "x = 1\nknown \u00e9t\u00e9 value",
])
def test_a_json_text_that_needs_nothing_holds_nothing(text: str) -> None:
    """Artifacts skip the string-by-string pass when the whole JSON cannot change: that
    check must say "could change" for every string the pass would redact."""
    redactor = Redactor(['"quoted\\value', "\u00e9t\u00e9 value"])
    assert redactor.text(text) != text
    serialized = json.dumps({"lines": ["x = 1", text]}, ensure_ascii=False)
    assert redactor.could_change_json(serialized)
    assert not redactor.could_change_json(json.dumps({"lines": ["x = 1", "def f(a):"]}))


ASSIGNMENTS = [
    'password = "hunter2hunter2"', "DB_PASSWORD=hunter2hunter2",
    "export API_TOKEN=abcd1234efgh", '"client_secret": "s3cr3t-v4lue"',
    "postgres://admin:Sup3rS3cret@db:5432/app", "{apiKey:'k3y-value-0042'}",
    "x;secret_token=abcd1234efgh", "token = settings.token", "passwords = []",
]


@pytest.mark.parametrize("literal", [True, False])
@pytest.mark.parametrize("text", ASSIGNMENTS)
def test_long_text_finds_the_same_credentials_as_short_text(text: str, literal: bool) -> None:
    """On long text (a minified line) the assignment patterns run only where a credential's
    word or `://` is: the same values come out, and no long run of name characters is
    scanned from every position."""
    from reviewbot.text.redaction import LONG_TEXT, find_secrets

    filler = " var " + "a_b." * (LONG_TEXT // 4) + "=1;"
    long = f"{filler}{text}\n{filler}"
    assert len(long) > LONG_TEXT
    short = {text[f.start:f.end] for f in find_secrets(text, literal)}
    found = {long[f.start:f.end] for f in find_secrets(long, literal)}
    assert found == short


def test_a_name_in_markdown_code_then_prose_is_no_secret() -> None:
    """"`DB_PASSWORD=` in `.env`" puts " in " between two backticks: prose, not a value. As
    a value it was redacted from every message of the run ("stay[REDACTED]git history")."""
    from tests.rules.conftest import findings

    line = "A corpus (a private key, `DB_PASSWORD=` in `.env`, an AWS key) is checked.\n"
    assert find_secrets(line) == []
    assert findings("docs/bench.md", line) == []
    assert find_secrets('password = "hunter22"')  # a quoted value still is one


def test_many_texts_are_redacted_as_each_would_be_alone() -> None:
    """`texts` searches them joined; offsets of the signs are UTF-8 bytes, which a line of
    non-ASCII text ahead of a secret moves away from its characters."""
    redactor = Redactor(["known-value-1234"])
    texts = ["é" * 300, "ordinary code", "token = 'Zm9vYmFyYmF6cXV4cXV1eHh5'",
             "ü" * 50 + "\nmore", "x = 'known-value-1234'", "",
             "export GH=ghp_abcdefghijklmnopqrstuvwxyz0123456789", "plain"]
    assert redactor.texts(texts) == [redactor.text(text) for text in texts]
    assert redactor.texts(texts)[2] != texts[2] and redactor.texts(texts)[6] != texts[6]
    assert "known-value-1234" not in redactor.texts(texts)[4]
    ascii_only = [text for text in texts if text.isascii()]
    assert Redactor().texts(ascii_only) == [Redactor().text(text) for text in ascii_only]


def test_long_text_with_non_ascii_letters_redacts_the_credential_itself() -> None:
    """On long text (a minified line) credential words are found by byte offset: the
    characters before them (each two bytes here) must not shift what is masked."""
    text = "é" * 5000 + ' var password = "hunter2hunter2"; ' + "ü" * 100
    assert Redactor().text(text) == "é" * 5000 + ' var password = "[REDACTED]"; ' + "ü" * 100


def test_long_text_with_non_ascii_letters_masks_a_token_exactly() -> None:
    token = "ghp_" + "a1B2c3D4e5" * 4
    text = "ü" * 5000 + f" const t = {token}; " + "é" * 10
    assert Redactor().text(text) == "ü" * 5000 + " const t = [REDACTED]; " + "é" * 10


def test_a_known_value_with_a_newline_is_masked_where_it_is_whole() -> None:
    """A known value that runs on over a newline (a key in an environment variable) can
    match across two texts joined for the search, hiding the second text's own copy of it:
    every text a match touches is looked at."""
    value = "hunter-part\nhunter-part"
    redactor = Redactor([value])
    texts = ["x hunter-part", value]
    assert redactor.texts(texts) == [redactor.text(text) for text in texts]
    assert redactor.texts(texts)[1] == "[REDACTED]"


@pytest.mark.parametrize("key", [
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc=\n-----END RSA PRIVATE KEY-----",
    "------BEGIN PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc=",
    "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nMIIEowIBAAKCAQEA\nabc=",
    "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none",
])
@pytest.mark.parametrize("before", ["x", "é—ü"])
def test_a_key_in_long_text_is_found_where_short_text_finds_it(key: str, before: str) -> None:
    """Past LONG_TEXT characters the key pattern is tried only where an armour starts: the
    same key, after ASCII or wider text, and a block's lines, as in short text."""
    from reviewbot.text.redaction import LONG_TEXT

    filler = f"var {before}=BEGIN-1/2;" * (LONG_TEXT // 10)
    text = f"{filler}\n{key}\nok"
    assert len(text) > LONG_TEXT
    assert Redactor().text(text) == Redactor().text(f"{filler[:40]}\n{key}\nok").replace(
        filler[:40], filler)
    assert "MIIEow" not in Redactor().text(text) and "ssh-ed25519" not in Redactor().text(text)
    lines = text.split("\n")
    assert block_lines(lines) == block_lines(["x", *lines[1:]]) != set()


@pytest.mark.parametrize("count", [2, 40])
def test_known_values_in_long_text_are_masked_everywhere(count: int) -> None:
    """Long text has each known value replaced in turn (up to 16 of them) or the
    alternation searched: either way every occurrence goes, the longer value first."""
    from reviewbot.text.redaction import LONG_TEXT

    values = ["zq-internal-value-991", "zq-internal-value-991-and-more",
              *(f"other-known-value-{n:03d}" for n in range(count - 2))]
    filler = "var a=1/2;" * (LONG_TEXT // 10)
    text = f"{filler}x={values[0]};y={values[1]};z='{values[-1]}';{filler}{values[0]}"
    redacted = Redactor(values).text(text)
    assert not any(value in redacted for value in values)
    assert redacted.count("[REDACTED]") == 4 and "-and-more" not in redacted
    assert redacted.startswith(filler) and redacted.endswith("[REDACTED]")


@pytest.mark.parametrize("body", [
    # Blocks with and without their footers, armours of each kind, an armour cut short
    # before a later block (its match runs to that block's footer, as the pattern reads it).
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc=\n-----END RSA PRIVATE KEY-----\nx = 1\n",
    "-----BEGIN PRIVATE KEY-----\nMIIEow\n\nsee the notes\n",
    "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nAAAA\n---- END SSH2 ENCRYPTED PRIVATE KEY ----\n",
    "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\n",
    "-----BEGIN EC PRIVATE KEY-----\nAAAA\nok\n-----BEGIN PRIVATE KEY-----\nBBBB\n"
    "-----END PRIVATE KEY-----\n",
    "-----END OF FILE-----\n-----BEGIN PRIVATE KEY-----\nCCCC\n-----END PRIVATE KEY---\n",
])
def test_a_long_texts_keys_are_the_patterns_own(body: str) -> None:
    """On long text a key is matched from its armour, to the first footer after it or, with
    none, as a block cut short: the spans the whole pattern gives, without its lazy run to
    the text's end from every armour."""
    from reviewbot.text.private_keys import PRIVATE_KEY, private_keys
    from reviewbot.text.redaction import LONG_TEXT

    text = "var a=1/2;\n" * (LONG_TEXT // 10) + body * 3
    assert [m.span() for m in private_keys(text)] == [m.span()
                                                      for m in PRIVATE_KEY.finditer(text)]
