"""What the full-screen app leaves in the terminal when it quits: the conversation as plain lines.

The app draws on the terminal's alternate screen, which is gone once it quits. pi's full-screen mode then
prints the conversation to the normal screen (its ``fullscreenExitOutput`` setting, ``transcript`` by
default; ``resume-hint`` prints only the line that says how to resume), and its regular mode leaves it
in the scrollback anyway: either way a pi user finds the conversation above the prompt after quitting.
This module writes that text. It imports nothing of Textual: it runs after the app has left.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from pi_tui.ai.types import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    Message,
    ToolResultMessage,
    UserMessage,
    message_text,
)
from pi_tui.modes.plain.render import tool_summary

__all__ = ["MAX_MESSAGES", "transcript"]

MAX_MESSAGES = 200
"""At most this many of the last messages are written: a long session's whole history would take the
terminal seconds to scroll through, and the session file keeps all of it."""

_BOLD, _DIM, _ITALIC, _RED, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[3m", "\x1b[31m", "\x1b[0m"

_Style = Callable[[str, str], str]
"""Wraps a text in ANSI codes (or not, for plain output)."""


def transcript(messages: Sequence[Message], *, color: bool, hide_thinking: bool = False) -> str:
    """The conversation as text for the normal screen, one blank line between blocks; empty for none.

    Args:
        messages: The session's messages, oldest first.
        color: Style with ANSI codes (the output is a terminal) or write plain text.
        hide_thinking: Leave thinking out, as the chat did (Ctrl+T, ``hideThinkingBlock``).
    """

    def style(text: str, codes: str) -> str:
        return f"{codes}{text}{_RESET}" if color and text else text

    shown = list(messages[-MAX_MESSAGES:])
    failed = {m.tool_call_id for m in shown if isinstance(m, ToolResultMessage) and m.is_error}
    # a call with no result never finished (the run was stopped while it ran or waited): failed too
    answered = {m.tool_call_id for m in shown if isinstance(m, ToolResultMessage)}
    failed |= {
        part.id
        for m in shown
        if isinstance(m, AssistantMessage)
        for part in m.content
        if part.type == "toolCall" and part.id not in answered
    }
    blocks: list[str] = []
    if len(messages) > len(shown):
        blocks.append(style(f"… {len(messages) - len(shown)} earlier messages", _DIM))
    for message in shown:
        blocks.extend(_blocks(message, failed, style, hide_thinking))
    text = "\n\n".join(block.rstrip("\n") for block in blocks if block.strip())
    return text + "\n" if text else ""


def _blocks(
    message: Message,
    failed: set[str],
    style: _Style,
    hide_thinking: bool,
) -> Iterable[str]:
    if isinstance(message, UserMessage):
        yield style(message_text(message), _BOLD)
    elif isinstance(message, AssistantMessage):
        for part in message.content:
            if part.type == "text":
                yield part.text.strip("\n")
            elif part.type == "thinking" and not hide_thinking:
                yield style(part.thinking.strip("\n"), _DIM + _ITALIC)
            elif part.type == "toolCall":
                mark = style("✗", _RED) if part.id in failed else "✓"
                yield f"{mark} {style(tool_summary(part.name, dict(part.arguments or {})), _BOLD)}"
        if message.stop_reason == "aborted":
            yield style("Operation aborted", _DIM)
        elif message.stop_reason == "error":
            yield style(f"Error: {message.error_message or 'unknown error'}", _RED)
    elif isinstance(message, BashExecutionMessage):
        yield style(f"$ {message.command}", _BOLD) + (
            "\n" + message.output.rstrip("\n") if message.output else ""
        )
    elif isinstance(message, CompactionSummaryMessage):
        yield style(f"[compaction] {message.tokens_before:,} tokens summarised", _DIM)
    elif isinstance(message, BranchSummaryMessage):
        yield style("[branch] summary of the branch left", _DIM)
    elif isinstance(message, CustomMessage) and message.display:
        yield message_text(message)
