"""The conversation as plain text (pi's ``serializeConversation``).

Used by compaction and branch summaries (serialising, instead of replaying the messages, keeps a standalone
summariser from treating the conversation as one to continue) and by frozen history panels. Lines:
``[User]: …``, ``[Assistant thinking]: …``, ``[Assistant]: …``, ``[Assistant tool calls]: name(k=json, …); …``
and ``[Tool result]: …``, separated by blank lines. For summaries, tool results are cut at
`TOOL_RESULT_MAX_CHARS` (the summary needs what happened, not every byte of output); pass
``max_tool_result_chars=None`` to keep them whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from pi_tui.ai.types import (
    AssistantMessage,
    CustomMessage,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

from .convert import convert_to_llm

__all__ = [
    "TOOL_RESULT_MAX_CHARS",
    "truncate_for_summary",
    "serialize_parts",
    "message_parts",
    "part_count",
    "serialize_conversation",
    "serialize_messages",
    "describe_message",
]

TOOL_RESULT_MAX_CHARS = 2000


def truncate_for_summary(text: str, max_chars: int = TOOL_RESULT_MAX_CHARS) -> str:
    """``text`` cut to ``max_chars`` plus a marker saying how much was dropped."""
    if len(text) <= max_chars:
        return text
    return f"{text[:max_chars]}\n\n[... {len(text) - max_chars} more characters truncated]"


def _text_blocks(content: str | Sequence[object]) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.text for block in content if isinstance(block, TextContent))


def _tool_call_text(call: ToolCall) -> str:
    args = ", ".join(
        f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in call.arguments.items()
    )
    return f"{call.name}({args})"


def _lines(message: Message, max_tool_result_chars: int | None = TOOL_RESULT_MAX_CHARS) -> list[str]:
    if isinstance(message, AssistantMessage):
        texts = [b.text for b in message.content if isinstance(b, TextContent)]
        thoughts = [b.thinking for b in message.content if isinstance(b, ThinkingContent)]
        calls = [_tool_call_text(b) for b in message.content if isinstance(b, ToolCall)]
        out = []
        if thoughts:
            out.append("[Assistant thinking]: " + "\n".join(thoughts))
        if texts:
            out.append("[Assistant]: " + "\n".join(texts))
        if calls:
            out.append("[Assistant tool calls]: " + "; ".join(calls))
        return out
    if isinstance(message, ToolResultMessage):
        text = _text_blocks(message.content)
        if max_tool_result_chars is not None:
            text = truncate_for_summary(text, max_tool_result_chars)
        return [f"[Tool result]: {text}"] if text else []
    text = _text_blocks(message.content if isinstance(message, UserMessage | CustomMessage) else "")
    return [f"[User]: {text}"] if text else []


def message_parts(message: Message, max_tool_result_chars: int | None = TOOL_RESULT_MAX_CHARS) -> list[str]:
    """The serialised lines of one provider message (what `serialize_parts` makes of it)."""
    return _lines(message, max_tool_result_chars)


def part_count(message: Message) -> int:
    """How many lines `message_parts` makes of one provider message, without making them."""
    if isinstance(message, AssistantMessage):
        content = message.content
        return (
            any(isinstance(b, ThinkingContent) for b in content)
            + any(isinstance(b, TextContent) for b in content)
            + any(isinstance(b, ToolCall) for b in content)
        )
    if isinstance(message, ToolResultMessage):
        return 1 if _text_blocks(message.content) else 0
    return (
        1 if _text_blocks(message.content if isinstance(message, UserMessage | CustomMessage) else "") else 0
    )


def serialize_parts(
    llm_messages: Iterable[Message], max_tool_result_chars: int | None = TOOL_RESULT_MAX_CHARS
) -> list[str]:
    """The serialised lines of each provider message, oldest first (joined by blank lines they are the text)."""
    parts: list[str] = []
    for message in llm_messages:
        parts.extend(_lines(message, max_tool_result_chars))
    return parts


def serialize_conversation(
    llm_messages: Iterable[Message], max_tool_result_chars: int | None = TOOL_RESULT_MAX_CHARS
) -> str:
    """Provider messages (user/assistant/toolResult, after `convert_to_llm`) as text."""
    return "\n\n".join(serialize_parts(llm_messages, max_tool_result_chars))


def serialize_messages(
    messages: Sequence[Message], max_tool_result_chars: int | None = TOOL_RESULT_MAX_CHARS
) -> str:
    """History messages of any role (custom, bash and summaries become user text first)."""
    return serialize_conversation(convert_to_llm(list(messages)), max_tool_result_chars)


def describe_message(message: Message, limit: int = 160) -> str:
    """One short line naming a history message, for instructions that must point at it."""
    converted = convert_to_llm([message])
    lines = _lines(converted[0]) if converted else []
    text = " ".join(" ".join(lines).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
