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
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

from pi_tui.ai.stream import StreamEvent
from pi_tui.ai.types import AssistantMessage, Message, ToolResultMessage, dump_message, now_ms
from pi_tui.util.json_types import JsonObject, JsonValue
from pi_tui.util.record import Record

from .tool import ToolResult

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = [
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
    "RuntimeEvent",
    "ErrorEvent",
    "ExtensionWarning",
    "ExtensionError",
    "ExtensionErrorPayload",
    "AutoCompactionStart",
    "AutoCompactionEnd",
    "CompactionApplied",
    "CheckpointRestore",
    "SessionTreeMoved",
    "SessionSwitched",
    "dataclass_fields",
    "to_jsonable",
    "tool_result_json",
]


def dataclass_fields(value: DataclassInstance) -> dict[str, Any]:
    """A dataclass instance's fields by name, the values themselves (`dataclasses.asdict` copies them)."""
    # By name: the events' own fields, and tool details that may be any extension's dataclass.
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


def to_jsonable(value: object) -> JsonValue:
    """Best-effort conversion of tool details and similar payloads into JSON-ready values."""
    if isinstance(value, Record):
        return value.to_json_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: to_jsonable(field) for name, field in dataclass_fields(value).items()}
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def tool_result_json(result: ToolResult) -> JsonObject:
    """pi's ``AgentToolResult`` shape: ``{content, details}``; a result without details has no
    ``details`` key, as pi's JSON has none for an undefined one (never ``null``)."""
    out: JsonObject = {"content": [c.to_json_dict() for c in result.content]}
    if result.details is not None:
        out["details"] = to_jsonable(result.details)
    return out


@dataclass(frozen=True, slots=True)
class _AgentEvent:
    type: ClassVar[str] = ""

    def to_json(self) -> JsonObject:
        return {"type": self.type}


@dataclass(frozen=True, slots=True)
class AgentStart(_AgentEvent):
    """A run began (``prompt()`` or ``continue_()``)."""

    type: ClassVar[str] = "agent_start"


@dataclass(frozen=True, slots=True)
class AgentEnd(_AgentEvent):
    """A run finished. ``messages`` are the messages this run added to the history, in order."""

    type: ClassVar[str] = "agent_end"
    messages: tuple[Message, ...]

    def to_json(self) -> JsonObject:
        return {"type": self.type, "messages": [dump_message(m) for m in self.messages]}


@dataclass(frozen=True, slots=True)
class TurnStart(_AgentEvent):
    """One provider request (plus its tool calls) begins. ``turn_index`` is 0-based within the run."""

    type: ClassVar[str] = "turn_start"
    turn_index: int
    timestamp: int = dataclasses.field(default_factory=now_ms)

    def to_json(self) -> JsonObject:
        return {"type": self.type, "turnIndex": self.turn_index, "timestamp": self.timestamp}


@dataclass(frozen=True, slots=True)
class TurnEnd(_AgentEvent):
    """The assistant answered and every tool call of that answer has a result."""

    type: ClassVar[str] = "turn_end"
    turn_index: int
    message: AssistantMessage
    tool_results: tuple[ToolResultMessage, ...] = ()

    def to_json(self) -> JsonObject:
        return {
            "type": self.type,
            "turnIndex": self.turn_index,
            "message": dump_message(self.message),
            "toolResults": [dump_message(m) for m in self.tool_results],
        }


@dataclass(frozen=True, slots=True)
class _MessageEvent(_AgentEvent):
    """An event about one whole message: ``{type, message}`` on the wire."""

    message: Message

    def to_json(self) -> JsonObject:
        return {"type": self.type, "message": dump_message(self.message)}


@dataclass(frozen=True, slots=True)
class MessageStart(_MessageEvent):
    """A message begins: a streaming assistant message (partial), or any other message (complete)."""

    type: ClassVar[str] = "message_start"


@dataclass(frozen=True, slots=True)
class MessageUpdate(_AgentEvent):
    """A streaming delta of the assistant message; ``message`` is the partial message so far."""

    type: ClassVar[str] = "message_update"
    message: AssistantMessage
    assistant_message_event: StreamEvent

    def to_json(self) -> JsonObject:
        return {
            "type": self.type,
            "message": dump_message(self.message),
            "assistantMessageEvent": self.assistant_message_event.to_json(),
        }


@dataclass(frozen=True, slots=True)
class MessageEnd(_MessageEvent):
    """A message is final. Listeners are awaited in order: persistence happens here."""

    type: ClassVar[str] = "message_end"


@dataclass(frozen=True, slots=True)
class ToolExecutionStart(_AgentEvent):
    type: ClassVar[str] = "tool_execution_start"
    tool_call_id: str
    tool_name: str
    args: JsonObject

    def to_json(self) -> JsonObject:
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
    args: JsonObject
    partial_result: ToolResult

    def to_json(self) -> JsonObject:
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

    def to_json(self) -> JsonObject:
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

    def to_json(self) -> JsonObject:
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

    def to_json(self) -> JsonObject:
        out: JsonObject = {"type": self.type, "success": self.success, "attempt": self.attempt}
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


