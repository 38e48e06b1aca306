"""Stage artifacts: `<output-dir>/<run_id>/stepN_<name>.json`, one per stage that ran.

Each artifact is the JSON of a typed model and loads back into it, so a run can be
inspected afterwards and a stage replayed from the artifact of the one before. Every string
in an artifact goes through the run's redaction pass first, files are owner-only (0600 in
0700 folders), and only the newest `keep_runs` run folders are kept.

Artifacts are a record; the review is the product. A folder that cannot be written (a full
disk, no permission, a folder the reviewed repository leads out of itself) is said once and
the run goes on without artifacts. A running review holds a lock on its folder, so a run
started next to it never prunes it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

import msgspec

from reviewbot.errors import ArtifactError
from reviewbot.lazy_re import lazy_re
from reviewbot.schema.bundles import ContextBundle
from reviewbot.schema.findings import RulesResult
from reviewbot.schema.plans import FusedPlan, LlmPlan, PlannerIndex, ReviewIndex
from reviewbot.schema.records import Frozen
from reviewbot.schema.reviews import ModelCallLog, ReviewResult, VerifiedFindings
from reviewbot.schema.runs import RunReport
from reviewbot.schema.units import DiffResult
from reviewbot.store.files import write_if_absent, write_private
from reviewbot.text.redaction import Redactor, redact_strings, redacted_strings

# name -> (step number, model). The one list of what a run can write.
STEPS: dict[str, tuple[int, type[Frozen]]] = {
    "diff": (1, DiffResult),
    "rules": (2, RulesResult),
    "review_index": (3, ReviewIndex),
    "planner_index": (3, PlannerIndex),
    "llm_plan": (4, LlmPlan),
    "fused_plan": (5, FusedPlan),
    "context_bundle": (6, ContextBundle),
    "review": (7, ReviewResult),
    "verified": (8, VerifiedFindings),
    "model_calls": (9, ModelCallLog),
    "report": (9, RunReport),
}
REPORT_FILE = "step9_report.json"
# Named so that sorting by name is sorting by time (to the microsecond), runs of one
# second included.
RUN_ID = lazy_re(r"^\d{8}T\d{6}(?:\.\d{6})?Z-[0-9a-f]{6}$")

_GITIGNORE = "# Written by reviewbot: run artifacts are local and never committed.\n*\n"
LOCK_FILE = ".lock"
Notify = Callable[[str], None]


class _Health(msgspec.Struct):
    """Whether the folder still takes artifacts (the first failure stops every later write),
    and the lock a running review holds on it."""

    problem: str | None = None
    lock: int | None = None


class RunDir(msgspec.Struct, frozen=True):
    run_id: str
    path: Path
    redactor: Redactor = msgspec.field(default_factory=Redactor)
    notify: Notify = lambda message: None
    _health: _Health = msgspec.field(default_factory=_Health)

    @property
    def problem(self) -> str | None:
        """Why artifacts are not (all) written; None when every one was."""
        return self._health.problem

    def file(self, name: str) -> Path:
        step, _ = STEPS[name]
        return self.path / f"step{step}_{name}.json"

    def write(self, name: str, model: Frozen) -> Path | None:
        """Write an artifact; None when the folder takes no more (said once)."""
        _, expected = STEPS[name]
        if not isinstance(model, expected):
            raise TypeError(f"artifact {name} must be a {expected.__name__}")
        target = self.file(name)
        if self.problem is not None:
            return None
        try:
            descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                self._dump(model, handle)
        except OSError as exc:
            with contextlib.suppress(OSError):
                target.unlink()  # half an artifact would not load back
            self.fail(f"cannot write {target.name} in {self.path}: {exc.strerror or exc}")
            return None
        return target

    def write_text(self, name: str, text: str) -> Path | None:
        """A plain text file in the run folder (owner-only); None when it cannot be."""
        if self.problem is not None:
            return None
        target = self.path / name
        try:
            write_private(target, text)
        except OSError as exc:
            self.fail(f"cannot write {name} in {self.path}: {exc.strerror or exc}")
            return None
        return target

    def fail(self, problem: str) -> None:
        """Stop writing artifacts, and say why (once)."""
        if self._health.problem is None:
            self._health.problem = problem
            self.notify(f"{problem}; the review goes on without its artifacts (the report "
                        "is complete; `reviewbot explain` and `rerun` will not find this run)")

    def close(self) -> None:
        """The run is over: its folder may be pruned by later runs."""
        if self._health.lock is not None:
            with contextlib.suppress(OSError):
                (self.path / LOCK_FILE).unlink()
            with contextlib.suppress(OSError):
                os.close(self._health.lock)
            self._health.lock = None

    def _dump(self, model: Frozen, handle: TextIO) -> None:
        """The model as JSON, each string through the redaction pass. Its long lists (units,
        bundle items) are written an element at a time, so a change of 100,000 lines never
        has its whole artifact in memory at once."""
        streamed = next((name for name in _STREAMED if isinstance(getattr(model, name, None),
                                                               tuple)), None)
        if streamed is None:
            handle.write(self._json(model.to_data(), indent=2) + "\n")
            return
        head = redact_strings(model.to_data(exclude=streamed), self.redactor)
        handle.write("{\n")
        for key, value in head.items():
            handle.write(f"  {json.dumps(key)}: {_indented(value)},\n")
        handle.write(f"  {json.dumps(streamed)}: [")
        for index, element in enumerate(getattr(model, streamed)):
            # One element a line, compact: json's C encoder (indenting is pure Python, and
            # was a fifth of a large change's time).
            handle.write(("," if index else "") + "\n    " + self._compact(element))
        handle.write("\n  ]\n}\n")

    def _json(self, data: Any, indent: int | None) -> str:
        """The data as JSON with every string redacted; checked whole first, since most
        of it (code without a secret-like word) needs nothing."""
        separators = None if indent else (",", ":")
        text = json.dumps(data, indent=indent, ensure_ascii=False, separators=separators)
        if not self.redactor.could_change_json(text):
            return text
        return json.dumps(redact_strings(data, self.redactor), indent=indent,
                          ensure_ascii=False, separators=separators)

    def _compact(self, element: Frozen) -> str:
        """One record as compact JSON, redacted: msgspec's encoder, which needs no plain
        data first, for the usual element without a secret-like word."""
        text = element.to_json()
        # A record of megabytes (a minified bundle's line) goes straight to the pass string
        # by string, which remembers what it found in a long string for the rules and the
        # report; checked whole, its JSON would be encoded and searched once more.
        if len(text) < _CHECKED_WHOLE and not self.redactor.could_change_json(text):
            return text
        redacted = redacted_strings(element.to_data(), self.redactor)
        # Encoded straight from the redacted data (the check above is the one `_json` would
        # make again, and json's encoder took twice msgspec's time on a 4 MB minified line).
        return text if redacted is None else msgspec.json.encode(redacted).decode()

    def read(self, name: str) -> Frozen:
        return load_artifact(self.file(name), name)

    def has(self, name: str) -> bool:
        return self.file(name).is_file()


# The list field of an artifact that can be long, written element by element.
_STREAMED = ("units", "items", "plan", "reviews", "calls")


# From this many characters, a record's JSON is not searched whole first (_compact).
_CHECKED_WHOLE = 1_000_000


def _indented(value: Any, depth: int = 2) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + " " * depth)


def new_run_id(now: datetime | None = None) -> str:
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%S.%fZ")
    return f"{stamp}-{os.urandom(3).hex()}"  # `secrets` would load hmac and OpenSSL


def create_run_dir(output_dir: Path, run_id: str, origin: str = "the default",
                   redactor: Redactor | None = None, keep: int | None = None, *,
                   inside: Path | None = None, notify: Notify = lambda message: None,
                   tracked: Callable[[Path], bool] = lambda folder: False,
                   in_git: Callable[[Path], str | None] = lambda folder: None) -> RunDir:
    """Make the run's folder (owner-only, locked while the run lasts), a .gitignore that
    keeps the output dir out of git, and prune the oldest finished runs beyond `keep`.

    `inside`: the folder the output dir must resolve into (the repository, when the folder
    is the default or the repository's config chose it: a committed symlink must not lead
    the writes out). `origin` names what chose the folder, so a message can say what to
    change. A folder that cannot be made is a RunDir that writes nothing, said once.
    `tracked` says whether git tracks files in a folder: those are never pruned. `in_git`
    says why a folder is in a git directory (None: it is not): nothing is written there."""
    path = output_dir / run_id
    run_dir = RunDir(run_id=run_id, path=path, redactor=redactor or Redactor(), notify=notify)
    fix = ("pass a writable folder with --output-dir" if origin == "--output-dir" else
           f"change {origin}, or pass a writable folder with --output-dir")
    if inside is not None and not output_dir.resolve().is_relative_to(inside.resolve()):
        run_dir.fail(f"{output_dir} (from {origin}) leads out of the repository (a symlink?); "
                     f"nothing is written there ({fix})")
        return run_dir
    if (problem := in_git(output_dir)) is not None:
        run_dir.fail(f"{output_dir} (from {origin}) {problem}, among git's own files; nothing "
                     f"is written there ({fix})")
        return run_dir
    try:
        output_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_if_absent(output_dir / ".gitignore", _GITIGNORE)
        path.mkdir(mode=0o700)
        run_dir._health.lock = _lock(path / LOCK_FILE)
    except OSError as exc:
        run_dir.fail(f"cannot write run artifacts to {output_dir} (from {origin}): "
                     f"{exc.strerror or exc} ({fix})")
        return run_dir
    if keep is not None:
        prune_runs(output_dir, keep, tracked)
    return run_dir


def _lock(target: Path) -> int | None:
    """An exclusive lock held until the run ends (or its process does)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover (not on Windows)
        return None
    descriptor = os.open(target, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # a file system without locks: the run goes on unlocked
        os.close(descriptor)
        return None
    return descriptor


def _running(folder: Path) -> bool:
    """Whether a review still holds the folder's lock."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover (not on Windows)
        return False
    try:
        descriptor = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_NOFOLLOW)
    except OSError:
        return False  # no lock: an older run, or one that never started writing
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(descriptor)
    return False


def prune_runs(output_dir: Path, keep: int,
               tracked: Callable[[Path], bool] = lambda folder: False) -> list[Path]:
    """Delete the oldest run folders so `keep` remain; only folders named like runs, never
    one a review is still writing, never one git tracks files in."""
    try:
        runs = sorted(p for p in output_dir.iterdir() if p.is_dir() and RUN_ID.match(p.name))
    except OSError:
        return []
    doomed = [folder for folder in (runs[:-keep] if keep > 0 else runs)
              if not _running(folder) and not tracked(folder)]
    for folder in doomed:
        shutil.rmtree(folder, ignore_errors=True)
    return doomed


def load_artifact(path: Path, name: str) -> Frozen:
    """Load a stage artifact back into its model, with an error that names the file."""
    _, model = STEPS[name]
    try:
        return model.from_json(path.read_bytes())
    except FileNotFoundError as exc:
        raise ArtifactError(f"{path} does not exist; did the run reach that stage?") from exc
    except msgspec.DecodeError as exc:
        raise ArtifactError(
            f"{path} is not a valid {name} artifact ({exc}). Was it written by another "
            "reviewbot version?") from exc
