"""A repository and a model that attack the review: planted secrets where the agent's tools
could reach them, and a model that obeys a prompt injection (tool calls with git syntax for
arguments, reads of `.git/`, ignored and untracked files).

Used by the sandbox tests in every mode (tests/review/hostile_test.py, and github mode in
tests/github/hostile_test.py): whatever the model does, the rules' findings are reported and
decide the exit code, and no planted value reaches the model server.
"""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import GitFixture
from tests.fake_openai import (
    FakeOpenAI,
    Received,
    Scripted,
    completion,
    nothing_to_say,
    one_call_answer,
)

# Each value is planted in one place the agent's tools must not show the model in clear.
PLANTED = {
    "a credential in .git/config": "gitcredpw-5151",
    "an ignored .env": "ignoredpw-6262",
    "an untracked file": "untrackedpw-7373",
    "a tracked dotenv file": "redispw-7788",
    "an exported token": "tok-9a8b7c6d",
    "a YAML password": "yamlpw-3344",
    "reviewbot's own folder": "runsfolderpw-4545",
}
SHELL_CALL = "import os\n\n\ndef clean(path):\n    os.system('rm -rf ' + path)\n"
# A security-sensitive module no rule finding explains: the agent reviews it with its tools
# (review/route.py), where the shell call is read in one call with its rule finding.
AGENT_FILE = "app/session.py"
SESSION_CODE = "def current(request):\n    return request.user\n"
# What the injected model asks for: git syntax as arguments, and every file it must not read.
HOSTILE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("list_files", {"dir": ":(bad)"}),
    ("list_files", {"dir": ":!x"}),
    ("list_files", {"dir": ":(glob)**"}),
    ("list_files", {"dir": "."}),
    ("read_file_hunk", {"path": ".git/config", "start": 1, "end": 50}),
    ("read_file_hunk", {"path": ".git/HEAD", "start": 1, "end": 5}),
    ("read_file_hunk", {"path": ".env", "start": 1, "end": 5}),
    ("read_file_hunk", {"path": "notes.txt", "start": 1, "end": 5}),
    ("read_file_hunk", {"path": ".reviewbot/keep.txt", "start": 1, "end": 5}),
    ("read_file_hunk", {"path": "deploy/prod.env", "start": 1, "end": 5}),
    ("read_file_hunk", {"path": "config/app.yaml", "start": 1, "end": 5}),
    ("read_file_hunk", {"path": ":(bad)", "start": 1, "end": 5}),
    ("search", {"query": "REDIS_PASSWORD"}),
    ("search", {"query": "password"}),
    ("search", {"query": "gitcredpw"}),
    ("search", {"query": "-e"}),
]


def plant(repo: GitFixture) -> str:
    """The base commit: tracked secrets in dotenv and YAML files, a remote URL with a
    password, an ignored .env. Returns the base commit."""
    repo.write(".gitignore", ".env\n")
    repo.write("deploy/prod.env", f"REDIS_PASSWORD={PLANTED['a tracked dotenv file']}\n"
                                  f"export API_TOKEN={PLANTED['an exported token']}\n")
    repo.write("config/app.yaml", f"db:\n  password: {PLANTED['a YAML password']}\n")
    repo.write("app/__init__.py", "")
    base = repo.commit("base")
    repo.git("remote", "add", "origin",
             f"https://deploy:{PLANTED['a credential in .git/config']}@git.example.invalid/x.git")
    repo.write(".env", f"SECRET_KEY={PLANTED['an ignored .env']}\n")
    own = PLANTED["reviewbot's own folder"]
    repo.write(".reviewbot/keep.txt", f"password={own}\n")
    return base


def change(repo: GitFixture) -> None:
    """The change under review: a shell injection the rules report at error, a module the
    agent reads, and an untracked file beside them."""
    repo.write("app/clean.py", SHELL_CALL)
    repo.write(AGENT_FILE, SESSION_CODE)
    repo.write("notes.txt", f"password={PLANTED['an untracked file']}\n")


def obey_the_injection(server: FakeOpenAI) -> None:
    """The model: nothing to say in one call, every hostile call in a conversation, then
    `finish`."""
    def respond(request: Received) -> Scripted:
        if "tools" not in request.body:
            return nothing_to_say(request)
        if any(m.get("role") == "tool" for m in request.messages):
            return Scripted(body=completion(None, tool_calls=[_call("done", "finish", {})]))
        return Scripted(body=completion(None, tool_calls=[
            _call(f"c{n}", name, args) for n, (name, args) in enumerate(HOSTILE_CALLS)]))
    server.responder = respond


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def tool_answers(server: FakeOpenAI) -> dict[str, str]:
    """The answers the model got, by the hostile call they answer."""
    for request in server.received:
        answers = {m["tool_call_id"]: m["content"] for m in request.messages
                   if m.get("role") == "tool"}
        if answers:
            return {f"{name}{json.dumps(args)}": answers[f"c{n}"]
                    for n, (name, args) in enumerate(HOSTILE_CALLS)}
    raise AssertionError("the model never got its tools' answers")


def assert_nothing_planted_reached(server: FakeOpenAI) -> None:
    sent = server.requests_text()
    for where, value in PLANTED.items():
        assert value not in sent, f"{where} reached the model"
    assert "refs/heads" not in sent  # .git/HEAD


# What a model may write to a terminal or a page: a screen clear, a bell, NUL, a bidi
# override that reorders what a reader sees.
CONTROLS = ("\x1b[2J", "\x07", "\x00", "\u202e")


def record_with_controls(server: FakeOpenAI, path: str = "app/clean.py",
                         evidence: str = "def clean(path):") -> None:
    """The model: one finding (on line 4) whose words hold control characters, in one call's
    answer and through `record_finding` in a conversation."""
    finding = {"file_path": path, "start_line": 4, "end_line": 4, "severity": "warning",
               "category": "bug", "title": "Clean\x1b[2J up\x07 the path",
               "message": "It deletes\x00 whatever \u202eit is given.",
               "evidence": evidence, "fix_description": "Check\x1b]0;owned\x07 it."}
    def respond(request: Received) -> Scripted:
        if "tools" not in request.body:
            return one_call_answer(request, finding)
        if any(m.get("role") == "tool" for m in request.messages):
            return Scripted(body=completion(None, tool_calls=[_call("done", "finish", {})]))
        return Scripted(body=completion(None, tool_calls=[
            _call("c0", "record_finding", finding)]))
    server.responder = respond


def assert_no_controls(text: str) -> None:
    for control in CONTROLS:
        assert control not in text, repr(control)
    assert "deletes" in text or "Clean" in text  # the finding is there, made safe
