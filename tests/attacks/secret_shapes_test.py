"""The pull-request author knows the secrets rule and shapes a secret so that a detector
reading one line misses it: a private key in another layout a key reader accepts, a key split
into literals the program joins, a random value wrapped like a template's reference. Each
shaped twin is reported at the plain case's severity; the near misses stay quiet."""

from __future__ import annotations

import pytest

from reviewbot.text.redaction import Redactor
from tests.rules.conftest import hits

SECRET = {("secrets.hardcoded", "error")}
KEYWORD = {("secrets.hardcoded", "warning")}
ENTROPY = {("secrets.hardcoded", "info")}

# An ed25519 key as openssl writes it, then as openssl still reads it.
KEY_BODY = "MC4CAQAwBQYDK2VwBCIEIL1l9RQGMP6iQMb4tAR6qkiqjn2fSzGL6orFrPwzEWAs"
BEGIN, END = "-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----"


def _wrapped(width: int) -> str:
    return "\n".join(KEY_BODY[at:at + width] for at in range(0, len(KEY_BODY), width))


KEYS = {
    "as openssl writes it": f"{BEGIN}\n{KEY_BODY}\n{END}\n",
    "16 characters a line": f"{BEGIN}\n{_wrapped(16)}\n{END}\n",
    "8 characters a line": f"{BEGIN}\n{_wrapped(8)}\n{END}\n",
    "a blank line after the armour": f"{BEGIN}\n\n{KEY_BODY}\n{END}\n",
    "a line of spaces after the armour, 20 a line": f"{BEGIN}\n   \n{_wrapped(20)}\n{END}\n",
    "76 characters a line": f"{BEGIN}\n{KEY_BODY}{KEY_BODY}\n{KEY_BODY[:12]}\n{END}\n",
}


@pytest.mark.parametrize("layout", list(KEYS))
def test_a_private_key_in_any_layout_openssl_reads(layout: str) -> None:
    """openssl reads a key in any line width and with a blank line after its armour: each
    is reported as the key it is, and redaction masks the whole block."""
    key = KEYS[layout]
    assert hits("deploy/id.pem", key) == SECRET
    assert KEY_BODY[:16] not in Redactor().text(key)


ESCAPED = _wrapped(16).replace("\n", "\\n")


@pytest.mark.parametrize(("path", "code"), [
    ("app/keys.py", f'KEY = "{BEGIN}\\n{ESCAPED}\\n{END}"\n'),
    # Whole lines of material joined by a name or a list: the key is the error it is, not
    # the info its material's entropy would be alone (one finding a line, the most severe).
    ("web/keys.js", f"const KEY = '{BEGIN}' + NL + '{KEY_BODY}' + NL +\n  '{END}';\n"),
    ("app/keys.py", f'KEY = "\\n".join(["{BEGIN}", "{KEY_BODY}", "{END}"])\n'),
    ("web/keys.js", f"const KEY = '{BEGIN}\\n' +\n" + "".join(
        f"  '{line}\\n' +\n" for line in _wrapped(16).split("\n")) + f"  '{END}';\n"),
])
def test_a_private_key_held_in_strings(path: str, code: str) -> None:
    """A key in one string with `\\n` escapes, or in one string a line joined by `+`, at
    16 characters a line, is a key; redaction masks its material."""
    assert hits(path, code) == SECRET
    assert KEY_BODY[:16] not in Redactor().text(code)


@pytest.mark.parametrize("code", [
    f'HEADER = "{BEGIN}"\nFOOTER = "{END}"\n',
    f'ARMOURS = [\n    "{BEGIN}",\n    "-----BEGIN RSA PRIVATE KEY-----",\n]\n',
    f'HEADER = "{BEGIN}"  # the first line of every PKCS8 key we accept here\n',
    f"# a key starts with {BEGIN}\n\nx = 1\n",
])
def test_near_an_armour_without_material_is_no_key(code: str) -> None:
    assert hits("app/pem.py", code) == set()


