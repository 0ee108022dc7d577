"""What the full-screen app leaves in the terminal when it quits: the conversation as plain lines.

The app draws on the terminal's alternate screen, which is gone once it quits. pi's full-screen mode then
prints the conversation to the normal screen (its ``fullscreenExitOutput`` setting, ``transcript`` by
default; ``resume-hint`` prints only the line that says how to resume), and its regular mode leaves it
in the scrollback anyway: either way a pi user finds the conversation above the prompt after quitting.
This module writes that text. It imports nothing of Textual: it runs after the app has left.

As pi's, the text is wrapped between words at the terminal's width (a terminal left to wrap a long line
itself cuts words in two, and a copied paragraph keeps the breaks), and thinking the chat hid is one
"Thinking..." line where it was.
"""

from __future__ import annotations

import re
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
from pi_tui.modes.interactive.error_text import shown_error
from pi_tui.modes.plain.render import tool_summary

__all__ = ["MAX_MESSAGES", "transcript"]

MAX_MESSAGES = 200
"""At most this many of the last messages are written: a long session's whole history would take the
terminal seconds to scroll through, and the session file keeps all of it."""

_BOLD, _DIM, _ITALIC, _RED, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[3m", "\x1b[31m", "\x1b[0m"

_Style = Callable[[str, str], str]
"""Wraps a text in ANSI codes (or not, for plain output)."""


def transcript(
    messages: Sequence[Message],
    *,
    color: bool,
    hide_thinking: bool = False,
    thinking_label: str = "Thinking...",
    width: int | None = None,
) -> str:
    """The conversation as text for the normal screen, one blank line between blocks; empty for none.

    Args:
        messages: The session's messages, oldest first.
        color: Style with ANSI codes (the output is a terminal) or write plain text.
        hide_thinking: Show each thinking block as ``thinking_label`` alone, as the chat did (Ctrl+T,
            ``hideThinkingBlock``).
        thinking_label: The line hidden thinking shows (pi's "Thinking...", or an extension's label).
        width: The terminal's width in columns: lines are wrapped between words to fit it (None: not
            wrapped, for output that is not a terminal).
    """

    def style(text: str, codes: str) -> str:
        # line by line, so that each row of the terminal starts and ends its own style
        lines = wrap_lines(text, width) if width else text.split("\n")
        if not color:
            return "\n".join(lines)
        return "\n".join(f"{codes}{line}{_RESET}" if line else line for line in lines)

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
        blocks.extend(_blocks(message, failed, style, thinking_label if hide_thinking else None))
    text = "\n\n".join(block.rstrip("\n") for block in blocks if block.strip())
    return text + "\n" if text else ""


def _blocks(
    message: Message,
    failed: set[str],
    style: _Style,
    thinking_label: str | None,
) -> Iterable[str]:
    if isinstance(message, UserMessage):
        yield style(message_text(message), _BOLD)
    elif isinstance(message, AssistantMessage):
        for part in message.content:
            if part.type == "text":
                yield style(part.text.strip("\n"), "")
            elif part.type == "thinking" and part.thinking.strip():
                shown = part.thinking.strip("\n") if thinking_label is None else thinking_label
                yield style(shown, _DIM + _ITALIC)
            elif part.type == "toolCall":
                failed_call = part.id in failed
                line = f"{'✗' if failed_call else '✓'} {tool_summary(part.name, dict(part.arguments or {}))}"
                yield style(line, _RED if failed_call else _BOLD)
        if message.stop_reason == "aborted":
            yield style("Operation aborted", _DIM)
        elif message.stop_reason == "error":
            yield style(f"Error: {shown_error(message.error_message or 'unknown error')}", _RED)
    elif isinstance(message, BashExecutionMessage):
        yield style(f"$ {message.command}", _BOLD) + (
            "\n" + style(message.output.rstrip("\n"), "") if message.output else ""
        )
    elif isinstance(message, CompactionSummaryMessage):
        yield style(f"[compaction] {message.tokens_before:,} tokens summarised", _DIM)
    elif isinstance(message, BranchSummaryMessage):
        yield style("[branch] summary of the branch left", _DIM)
    elif isinstance(message, CustomMessage) and message.display:
        yield style(message_text(message), "")


_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d+[.)])?[ \t]+|[ \t]+")
"""A line's indentation and list marker: where its wrapped rows continue (under the item's text)."""


def wrap_lines(text: str, width: int) -> list[str]:
    """``text``'s lines, each wrapped between words to at most ``width`` terminal columns.

    A wrapped row continues under the line's text (a list item's under its first word, not its marker);
    a word wider than the room is cut where the room ends. Wide characters count two columns.
    """
    rows: list[str] = []
    for line in text.split("\n"):
        rows.extend(_wrap_line(line.rstrip(), max(1, width)))
    return rows


def _wrap_line(line: str, width: int) -> list[str]:
    from rich.cells import cell_len

    if cell_len(line) <= width:
        return [line]
    lead = _ITEM.match(line)
    prefix = lead.group(0) if lead else ""
    indent = " " * cell_len(prefix) if cell_len(prefix) < width // 2 else ""
    rows: list[str] = []
    row, room, words = prefix, width - cell_len(prefix), 0
    for word in line[len(prefix) :].split(" "):
        size = cell_len(word)
        if words and size + 1 <= room:
            row, room, words = f"{row} {word}", room - size - 1, words + 1
            continue
        if words:
            rows.append(row)
            row, room = indent, width - len(indent)
        while size > room:  # a word wider than a whole row: cut it
            head, word = _cut(word, room)
            rows.append(row + head)
            row, room = indent, width - len(indent)
            size = cell_len(word)
        row, room, words = row + word, room - size, 1
    if words:
        rows.append(row)
    return rows


def _cut(word: str, room: int) -> tuple[str, str]:
    """``word`` split after at most ``room`` columns (at least one character, so the loop ends)."""
    from rich.cells import cell_len

    taken = 0
    for index, char in enumerate(word):
        taken += cell_len(char)
        if taken > room:
            return word[: max(1, index)], word[max(1, index) :]
    return word, ""
