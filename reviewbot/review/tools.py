"""The review agent's tools, on the same sandboxed, bounded readers as the context stage.

- `read_file_hunk(path, start, end)`: lines of a tracked file on the change's new side;
- `search(query)`: `git grep` of the reviewed side, ranked and capped (the run's search
  budget applies);
- `list_files(dir)`: tracked files under a folder of the repository;
- `record_finding(...)`: the only way a finding exists (seed 001), validated by pydantic
  and checked against the change at once (its answer says why a finding was not kept);
- `finish(summary)`: ends the conversation.

Whatever the model asks, and whatever the diff told it to ask, a path is a repository path
(no absolute paths, no `..`, no NUL) and data, never git syntax; the tools see the same files
in every mode (`RepoSource.readable_files`: the reviewed side's tracked files and the change's
files, never `.git/`, ignored files or reviewbot's own folders); a symlink reads as its
target's name; every answer goes through the run's redaction pass with the conventions of
the file it came from, and is capped in lines and bytes. A bad call, or a tool that fails,
gets an error message back, never an exception.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from reviewbot.context.search import Searcher
from reviewbot.model.messages import ToolCall, ToolSpec
from reviewbot.model.replies import visible_text
from reviewbot.repo.source import RepoSource
from reviewbot.review.replies import FindingArgs
from reviewbot.schema.reviews import RecordedFinding
from reviewbot.text.redaction import Redactor

MAX_READ_LINES = 200
MAX_RESULT_CHARS = 16_000
MAX_LISTED = 200
MAX_FINDINGS = 20


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReadArgs(_Args):
    path: str = Field(description="a file path relative to the repository root")
    start: int = Field(ge=1, description="first line (1-based)")
    end: int = Field(ge=1, description="last line (inclusive)")


class SearchArgs(_Args):
    query: str = Field(min_length=1, max_length=100,
                       description="a word or name to find (word-bounded)")


class ListArgs(_Args):
    dir: str = Field(default="", description="a folder relative to the repository root")


class FinishArgs(_Args):
    summary: Annotated[str, BeforeValidator(visible_text)] = Field(
        default="", max_length=2000, description="one or two sentences on what you reviewed")


def _spec(name: str, description: str, model: type[BaseModel]) -> ToolSpec:
    schema = model.model_json_schema()
    schema.pop("title", None)
    return ToolSpec(name=name, description=description, parameters=schema)


TOOLS: tuple[ToolSpec, ...] = (
    _spec("read_file_hunk", "Read lines start..end of a file as the change leaves it "
          f"(at most {MAX_READ_LINES} lines).", ReadArgs),
    _spec("search", "Find a word or name in the repository's tracked files (ranked: "
          "definitions, then calls, then other references).", SearchArgs),
    _spec("list_files", "List the tracked files under a folder.", ListArgs),
    _spec("record_finding", "Record one problem in the changed code. Only recorded findings "
          "are reported. `evidence` must quote the code exactly as it is at the lines "
          "given.", FindingArgs),
    _spec("finish", "End the review of this change when every problem is recorded.",
          FinishArgs),
)
TOOL_NAMES = frozenset(tool.name for tool in TOOLS)


@dataclass
class Toolbox:
    """One conversation's tools and what they produced."""

    source: RepoSource
    searcher: Searcher
    redactor: Redactor = field(default_factory=Redactor)
    findings: list[RecordedFinding] = field(default_factory=list)
    finished: bool = False
    summary: str = ""
    # Calls whose tool failed (answered with an error, counted for the conversation).
    failures: int = 0
    # The check a recorded finding must pass to be kept: None, or why it was not.
    verify: Callable[[RecordedFinding], str | None] = lambda finding: None

    def run(self, call: ToolCall) -> str:
        """The tool's answer as text for the model (an error message on a bad call)."""
        handler = _HANDLERS.get(call.name)
        if handler is None:
            return _error(f"there is no tool {call.name!r}; the tools are "
                          f"{', '.join(sorted(TOOL_NAMES))}")
        try:
            arguments = json.loads(call.arguments or "{}")
        except ValueError:
            return _error("the arguments are not valid JSON")
        if not isinstance(arguments, dict):
            return _error("the arguments must be a JSON object")
        try:
            return _clip(handler(self, arguments))
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                                 for e in exc.errors()[:5])
            return _error(f"invalid arguments: {problems}")
        except Exception as exc:  # a failed call is an answer
            # Whatever a call makes git or the file system do, the run goes on: the model
            # hears that the call failed, and the review (and the rules' findings) stand.
            self.failures += 1
            return _error(f"{call.name} failed ({type(exc).__name__}); try another call")

    def read(self, arguments: dict[str, Any]) -> str:
        args = ReadArgs.model_validate(arguments)
        path = safe_path(args.path)
        if path is None:
            return _error("paths are repository paths: relative, without '..'")
        if not self.source.readable(path):
            return _error(f"{path} is not a tracked file of the repository or a file of the "
                          "change; list_files shows what can be read")
        file = self.source.read(path)
        if file.text is None:
            return _error(file.note or f"{path} is not a file on the change's new side")
        lines = self.redactor.for_path(file.text, path).split("\n")
        if lines[-1] == "":
            lines.pop()  # the end of the last line, not a line
        end = min(args.end, len(lines), args.start + MAX_READ_LINES - 1)
        if args.start > len(lines):
            return _error(f"{path} has {len(lines)} lines")
        body = "\n".join(f"{n:>5} | {lines[n - 1]}" for n in range(args.start, end + 1))
        return f"{path} L{args.start}-L{end} of {len(lines)}\n{body}"

    def search(self, arguments: dict[str, Any]) -> str:
        args = SearchArgs.model_validate(arguments)
        hits = self.searcher.find(args.query.strip(),
                                  keep=lambda hit: self.source.readable(hit.file_path))
        if self.searcher.skipped:
            return _error("the run's searches are spent; use what you have")
        if not hits:
            return f"no tracked file mentions {args.query!r}"
        return "\n".join(f"{h.file_path}:{h.line} ({h.kind}) "
                         f"{self.redactor.for_path(h.text, h.file_path)}" for h in hits)

    def list(self, arguments: dict[str, Any]) -> str:
        args = ListArgs.model_validate(arguments)
        raw = args.dir.strip()
        # "/" and "." are the root of what the model sees: the repository.
        folder = "" if raw in ("", ".", "./", "/") else safe_path(raw.strip("/"))
        if folder is None:
            return _error("folders are repository paths: relative, without '..'")
        files = self.source.list_files(folder)
        if not files:
            return f"no tracked files under {folder or 'the repository root'}"
        shown = files[:MAX_LISTED]
        more = f"\n... ({len(files) - MAX_LISTED} more)" if len(files) > MAX_LISTED else ""
        return "\n".join(shown) + more

    def record(self, arguments: dict[str, Any]) -> str:
        finding = FindingArgs.model_validate(arguments).recorded()
        if len(self.findings) >= MAX_FINDINGS:
            return _error(f"at most {MAX_FINDINGS} findings per change; keep the most "
                          "important")
        reason = self.verify(finding)
        if reason is not None:
            return _error(f"not recorded: {reason}")
        self.findings.append(finding)
        return json.dumps({"recorded": f"F{len(self.findings)}"})

    def finish(self, arguments: dict[str, Any]) -> str:
        args = FinishArgs.model_validate(arguments)
        self.finished = True
        self.summary = args.summary
        return json.dumps({"finished": True})