AWS = "AKIAQWERTYUIOPASDFGH"


@pytest.mark.parametrize(("path", "code"), [
    ("app/settings.py", f'KEY = "{AWS[:4]}" "{AWS[4:]}"\n'),
    ("app/settings.py", f'KEY = ("{AWS[:8]}"\n       "{AWS[8:]}")\n'),
    ("app/settings.py", f'KEY = "{AWS[:8]}" \\\n    "{AWS[8:]}"\n'),
    ("app/settings.py", f'KEY = r"{AWS[:4]}" + "{AWS[4:]}"\n'),
    ("web/config.js", f"const KEY = '{AWS[:8]}' +\n  '{AWS[8:]}';\n"),
    ("src/main/java/Keys.java", f'String key = "{AWS[:10]}" + "{AWS[10:]}";\n'),
    ("app/keys.php", f"$key = '{AWS[:6]}' . '{AWS[6:]}';\n"),
])
def test_a_key_split_into_literals_the_program_joins(path: str, code: str) -> None:
    """Literals side by side, or joined by `+`, `.`, on one line or across lines, are one
    value to the program: a token format in the value is the error it is whole."""
    assert hits(path, f'KEY = "{AWS}"\n') == SECRET
    assert hits(path, code) == SECRET


def test_a_password_split_into_literals_keeps_its_keyword() -> None:
    assert hits("app/db.py", 'password = "hunter2-correct-horse"\n') == KEYWORD
    assert hits("app/db.py", 'password = "hunter2" "-correct-horse"\n') == KEYWORD


def test_near_joined_messages_are_no_secret() -> None:
    code = ('MESSAGE = ("the build failed: "\n           "see the log for details")\n'
            'URL = "https://example.invalid/" + "api/v1/items"\n')
    assert hits("app/messages.py", code) == set()


RANDOM = "Zx8kQ2mPv9LrT4wNq7Hs"
BLOB = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1u"


@pytest.mark.parametrize("wrapped", ["${%s}", "<%s>", "{%s}", "{{%s}}", "$%s"])
def test_a_random_value_wrapped_like_a_reference(wrapped: str) -> None:
    """`${...}`, `<...>`, `{...}` around a name are a template's placeholder; around a random
    value they are wrapping paper: the value is reported as it would be plainly."""
    assert hits("app/db.py", f'password = "{RANDOM}"\n') == KEYWORD
    assert hits("app/db.py", f'password = "{wrapped % RANDOM}"\n') == KEYWORD
    assert hits("app/blob.py", f'BLOB = "{BLOB}"\n') == ENTROPY
    assert hits("app/blob.py", f'BLOB = "{wrapped % BLOB}"\n') == ENTROPY
    assert hits("deploy/.env", f"DB_PASSWORD={RANDOM}\n") == KEYWORD
    assert hits("deploy/.env", f"DB_PASSWORD={wrapped % RANDOM}\n") == KEYWORD


@pytest.mark.parametrize("value", ["${DB_PASSWORD}", "<your-api-key-here>", "{apiKeyFromVault}",
                                   "{{ secrets.GITHUB_TOKEN }}", "${env:API_KEY_2}",
                                   "%(password)s", "$PASSWORD"])
def test_near_a_wrapped_name_is_a_placeholder(value: str) -> None:
    assert hits("app/db.py", f'password = "{value}"\n') == set()
    assert hits("deploy/.env", f"DB_PASSWORD={value}\n") == set()


PAD = "x" * 1100


PUTTY = ("PuTTY-User-Key-File-2: ssh-ed25519\\nEncryption: none\\nComment: deploy\\n"
         f"Public-Lines: 2\\n{KEY_BODY}\\n")


