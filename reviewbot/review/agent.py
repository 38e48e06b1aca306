"""Step 7: the review agent, for the units where the rules see risk (`review/route.py`). One
conversation per unit (or a few related units of one file).

With tools (`tools` mode) the model reads more code, searches, and records findings through
`record_finding`; `finish` ends the conversation. Each finding is checked against the change
when it is recorded (verify.check), and the tool's answer says whether it was kept and, if
not, why: the model hears it on the turn it takes anyway, with no round of its own. The
history does not grow with the turns: every request is the prompt, one line for each call
of the earlier turns, and the last turn whole (on a 9-line function, re-sending the whole
conversation took a request from 446 prompt tokens to 5,247 in six turns). Tool calls a
model writes as text in the common shapes are recovered (`model/text_calls.py`) and
validated like any other. A server that cannot do tool calls (a 400 naming tools) gets
`structured` mode instead: one answer per unit in the same finding schema, checked the same
way; a model whose first answer calls no tool gets a structured answer for that unit only.
Every conversation is bounded in turns, tool calls, tokens and time (`[limits] unit_*`);
hitting a bound ends it with what was recorded, and the reason is kept.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from reviewbot.config import Limits
from reviewbot.diff.lines import DiffIndex
from reviewbot.model.messages import ChatMessage, ChatReply, ToolCall, system, user
from reviewbot.model.replies import clipped_list, clipped_text, shown_bound
from reviewbot.model.session import ModelSession, ModelUnavailable
from reviewbot.model.text_calls import recover
from reviewbot.progress.events import Events
from reviewbot.review.prompts import STRUCTURED, SYSTEM
from reviewbot.review.replies import FindingArgs
from reviewbot.review.tools import MAX_FINDINGS, TOOL_NAMES, TOOLS, Toolbox, call_note
from reviewbot.review.verify import ReadText, Verdict, check
from reviewbot.schema.reviews import RecordedFinding, Rejection, ReviewMode, UnitReview


@dataclass(frozen=True)
class Bounds:
    """One conversation's bounds (from `[limits]`: unit_turns, unit_tool_calls, unit_tokens,
    unit_seconds)."""

    max_turns: int = 4
    max_tool_calls: int = 24
    max_tokens: int = 40_000
    max_seconds: float = 90.0

    @classmethod
    def from_limits(cls, limits: Limits) -> Bounds:
        return cls(max_turns=limits.unit_turns, max_tool_calls=limits.unit_tool_calls,
                   max_tokens=limits.unit_tokens, max_seconds=limits.unit_seconds)


class ReviewReply(BaseModel):
    """The structured-mode answer: the same findings `record_finding` takes."""

    model_config = ConfigDict(extra="forbid")

    findings: Annotated[list[FindingArgs], BeforeValidator(clipped_list(MAX_FINDINGS)),
                        shown_bound(maxItems=MAX_FINDINGS)] = Field(default_factory=list)
    summary: Annotated[str, BeforeValidator(clipped_text(2000)),
                       shown_bound(maxLength=2000)] = ""


class ToolsUnsupported(Exception):
    """The server refused tool definitions (a 400 that names them)."""


@dataclass
class Conversation:
    session: ModelSession
    unit_ids: tuple[str, ...]
    file_path: str
    toolbox: Toolbox
    index: DiffIndex
    read: ReadText
    events: Events
    bounds: Bounds = field(default_factory=Bounds)
    turns: int = 0
    tool_calls: int = 0
    text_calls: int = 0
    accepted: list[RecordedFinding] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    _started: float = field(default_factory=time.monotonic)
    _tokens_before: int = 0

    def __post_init__(self) -> None:
        self._tokens_before = self.session.ledger.tokens_for(self.unit_ids[0])

    def with_tools(self, prompt: str) -> UnitReview:
        self.toolbox.verify = self._check_recorded
        stop = self._tool_loop(prompt)
        return self._result("tools", stop)

    def structured(self, prompt: str) -> UnitReview:
        """One answer in the finding schema; what fails the checks is dropped (no round)."""
        messages = [system(f"{SYSTEM}\n\n{STRUCTURED}"), user(prompt)]
        stop = "finished"
        if (bound := self._bound()) is not None:
            return self._result("structured", bound)
        try:
            answer = self.session.ask("review", messages, ReviewReply, self.unit_ids[0])
        except ModelUnavailable as exc:
            return self._result("structured", f"model_unavailable: {exc.reason}")
        self.turns += 1
        self.toolbox.summary = answer.summary
        self._verify([finding.recorded() for finding in answer.findings])
        return self._result("structured", stop)

    def _tool_loop(self, prompt: str) -> str:
        earlier: list[str] = []  # a line for each call of the turns before the last
        last: list[ChatMessage] = []  # the last turn: the model's calls and their answers
        while True:
            stop = self._bound()
            if stop:
                return stop
            messages = [system(SYSTEM), user(_with_memory(prompt, earlier)), *last]
            try:
                reply = self.session.chat("review", messages, tools=TOOLS,
                                          unit_id=self.unit_ids[0])
            except ModelUnavailable as exc:
                if exc.status == 400 and "tool" in str(exc).lower():
                    raise ToolsUnsupported(str(exc)) from None
                return f"model_unavailable: {exc.reason}"
            self.turns += 1
            calls = self._calls(reply)
            if not calls:
                return "no_tool_calls"
            answers = self._run_calls(calls)
            earlier += [call_note(call, answer)
                        for call, answer in zip(_calls_of(last), _answers_of(last),
                                                strict=True)]
            last = [ChatMessage(role="assistant", content=reply.content or None,
                                tool_calls=calls[:len(answers)]), *answers]
            if len(answers) < len(calls):
                return "tool_call_limit"
            if self.toolbox.finished:
                return "finished"

    def _calls(self, reply: ChatReply) -> tuple[ToolCall, ...]:
        """The reply's tool calls; or the ones it wrote as text (`<tools>{...}</tools>`, a
        fenced block), recovered and then validated by each tool like any call."""
        if reply.tool_calls or not reply.content:
            return reply.tool_calls
        calls = recover(reply.content, TOOL_NAMES)
        self.text_calls += len(calls)
        return calls

    def _run_calls(self, calls: Sequence[ToolCall]) -> list[ChatMessage]:
        """The answers to the calls, up to the conversation's bound on tool calls."""
        answers = []
        for call in calls:
            if self.tool_calls >= self.bounds.max_tool_calls:
                break
            self.tool_calls += 1
            answers.append(ChatMessage(role="tool", tool_call_id=call.id,
                                       content=self.toolbox.run(call)))
        return answers

    def _bound(self) -> str | None:
        if self.turns >= self.bounds.max_turns:
            return "turn_limit"
        if self._spent() >= self.bounds.max_tokens:
            return "token_limit"
        if time.monotonic() - self._started >= self.bounds.max_seconds:
            return "deadline"
        return None

    def _verify(self, findings: Sequence[RecordedFinding]) -> list[Verdict]:
        """Check findings; the ones that fail are rejected."""
        verdicts = [check(f, self.index, self.read) for f in findings]
        self.accepted += [v.finding for v in verdicts if v.ok]
        failed = [v for v in verdicts if not v.ok]
        self.rejected += [Rejection(finding=v.finding, reason=v.reason, round=self.turns)
                          for v in failed]
        return failed

    def _check_recorded(self, finding: RecordedFinding) -> str | None:
        """`record_finding`'s check: None when the finding is kept, else why not."""
        failed = self._verify([finding])
        if failed:
            self.events.emit("verification_feedback",
                             f"a finding was not kept ({failed[0].reason[:80]})",
                             unit_ids=list(self.unit_ids), rejected=1, round=self.turns)
        return failed[0].reason if failed else None

    def _spent(self) -> int:
        """This conversation's tokens, as the ledger recorded every request it made
        (structured answers and retries included)."""
        return self.session.ledger.tokens_for(self.unit_ids[0]) - self._tokens_before

    def _result(self, mode: ReviewMode, stop: str) -> UnitReview:
        return UnitReview(
            unit_ids=self.unit_ids, file_path=self.file_path, mode=mode, turns=self.turns,
            tool_calls=self.tool_calls, tokens=self._spent(), recorded=tuple(self.accepted),
            rejected=tuple(self.rejected), verification_rounds=0, stop_reason=stop,
            summary=self.toolbox.summary, text_tool_calls=self.text_calls)


def _with_memory(prompt: str, earlier: Sequence[str]) -> str:
    if not earlier:
        return prompt
    return (f"{prompt}\n\nYour earlier tool calls (their answers are not repeated):\n"
            + "\n".join(f"- {line}" for line in earlier))


def _calls_of(turn: Sequence[ChatMessage]) -> list[ToolCall]:
    return [call for message in turn[:1] for call in message.tool_calls][:len(turn) - 1]


def _answers_of(turn: Sequence[ChatMessage]) -> list[str]:
    return [message.content or "" for message in turn[1:]]
