"""Step 7: the review agent. One conversation per unit (or a few related units of one file).

With tools (`tools` mode) the model reads more code, searches, and records findings through
`record_finding`; `finish` ends the conversation. The findings are checked at once against
the change (verify.check) and what fails goes back with the reason, at most MAX_ROUNDS
times. Tool calls a model writes as text in the common shapes are recovered
(`model/text_calls.py`) and validated like any other. A server that cannot do tool calls
(a 400 naming tools) gets `structured` mode instead: one answer per unit in the same finding
schema, checked the same way; a model that answers without calling a tool gets a structured
answer for that unit only. Every conversation is bounded in turns, tool calls, tokens and
time (`[limits] unit_*`); hitting a bound ends it with what was recorded, and the reason is
kept.
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
from reviewbot.review.prompts import CUT, NUDGE, STRUCTURED, SYSTEM
from reviewbot.review.replies import FindingArgs
from reviewbot.review.tools import MAX_FINDINGS, TOOL_NAMES, TOOLS, Toolbox
from reviewbot.review.verify import MAX_ROUNDS, ReadText, Verdict, check, feedback
from reviewbot.run.events import Events
from reviewbot.schema import (
    RecordedFinding,
    Rejection,
    ReviewMode,
    UnitReview,
)


@dataclass(frozen=True)
class Bounds:
    """One conversation's bounds (from `[limits]`: unit_turns, unit_tool_calls, unit_tokens,
    unit_seconds)."""

    max_turns: int = 8
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
    rounds: int = 0
    accepted: list[RecordedFinding] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    _checked: int = 0
    _started: float = field(default_factory=time.monotonic)
    _tokens_before: int = 0

    def __post_init__(self) -> None:
        self._tokens_before = self.session.ledger.tokens_for(self.unit_ids[0])

    def with_tools(self, prompt: str) -> UnitReview:
        messages = [system(SYSTEM), user(prompt)]
        stop = self._tool_loop(messages)
        self._verify_rest()
        return self._result("tools", stop)

    def structured(self, prompt: str) -> UnitReview:
        messages = [system(f"{SYSTEM}\n\n{STRUCTURED}"), user(prompt)]
        stop = "finished"
        previous: str | None = None
        while True:
            if (bound := self._bound()) is not None:
                stop = bound
                break
            try:
                answer = self.session.ask("review", messages, ReviewReply, self.unit_ids[0])
            except ModelUnavailable as exc:
                stop = f"model_unavailable: {exc.reason}"
                break
            self.turns += 1
            self.toolbox.summary = answer.summary
            failed = self._verify([finding.recorded() for finding in answer.findings])
            said = answer.model_dump_json()
            if not failed or self.rounds >= MAX_ROUNDS:
                break
            if said == previous:  # the same answer again: another round cannot change it
                stop = "repeated_answer"
                break
            previous = said
            messages += [ChatMessage(role="assistant", content=said),
                         user(self._feedback(failed) + " Answer again in the same JSON form, "
                                                       "with the corrected findings only.")]
        return self._result("structured", stop)

    def _tool_loop(self, messages: list[ChatMessage]) -> str:
        nudged = False
        while True:
            stop = self._bound()
            if stop:
                return stop
            try:
                reply = self.session.chat("review", messages, tools=TOOLS,
                                          unit_id=self.unit_ids[0])
            except ModelUnavailable as exc:
                if exc.status == 400 and "tool" in str(exc).lower():
                    raise ToolsUnsupported(str(exc)) from None
                return f"model_unavailable: {exc.reason}"
            self.turns += 1
            calls = self._calls(reply)
            messages.append(ChatMessage(role="assistant", content=reply.content or None,
                                        tool_calls=calls))
            if not calls:
                if nudged:
                    return "no_tool_calls"
                nudged = True
                messages.append(user(CUT if reply.finish_reason == "length" else NUDGE))
                continue
            if not self._run_calls(calls, messages):
                return "tool_call_limit"
            if self.toolbox.finished:
                failed = self._verify(self.toolbox.findings[self._checked:])
                self._checked = len(self.toolbox.findings)
                if not failed or self.rounds >= MAX_ROUNDS:
                    return "finished"
                self.toolbox.finished = False
                messages.append(user(self._feedback(failed)))

    def _calls(self, reply: ChatReply) -> tuple[ToolCall, ...]:
        """The reply's tool calls; or the ones it wrote as text (`<tools>{...}</tools>`, a
        fenced block), recovered and then validated by each tool like any call."""
        if reply.tool_calls or not reply.content:
            return reply.tool_calls
        calls = recover(reply.content, TOOL_NAMES)
        self.text_calls += len(calls)
        return calls

    def _run_calls(self, calls: Sequence[ToolCall], messages: list[ChatMessage]) -> bool:
        for call in calls:
            if self.tool_calls >= self.bounds.max_tool_calls:
                return False
            self.tool_calls += 1
            messages.append(ChatMessage(role="tool", tool_call_id=call.id,
                                        content=self.toolbox.run(call)))
        return True

    def _bound(self) -> str | None:
        if self.turns >= self.bounds.max_turns:
            return "turn_limit"
        if self._spent() >= self.bounds.max_tokens:
            return "token_limit"
        if time.monotonic() - self._started >= self.bounds.max_seconds:
            return "deadline"
        return None

    def _verify(self, findings: Sequence[RecordedFinding]) -> list[Verdict]:
        """Check findings; the ones that fail are rejected (as recorded: a corrected finding
        the model records after feedback is a new one)."""
        verdicts = [check(f, self.index, self.read) for f in findings]
        self.accepted += [v.finding for v in verdicts if v.ok]
        failed = [v for v in verdicts if not v.ok]
        self.rejected += [Rejection(finding=v.finding, reason=v.reason, round=self.rounds + 1)
                          for v in failed]
        return failed

    def _verify_rest(self) -> None:
        """Findings recorded before a bound ended the conversation: checked, no feedback."""
        self._verify(self.toolbox.findings[self._checked:])
        self._checked = len(self.toolbox.findings)

    def _feedback(self, failed: list[Verdict]) -> str:
        self.rounds += 1
        self.events.emit("verification_feedback",
                         f"{len(failed)} findings sent back to the model (round {self.rounds})",
                         unit_ids=list(self.unit_ids), rejected=len(failed), round=self.rounds)
        return feedback(failed, self.rounds)

    def _spent(self) -> int:
        """This conversation's tokens, as the ledger recorded every request it made
        (structured answers and retries included)."""
        return self.session.ledger.tokens_for(self.unit_ids[0]) - self._tokens_before

    def _result(self, mode: ReviewMode, stop: str) -> UnitReview:
        return UnitReview(
            unit_ids=self.unit_ids, file_path=self.file_path, mode=mode, turns=self.turns,
            tool_calls=self.tool_calls, tokens=self._spent(), recorded=tuple(self.accepted),
            rejected=tuple(self.rejected), verification_rounds=self.rounds, stop_reason=stop,
            summary=self.toolbox.summary, text_tool_calls=self.text_calls)