@pytest.mark.parametrize(("path", "plain", "padded"), [
    ("app/db.py", 'password = "hunter2-correct-horse"\n',
     'password = "hunter2-correct-horse"  # ' + PAD + "\n"),
    ("web/db.js", 'const password = "hunter2-correct-horse";\n',
     'const password = "hunter2-correct-horse"; var pad = "' + PAD + '";\n'),
    ("web/db.js", 'const password = "hunter2-correct-horse";\n',
     'const password = "hunter2-correct-horse"; // ' + PAD + "\n"),
    ("app/keys.py", f'KEY = "{AWS}"\n', f'KEY = "{AWS}"  # ' + PAD + "\n"),
    ("app/blob.py", f'BLOB = "{BLOB}"\n', f'BLOB = "{BLOB}"; PAD = "' + PAD + '"\n'),
    ("web/db.js", 'const api_key = "3f786850e387550fdab836ed7e6dc881de23001b";\n',
     'const api_key = "3f786850e387550fdab836ed7e6dc881de23001b"; var pad = "' + PAD + '";\n'),
    # A key in one string, after code of a long line (redaction's search of long text starts
    # from the armour), and an armour line padded with spaces (openssl cuts them).
    ("web/keys.js", f'const KEY = "{BEGIN}\\n{ESCAPED}\\n{END}";\n',
     f'var pad = "{PAD}"; const KEY = "{BEGIN}\\n{ESCAPED}\\n{END}";\n'),
    ("web/keys.js", f'const KEY = "{BEGIN}\\n{ESCAPED}\\n{END}";\n',
     f'var pad = "{PAD * 4}"; const KEY = "{BEGIN}\\n{ESCAPED}\\n{END}";\n'),
    ("web/keys.js", f"const KEY = '{BEGIN}\\n' + '{KEY_BODY}\\n{END}';\n",
     f"var pad = '{PAD}'; const KEY = '{BEGIN}\\n' + '{KEY_BODY}\\n{END}';\n"),
    ("web/keys.js", f"const KEY = '{PUTTY}';\n", f"var pad = '{PAD}'; const KEY = '{PUTTY}';\n"),
    ("web/keys.js", f"const KEY = '{BEGIN}' + NL + '{KEY_BODY}' + NL +\n  '{END}';\n",
     f"var pad = '{PAD}'; const KEY = '{BEGIN}' + NL + '{KEY_BODY}' + NL +\n  '{END}';\n"),
    ("app/keys.py", f'KEY = "\\n".join(["{BEGIN}", "{KEY_BODY}", "{END}"])\n',
     f'PAD = "{PAD}"; KEY = "\\n".join(["{BEGIN}", "{KEY_BODY}", "{END}"])\n'),
    ("deploy/id.pem", KEYS["as openssl writes it"],
     KEYS["as openssl writes it"].replace(BEGIN, BEGIN + " " * 1100)),
    ("app/keys.py", f'KEY = """{BEGIN}\n{KEY_BODY}\n{END}\n"""\n',
     f'KEY = """{BEGIN}{" " * 5000}\n{KEY_BODY}\n{END}\n"""\n'),
])
def test_a_secret_on_a_line_padded_past_the_limit(path: str, plain: str, padded: str) -> None:
    """A comment or a string that pads a line past the long-line limit does not lower or
    hide the secret on it."""
    assert hits(path, padded) == hits(path, plain) != set()


@pytest.mark.parametrize("code", [
    f'var pad = "{PAD}"; var HEADER = "{BEGIN}", FOOTER = "{END}", x = "{"A1b2" * 20}";\n',
    f'var pad = "{PAD}"; var re = /{BEGIN}([A-Za-z0-9+\\/=\\s]+){END}/;\n',
    f'var pad = "{PAD}"; var pem = "{BEGIN}\\n" + body.match(/.{{1,64}}/g).join("\\n");\n',
])
def test_near_an_armour_in_minified_code_is_no_key(code: str) -> None:
    """A bundled library's armour constants, among code of a long line, hold no material
    right after them: no key."""
    assert hits("web/vendor.js", code) == set()
