"""The secrets rule's messages: the type of a secret, never its characters."""

from __future__ import annotations

from tests.rules.conftest import findings

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


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
