"""Runtime and agent events → pi 0.87.1's event records (RPC and ``--mode json`` share them; the order
is `pi_tui.modes.json_events.JsonEventStream`'s).

Beside the events' own ``to_json()``: ``message_update`` is delta-only (``assistantMessageEvent`` without
``partial``, no cumulative ``message``, the latest ``usage`` beside it), the streaming assistant's
``message_start`` says ``stopReason: "pending"``, ``agent_end`` carries ``willRetry``, and compaction
events are ``compaction_start`` / ``compaction_end`` with their ``reason``.
"""

from __future__ import annotations

from typing import Any

from pi_tui.agent.events import (
    AgentEnd,
    AgentEvent,
    AutoCompactionEnd,
    AutoCompactionStart,
    CompactionApplied,
    MessageStart,
    MessageUpdate,
    RuntimeEvent,
)
from pi_tui.ai.stream import (
    Done,
    Error,
    StreamEvent,
    StreamStart,
    TextDelta,
    TextEnd,
    TextStart,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingStart,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from pi_tui.ai.types import AssistantMessage, ToolCall, dump_message

__all__ = ["EventMapper"]

# The message_start / message_end records carry these; pi 0.87 does not repeat them as updates.
_SKIPPED_UPDATES = frozenset({"start", "done", "error"})


def _delta_json(event: StreamEvent) -> dict[str, Any]:
    """The stream event without its partial message (serialising that on every delta is quadratic)."""
    out: dict[str, Any] = {"type": event.type}
    match event:
        case TextStart() | ThinkingStart():
            out["contentIndex"] = event.content_index
        case TextDelta() | ThinkingDelta() | ToolCallDelta():
            out["contentIndex"] = event.content_index
            out["delta"] = event.delta
        case TextEnd() | ThinkingEnd():
            out["contentIndex"] = event.content_index
            out["content"] = event.content
        case ToolCallStart():  # 0.84.3: the call's id and tool name come with its start
            out["contentIndex"] = event.content_index
            content = event.partial.content
            block = content[event.content_index] if event.content_index < len(content) else None
            if isinstance(block, ToolCall):
                out["id"] = block.id
                out["toolName"] = block.name
        case ToolCallEnd():
            out["contentIndex"] = event.content_index
            out["toolCall"] = event.tool_call.to_json_dict()
        case Done():
            out["reason"] = event.reason
            out["message"] = event.message.to_json_dict()
        case Error():
            out["reason"] = event.reason
            out["error"] = event.error.to_json_dict()
        case StreamStart():
            pass
    return out


class EventMapper:
    """Stateful (compaction reasons pair start and end) event-to-record conversion."""

    def __init__(self) -> None:
        self._compaction_reason = "threshold"

    def to_record(self, event: AgentEvent | RuntimeEvent) -> dict[str, Any] | None:
        """The record for ``event``, or None when it has no place in the RPC stream."""
        if isinstance(event, MessageUpdate):
            ame = event.assistant_message_event
            if ame.type in _SKIPPED_UPDATES:
                return None
            return {
                "type": "message_update",
                "usage": event.message.usage.to_json_dict(),
                "assistantMessageEvent": _delta_json(ame),
            }
        if isinstance(event, MessageStart) and isinstance(event.message, AssistantMessage):
            message = dump_message(event.message)
            if event.message.stop_reason not in ("aborted", "error"):
                message["stopReason"] = "pending"
            return {"type": "message_start", "message": message}
        if isinstance(event, AgentEnd):
            return {**event.to_json(), "willRetry": False}
        match event:
            case CompactionApplied():  # runtime bookkeeping: ``compaction_end`` already reports it
                return None
            case AutoCompactionStart():
                self._compaction_reason = event.reason or "threshold"
                return {"type": "compaction_start", "reason": self._compaction_reason}
            case AutoCompactionEnd():
                return {"type": "compaction_end", "reason": self._compaction_reason, **event.payload()}
        return event.to_json()
