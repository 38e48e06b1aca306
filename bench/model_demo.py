"""A whole run with a model, end to end, against the local OpenAI-compatible test server:
a two-file staged change; the server plays a reviewer that reads the SQL module with its
tools (the rules see risk there they cannot name), records findings (one two lines off, one
about a file outside the change, refused in the tool's answer), reviews the other file in
one structured call, and writes a fix. Prints the command and what reviewbot printed (the
sample run in docs/MODEL.md).

    python bench/model_demo.py [--format text|markdown|json]

The replies are scripted (no model is reachable from the machine this was written on); what
runs on them is the real pipeline: the openai client, the agent's tools, the verifier, the
suggestion checks and the reporters.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fake_openai import FakeOpenAI, Received, Scripted, completion, one_call_answer

DB_BASE = "import sqlite3\n\n\ndef connect(path):\n    return sqlite3.connect(path)\n"
DB_NEW = DB_BASE + '''

def export_users(conn, path):
    out = open(path, "w")
    for name, email in conn.execute("SELECT name, email FROM users"):
        out.write(f"{name},{email}\\n")
    return path
'''
VIEWS_BASE = '''from flask import Flask

from app.db import connect

app = Flask(__name__)
'''
VIEWS_NEW = VIEWS_BASE + '''

@app.post("/admin/export")
def export():
    path = export_users(connect("app.db"), "/tmp/users.csv")
    return {"path": path}
'''


def _calls(*calls: tuple[str, dict[str, Any]]) -> Scripted:
    return Scripted(body=completion(None, tool_calls=[
        {"id": f"call_{n}", "type": "function",
         "function": {"name": name, "arguments": json.dumps(args)}}
        for n, (name, args) in enumerate(calls)]))


LEAK = {"file_path": "app/db.py", "start_line": 9, "end_line": 11, "severity": "warning",
        "category": "bug", "title": "Export file is never closed",
        "message": "`out` stays open until garbage collection; on an error the CSV is left "
                   "half written and the handle leaks.",
        "evidence": DB_NEW.split("\n")[8] + "\n" + DB_NEW.split("\n")[9] + "\n"
                    + DB_NEW.split("\n")[10],
        "fix_description": "Open the file in a `with` block."}
FIX = "\n".join(["    with open(path, \"w\") as out:",
                 "    " + DB_NEW.split("\n")[9], "    " + DB_NEW.split("\n")[10]])
AUTHZ = {"file_path": "app/views.py", "start_line": 10, "end_line": 11, "severity": "error",
         "category": "security", "title": "Admin export has no authorization check",
         "message": "Any client can POST /admin/export and get every user's name and e-mail "
                    "written to a world-readable file.",
         "evidence": "def export():\n    path = export_users(connect(\"app.db\"), "
                     "\"/tmp/users.csv\")",
         "fix_description": "Require an authenticated administrator before exporting."}


def respond(request: Received) -> Scripted:
    messages = request.messages
    system = messages[0]["content"] or ""
    if system.startswith("You write the fix"):
        return Scripted(body=completion(FIX, tokens=(301, 48)))
    if not request.body.get("tools"):  # the one call that reads app/views.py
        return one_call_answer(request, AUTHZ)
    if len(messages) == 2:
        return _calls(("read_file_hunk", {"path": "app/db.py", "start": 1, "end": 40}))
    return _calls(("record_finding", {**LEAK, "start_line": 11, "end_line": 13}),
                  ("record_finding", {**LEAK, "file_path": "app/cli.py",
                                      "title": "CLI export leaks too"}),
                  ("finish", {"summary": "One leak."}))


def git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "demo", "GIT_AUTHOR_EMAIL": "d@example.invalid",
           "GIT_COMMITTER_NAME": "demo", "GIT_COMMITTER_EMAIL": "d@example.invalid"}
    subprocess.run(["git", *args], cwd=root, check=True, env=env, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--format", default="text")
    args = parser.parse_args()
    server = FakeOpenAI().start()
    server.responder = respond
    with tempfile.TemporaryDirectory(prefix="reviewbot-demo-") as work:
        root = Path(work) / "shop"
        root.mkdir()
        git(root, "init", "-q")
        (root / "app").mkdir()
        (root / "app" / "db.py").write_text(DB_BASE)
        (root / "app" / "views.py").write_text(VIEWS_BASE)
        git(root, "add", "-A")
        git(root, "commit", "-qm", "base")
        (root / "app" / "db.py").write_text(DB_NEW)
        (root / "app" / "views.py").write_text(VIEWS_NEW)
        git(root, "add", "-A")
        env = {**os.environ, "REVIEWBOT_MODEL": "demo-reviewer",
               "OPENAI_BASE_URL": server.base_url, "NO_COLOR": "1"}
        env.pop("OPENAI_API_KEY", None)
        command = ["reviewbot", "--mode", "staged", "--format", args.format]
        print(f"$ REVIEWBOT_MODEL=demo-reviewer OPENAI_BASE_URL=http://127.0.0.1:PORT/v1 "
              f"{' '.join(command)}")
        result = subprocess.run([str(Path(sys.executable).parent / "reviewbot"), *command[1:]],
                                cwd=root, env=env, capture_output=True, text=True, check=False)
        print((result.stdout + result.stderr).replace(work, "/tmp/demo").rstrip())
        print(f"(exit code {result.returncode})")
    server.stop()
    # 1 is "findings at the fail level", the demo's point; 2 and 3 are a run that broke.
    if result.returncode not in (0, 1):
        sys.exit(f"reviewbot exited {result.returncode}: the demo did not run")


if __name__ == "__main__":
    main()