_HANDLERS: dict[str, Callable[[Toolbox, dict[str, Any]], str]] = {
    "read_file_hunk": Toolbox.read,
    "search": Toolbox.search,
    "list_files": Toolbox.list,
    "record_finding": Toolbox.record,
    "finish": Toolbox.finish,
}


def call_note(call: ToolCall, answer: str) -> str:
    """One line for a call of an earlier turn, in place of its answer (a conversation sends
    the last turn whole, the ones before as these lines)."""
    try:
        arguments = json.loads(call.arguments or "{}")
    except ValueError:
        arguments = {}
    if not isinstance(arguments, dict):
        arguments = {}
    shown = ", ".join(f"{key}={value[:60]!r}" if isinstance(value, str)
                      else f"{key}={repr(value)[:60]}"
                      for key, value in arguments.items() if key in _NOTED_ARGUMENTS)
    first = answer.split("\n", 1)[0][:160]
    return f"{call.name[:40]}({shown}) -> {first}"


# The arguments a note keeps: where a call looked, never the text of a finding.
_NOTED_ARGUMENTS = frozenset({"path", "start", "end", "query", "dir", "title", "start_line"})


def safe_path(raw: str) -> str | None:
    """A repository path, normalised; None for anything that could leave the repository."""
    if not raw or "\0" in raw or "\\" in raw:
        return None
    path = PurePosixPath(raw.strip())
    if path.is_absolute() or ".." in path.parts:
        return None
    text = str(path)
    return None if text in (".", "") else text.removeprefix("./")


def _error(message: str) -> str:
    return json.dumps({"error": message})


def _clip(text: str) -> str:
    if len(text) <= MAX_RESULT_CHARS:
        return text
    return text[:MAX_RESULT_CHARS] + f"\n... [cut at {MAX_RESULT_CHARS:,} characters]"
