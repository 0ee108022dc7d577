"""The events an `Agent` emits, as small immutable dataclasses.

Every mode (TUI, print, json, rpc) consumes this one stream. ``to_json()`` gives pi's
``AgentSessionEvent`` JSON shape (camelCase keys, messages in their session-file form), which is
what ``--mode json`` prints one per line.

Order of one run (see `pi_tui.agent.loop`)::

    agent_start
      message_start/message_end        the prompt (and any turn-input messages)
      turn_start{turnIndex}
        message_start/update*/end      the assistant's answer
        tool_execution_start*          one per tool call, in source order
        tool_execution_update*/end*    while and when each tool finishes
        message_start/message_end*     the tool results, in source order
      turn_end{turnIndex, message, toolResults}
      ...                              more turns while the model calls tools
    agent_end{messages}
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from pi_tui.ai.stream import StreamEvent
from pi_tui.ai.types import AssistantMessage, ToolResultMessage, dump_message, now_ms
from pi_tui.util.record import Record

from .tool import ToolResult

__all__ = [
    "RuntimeEvent",
    "AgentEvent",
    "AgentStart",
    "AgentEnd",
    "TurnStart",
    "TurnEnd",
    "MessageStart",
    "MessageUpdate",
    "MessageEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "ToolExecutionEnd",
    "AutoRetryStart",
    "AutoRetryEnd",
    "to_jsonable",
    "tool_result_json",
]


def to_jsonable(value: Any) -> Any:
    """Best-effort conversion of tool details and similar payloads into JSON-ready values."""
    if isinstance(value, Record):
        return value.to_json_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def tool_result_json(result: ToolResult) -> dict[str, Any]:
    """pi's ``AgentToolResult`` shape: ``{content, details}``."""
    out: dict[str, Any] = {"content": [c.to_json_dict() for c in result.content]}
    out["details"] = to_jsonable(result.details)
    return out


@dataclass(frozen=True, slots=True)
class _AgentEvent:
    type: ClassVar[str] = ""

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type}


@dataclass(frozen=True, slots=True)
class AgentStart(_AgentEvent):
    """A run began (``prompt()`` or ``continue_()``)."""

    type: ClassVar[str] = "agent_start"


@dataclass(frozen=True, slots=True)
class AgentEnd(_AgentEvent):
    """A run finished. ``messages`` are the messages this run added to the history, in order."""

    type: ClassVar[str] = "agent_end"
    messages: tuple[Any, ...]

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "messages": [dump_message(m) for m in self.messages]}


@dataclass(frozen=True, slots=True)
class TurnStart(_AgentEvent):
    """One provider request (plus its tool calls) begins. ``turn_index`` is 0-based within the run."""

    type: ClassVar[str] = "turn_start"
    turn_index: int
    timestamp: int = dataclasses.field(default_factory=now_ms)

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "turnIndex": self.turn_index, "timestamp": self.timestamp}


@dataclass(frozen=True, slots=True)
class TurnEnd(_AgentEvent):
    """The assistant answered and every tool call of that answer has a result."""

    type: ClassVar[str] = "turn_end"
    turn_index: int
    message: AssistantMessage
    tool_results: tuple[ToolResultMessage, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "turnIndex": self.turn_index,
            "message": dump_message(self.message),
            "toolResults": [dump_message(m) for m in self.tool_results],
        }


@dataclass(frozen=True, slots=True)
class MessageStart(_AgentEvent):
    """A message begins: a streaming assistant message (partial), or any other message (complete)."""

    type: ClassVar[str] = "message_start"
    message: Any

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "message": dump_message(self.message)}


@dataclass(frozen=True, slots=True)
class MessageUpdate(_AgentEvent):
    """A streaming delta of the assistant message; ``message`` is the partial message so far."""

    type: ClassVar[str] = "message_update"
    message: AssistantMessage
    assistant_message_event: StreamEvent

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "message": dump_message(self.message),
            "assistantMessageEvent": self.assistant_message_event.to_json(),
        }


@dataclass(frozen=True, slots=True)
class MessageEnd(_AgentEvent):
    """A message is final. Listeners are awaited in order: persistence happens here."""

    type: ClassVar[str] = "message_end"
    message: Any

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "message": dump_message(self.message)}


@dataclass(frozen=True, slots=True)
class ToolExecutionStart(_AgentEvent):
    type: ClassVar[str] = "tool_execution_start"
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "toolCallId": self.tool_call_id,
            "toolName": self.tool_name,
            "args": to_jsonable(self.args),
        }


@dataclass(frozen=True, slots=True)
class ToolExecutionUpdate(_AgentEvent):
    """Streaming tool output; ``partial_result`` is the accumulated result so far, not a delta."""

    type: ClassVar[str] = "tool_execution_update"
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    partial_result: ToolResult

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "toolCallId": self.tool_call_id,
            "toolName": self.tool_name,
            "args": to_jsonable(self.args),
            "partialResult": tool_result_json(self.partial_result),
        }


@dataclass(frozen=True, slots=True)
class ToolExecutionEnd(_AgentEvent):
    type: ClassVar[str] = "tool_execution_end"
    tool_call_id: str
    tool_name: str
    result: ToolResult
    is_error: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "toolCallId": self.tool_call_id,
            "toolName": self.tool_name,
            "result": tool_result_json(self.result),
            "isError": self.is_error,
        }


@dataclass(frozen=True, slots=True)
class AutoRetryStart(_AgentEvent):
    """A transient provider error will be retried after ``delay_ms``."""

    type: ClassVar[str] = "auto_retry_start"
    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "attempt": self.attempt,
            "maxAttempts": self.max_attempts,
            "delayMs": self.delay_ms,
            "errorMessage": self.error_message,
        }


@dataclass(frozen=True, slots=True)
class AutoRetryEnd(_AgentEvent):
    """The retry chain ended: a later attempt succeeded, the budget ran out, or it was cancelled."""

    type: ClassVar[str] = "auto_retry_end"
    success: bool
    attempt: int
    final_error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "success": self.success, "attempt": self.attempt}
        if self.final_error is not None:
            out["finalError"] = self.final_error
        return out


AgentEvent = (
    AgentStart
    | AgentEnd
    | TurnStart
    | TurnEnd
    | MessageStart
    | MessageUpdate
    | MessageEnd
    | ToolExecutionStart
    | ToolExecutionUpdate
    | ToolExecutionEnd
    | AutoRetryStart
    | AutoRetryEnd
)


@dataclass(frozen=True, slots=True)
class RuntimeEvent:
    """Events of the runtime itself, beside the agent's (compaction, tree moves, extension errors, …):
    ``type`` plus a JSON-ready payload. Defined here, below the runtime and the extensions, because both
    emit them through the session's listeners (`pi_tui.runtime.events` re-exports it)."""

    type: str
    data: dict[str, Any] = dataclasses.field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, **self.data}
