"""PR-Agent's side of the peer bench: `pr-agent==0.49.0` from PyPI in its own Python 3.12
virtual environment (installed when the bench first needs it), run as its command line runs
on a local branch (`python -m pr_agent.cli --json-output FILE --pr_url main review`), with
every setting by environment so that it makes exactly the requests its review needs, to the
same server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from .case import BASE
from .score import Remark
from .tool import Outcome

VERSION = "0.49.0"
PYTHON312 = Path("/root/.pyenv/versions/3.12.1/bin/python3.12")
TIMEOUT_S = 3600
_TEXT_CHARS = 1000


def python(venv: Path) -> Path:
    return venv / "bin" / "python"


def installed(venv: Path) -> bool:
    probe = python(venv)
    if not probe.is_file():
        return False
    done = subprocess.run([str(probe), "-c", "import importlib.metadata as m; "
                           "print(m.version('pr-agent'))"],
                          capture_output=True, text=True, check=False)
    return done.stdout.strip() == VERSION


def install(venv: Path, interpreter: Path) -> None:
    """pr-agent==VERSION into `venv` with `interpreter` (it needs Python 3.12)."""
    if not interpreter.is_file():
        raise SystemExit(f"PR-Agent {VERSION} needs Python 3.12, and {interpreter} is not "
                         "there: pass --python312 PATH, or --tools reviewbot")
    print(f"installing pr-agent=={VERSION} into {venv} (once; a few minutes)",
          file=sys.stderr, flush=True)
    subprocess.run([str(interpreter), "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run([str(python(venv)), "-m", "pip", "install", "--quiet",
                    f"pr-agent=={VERSION}"], check=True)


def _tokenizers(venv: Path) -> Path:
    """The tiktoken files litellm ships: without them it tries a download, then exits 0 having
    done nothing."""
    found = sorted(venv.glob("lib/python3*/site-packages/litellm/litellm_core_utils/tokenizers"))
    if not found:
        raise SystemExit(f"no litellm tokenizers under {venv}: reinstall with --install-pr-agent")
    return found[0]


def environment(venv: Path, base_url: str, model: str, work: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI", "CONFIG__", "LITELLM", "PR_AGENT", "GITHUB",
                                "ANTHROPIC", "AZURE"))}
    return {
        **env,
        "CONFIG__GIT_PROVIDER": "local",
        "CONFIG__MODEL": f"openai/{model}",
        "OPENAI__API_BASE": base_url,
        # A key litellm insists on; the loopback server ignores it.
        "OPENAI__KEY": "none",
        # Otherwise a failed call is tried again on a second model (another request).
        "CONFIG__FALLBACK_MODELS": "[]",
        "CONFIG__CUSTOM_MODEL_MAX_TOKENS": "16384",
        "CONFIG__NUM_RETRIES": "0",
        # reviewbot's timeout_s on a CPU (docs/MODEL.md).
        "CONFIG__AI_TIMEOUT": "600",
        # Otherwise a failed review exits 0.
        "CONFIG__PROPAGATE_TOOL_ERRORS": "true",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "TIKTOKEN_CACHE_DIR": str(_tokenizers(venv)),
        # Its markdown review goes here, not into the repository under review.
        "LOCAL__REVIEW_PATH": str(work / "review.md"),
    }


def _strip(value: Any) -> str:
    return str(value or "").strip()


def remarks(review: dict[str, Any]) -> tuple[Remark, ...]:
    """`key_issues_to_review[]` as remarks (its strings end in newlines); an issue without a
    file or a line has no place and cannot name a defect, and is kept out."""
    found = []
    for issue in review.get("key_issues_to_review") or []:
        if not isinstance(issue, dict):
            continue
        path = _strip(issue.get("relevant_file"))
        try:
            start = int(issue.get("start_line") or 0)
            end = int(issue.get("end_line") or start)
        except (TypeError, ValueError):
            continue
        if path and start > 0:
            text = f"{_strip(issue.get('issue_header'))}\n{_strip(issue.get('issue_content'))}"
            found.append(Remark(path=path, start=start, end=max(start, end),
                                text=text[:_TEXT_CHARS]))
    return tuple(found)


def review(venv: Path, repo: Path, base_url: str, model: str, work: Path) -> Outcome:
    output = work / "pr-agent.json"
    command = [str(python(venv)), "-m", "pr_agent.cli", "--json-output", str(output),
               "--pr_url", BASE, "review"]
    try:
        done = subprocess.run(command, cwd=repo, env=environment(venv, base_url, model, work),
                              capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return Outcome(failed=f"no answer in {TIMEOUT_S} s")
    tail = (done.stderr or done.stdout).strip()[-500:]
    if done.returncode != 0:
        return Outcome(failed=f"exit {done.returncode}: {tail}")
    try:
        data = json.loads(output.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Outcome(failed=f"no JSON review written: {tail}")
    found = data.get("review") if isinstance(data, dict) else None
    if not isinstance(found, dict):
        return Outcome(failed="the JSON output holds no review")
    return Outcome(remarks=remarks(found),
                   extra={"security_concerns": _strip(found.get("security_concerns"))[:500]})