# --- the runtime's own events --------------------------------------------------------------------
# Compaction, tree moves, checkpoint restores, extension failures and session errors. They live here,
# below the runtime and the extensions, because both emit them through the session's listeners
# (`pi_tui.runtime.events` re-exports them). They are rare (a few per run), so ``data`` and ``to_json()``
# build their dicts on demand.


@dataclass(frozen=True, slots=True)
class RuntimeEvent:
    """Base of the runtime's events: ``type`` names the record on the wire."""

    type: ClassVar[str] = ""

    def payload(self) -> JsonObject:
        """The record's fields in pi's camelCase, without ``type``."""
        return {}

    @property
    def data(self) -> JsonObject:
        """The wire record without its ``type`` (a fresh dict each time)."""
        return self.payload()

    def to_json(self) -> JsonObject:
        """The wire record: ``{"type": ..., **payload}``."""
        return {"type": self.type, **self.payload()}


@dataclass(frozen=True, slots=True)
class _NoticeEvent(RuntimeEvent):
    """A runtime event that only carries a sentence for the user: ``{type, message}`` on the wire."""

    message: str

    def payload(self) -> JsonObject:
        return {"message": self.message}


@dataclass(frozen=True, slots=True)
class ErrorEvent(_NoticeEvent):
    """The session could not do something after a turn (save the session file, run a context hook)."""

    type: ClassVar[str] = "error"


@dataclass(frozen=True, slots=True)
class ExtensionWarning(_NoticeEvent):
    """A registration conflict or similar, raised once the session runs."""

    type: ClassVar[str] = "extension_warning"


class ExtensionErrorPayload(TypedDict):
    """An `ExtensionError` in its wire shape (``extension_error`` without ``type``), as the runner keeps
    its list of failures."""

    extensionPath: str
    extension: str
    event: str
    error: str


@dataclass(frozen=True, slots=True)
class ExtensionError(RuntimeEvent):
    """An extension's handler (or its loading) failed; ``event`` is the hook it failed in."""

    type: ClassVar[str] = "extension_error"
    extension_path: str
    extension: str
    event: str
    error: str

    def payload(self) -> JsonObject:
        return {
            "extensionPath": self.extension_path,
            "extension": self.extension,
            "event": self.event,
            "error": self.error,
        }

    @classmethod
    def from_payload(cls, payload: ExtensionErrorPayload) -> ExtensionError:
        """The event for a payload in the wire shape (how the runner keeps its error list)."""
        return cls(
            extension_path=str(payload["extensionPath"]),
            extension=str(payload["extension"]),
            event=str(payload["event"]),
            error=str(payload["error"]),
        )


@dataclass(frozen=True, slots=True)
class AutoCompactionStart(RuntimeEvent):
    """The session began compacting on its own; ``reason`` is ``threshold`` or ``overflow``."""

    type: ClassVar[str] = "auto_compaction_start"
    reason: str

    def payload(self) -> JsonObject:
        return {"reason": self.reason}


@dataclass(frozen=True, slots=True)
class AutoCompactionEnd(RuntimeEvent):
    """An automatic compaction ended: applied (``result``), cancelled (``aborted``) or failed
    (``error_message``). ``will_retry`` says the overflowing request is sent again."""

    type: ClassVar[str] = "auto_compaction_end"
    aborted: bool
    will_retry: bool
    result: JsonObject | None = None
    error_message: str | None = None

    def payload(self) -> JsonObject:
        out: JsonObject = {}
        if self.result is not None:
            out["result"] = self.result
        out["aborted"] = self.aborted
        out["willRetry"] = self.will_retry
        if self.error_message is not None:
            out["errorMessage"] = self.error_message
        return out


@dataclass(frozen=True, slots=True)
class CompactionApplied(RuntimeEvent):
    """A compaction entry was appended (manual or automatic); ``result`` is its JSON form."""

    type: ClassVar[str] = "compaction"
    entry_id: str | None
    reason: str
    from_extension: bool
    result: JsonObject

    def payload(self) -> JsonObject:
        return {
            "entryId": self.entry_id,
            "reason": self.reason,
            "fromExtension": self.from_extension,
            "result": self.result,
        }


@dataclass(frozen=True, slots=True)
class CheckpointRestore(RuntimeEvent):
    """Files were restored from a checkpoint; ``result`` is the restore's JSON form."""

    type: ClassVar[str] = "checkpoint_restore"
    result: JsonObject

    def payload(self) -> JsonObject:
        return dict(self.result)


@dataclass(frozen=True, slots=True)
class SessionTreeMoved(RuntimeEvent):
    """The session's leaf moved to another point of its tree."""

    type: ClassVar[str] = "session_tree"
    leaf_id: str | None

    def payload(self) -> JsonObject:
        return {"leafId": self.leaf_id}


@dataclass(frozen=True, slots=True)
class SessionSwitched(RuntimeEvent):
    """Another session file became the current one (new, resumed or forked)."""

    type: ClassVar[str] = "session_switch"
    session_id: str
    path: str

    def payload(self) -> JsonObject:
        return {"sessionId": self.session_id, "path": self.path}
