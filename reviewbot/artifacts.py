"""Stage artifacts: `<output-dir>/<run_id>/stepN_<name>.json`, one per stage that ran.

Each artifact is the JSON of a typed model and loads back into it, so a run can be
inspected afterwards and a stage replayed from the artifact of the one before.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ValidationError

from reviewbot.errors import ArtifactError, ConfigError
from reviewbot.schema import (
    ContextBundle,
    DiffResult,
    FusedPlan,
    LlmPlan,
    ModelCallLog,
    PlannerIndex,
    ReviewIndex,
    RulesResult,
    RunReport,
)

# name -> (step number, model). The one list of what a run can write.
STEPS: dict[str, tuple[int, type[BaseModel]]] = {
    "diff": (1, DiffResult),
    "rules": (2, RulesResult),
    "review_index": (3, ReviewIndex),
    "planner_index": (3, PlannerIndex),
    "llm_plan": (4, LlmPlan),
    "fused_plan": (5, FusedPlan),
    "context_bundle": (6, ContextBundle),
    "model_calls": (9, ModelCallLog),
    "report": (9, RunReport),
}

_GITIGNORE = "# Written by reviewbot: run artifacts are local and never committed.\n*\n"


@dataclass(frozen=True)
class RunDir:
    run_id: str
    path: Path

    def write(self, name: str, model: BaseModel) -> Path:
        step, expected = STEPS[name]
        if not isinstance(model, expected):
            raise TypeError(f"artifact {name} must be a {expected.__name__}")
        target = self.path / f"step{step}_{name}.json"
        target.write_text(model.model_dump_json(indent=2) + "\n", encoding="utf-8")
        return target

    def read(self, name: str) -> BaseModel:
        step, _ = STEPS[name]
        return load_artifact(self.path / f"step{step}_{name}.json", name)


def new_run_id(now: datetime | None = None) -> str:
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{secrets.token_hex(3)}"


def create_run_dir(output_dir: Path, run_id: str, origin: str = "the default") -> RunDir:
    """Make the run's folder, and a .gitignore that keeps the output dir out of git.

    `origin` names what chose the folder, so an error can say what to change."""
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
        ignore = output_dir / ".gitignore"
        if not ignore.exists():
            ignore.write_text(_GITIGNORE, encoding="utf-8")
        path = output_dir / run_id
        path.mkdir()
    except OSError as exc:
        fix = ("pass a writable folder with --output-dir" if origin == "--output-dir" else
               f"change {origin}, or pass a writable folder with --output-dir")
        raise ConfigError(
            f"cannot write run artifacts to {output_dir} (from {origin}): {exc.strerror}; "
            f"{fix}.") from exc
    return RunDir(run_id=run_id, path=path)


def load_artifact(path: Path, name: str) -> BaseModel:
    """Load a stage artifact back into its model, with an error that names the file."""
    _, model = STEPS[name]
    try:
        return model.model_validate_json(path.read_bytes())
    except FileNotFoundError as exc:
        raise ArtifactError(f"{path} does not exist; did the run reach that stage?") from exc
    except ValidationError as exc:
        raise ArtifactError(
            f"{path} is not a valid {name} artifact ({exc.error_count()} problems, first: "
            f"{exc.errors()[0]['msg']}). Was it written by another reviewbot version?",
        ) from exc
