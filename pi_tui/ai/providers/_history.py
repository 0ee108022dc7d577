"""Making a stored history safe to replay to a given model.

Both APIs reject a tool call without its result (or a result without its call), signatures that another
model issued, and tool-call ids outside ``[a-zA-Z0-9_-]``. pi stores whatever happened, including failed
and aborted turns, so every provider runs `prepare_messages` before converting the history.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from ..types import (
    AssistantMessage,
    LlmMessage,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
)

__all__ = ["prepare_messages", "sanitize_tool_call_id"]

_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


def sanitize_tool_call_id(call_id: str, max_len: int = 64) -> str:
    """Map any id to ``[a-zA-Z0-9_-]{1,max_len}``, deterministically (ids must match across turns).

    Over-long ids keep a prefix plus a hash of the whole id, so two ids that share a long prefix stay
    distinct.
    """
    clean = _ID_CHARS.sub("_", call_id) or "call"
    if len(clean) <= max_len:
        return clean
    digest = hashlib.sha1(call_id.encode()).hexdigest()[:12]
    return f"{clean[: max_len - 13]}_{digest}"


def _same_model(message: AssistantMessage, model: Model) -> bool:
    return message.provider == model.provider and message.api == model.api and message.model == model.id


def prepare_messages(
    messages: list[LlmMessage], model: Model, boundary: int | None
) -> tuple[list[LlmMessage], int]:
    """Make a history replayable to ``model``; returns the new list and the cache boundary mapped onto it.

    - Failed turns (``stop_reason`` error/aborted) are dropped: their partial content confuses the API.
    - Thinking from another model becomes plain text (its signature would be rejected); redacted thinking
      from another model is dropped.
    - Every tool call gets a result before the next assistant/user turn ("No result provided", error);
      tool results with no matching call are dropped. Both APIs reject either mismatch.
    """
    end = len(messages) if boundary is None else max(0, min(boundary, len(messages)))
    out: list[LlmMessage] = []
    mapped_boundary = 0
    pending: dict[str, str] = {}  # tool call id -> tool name, awaiting results
    answered: set[str] = set()

    def close_pending() -> None:
        for call_id, name in pending.items():
            if call_id not in answered:
                out.append(
                    ToolResultMessage(
                        tool_call_id=call_id,
                        tool_name=name,
                        content=[TextContent(text="No result provided")],
                        is_error=True,
                    )
                )
        pending.clear()
        answered.clear()

    for i, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            if message.stop_reason in ("error", "aborted"):
                pass
            else:
                close_pending()
                converted = _convert_assistant(message, model)
                out.append(converted)
                pending.update({c.id: c.name for c in converted.tool_calls()})
        elif isinstance(message, ToolResultMessage):
            if message.tool_call_id in pending and message.tool_call_id not in answered:
                answered.add(message.tool_call_id)
                out.append(message)
        else:
            close_pending()
            out.append(message)
        if i + 1 == end:
            mapped_boundary = len(out)
    if pending and end == len(messages):
        # A trailing tool call without results only happens in a broken history; keep the API happy.
        close_pending()
        mapped_boundary = len(out)
    else:
        close_pending()
    return out, mapped_boundary


def _convert_assistant(message: AssistantMessage, model: Model) -> AssistantMessage:
    if _same_model(message, model):
        return message
    content: list[Any] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            if block.redacted or not block.thinking.strip():
                continue
            content.append(TextContent(text=block.thinking))
        elif isinstance(block, TextContent):
            content.append(TextContent(text=block.text))
        elif isinstance(block, ToolCall):
            content.append(ToolCall(id=block.id, name=block.name, arguments=block.arguments))
        else:
            content.append(block)
    return message.model_copy(update={"content": content})
