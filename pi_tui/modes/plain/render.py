"""Agent events as terminal lines: the answer streamed as it arrives, tool calls one line each.

No cursor movement and no redraws: everything is appended, so the output reads the same in a dumb
terminal, a log file or a screen reader.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pi_tui.agent.events import (
    AutoCompactionEnd,
    AutoCompactionStart,
    AutoRetryEnd,
    AutoRetryStart,
    ErrorEvent,
    ExtensionError,
    MessageEnd,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
)
from pi_tui.agent.tool import result_text
from pi_tui.ai.stream import TextDelta, ThinkingDelta
from pi_tui.ai.types import AssistantMessage

__all__ = ["EventPrinter", "tool_summary"]

_DIM = "\x1b[2m"
_RED = "\x1b[31m"
_RESET = "\x1b[0m"

# The argument that says what a built-in tool call is about, in the order we look for it.
_KEY_ARGS = ("command", "path", "pattern", "query", "url")


def _one_line(text: str, limit: int) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def tool_summary(name: str, args: dict[str, Any], limit: int = 100) -> str:
    """``read calc.py``, ``bash $ ls -la``: the tool and its most telling argument, on one line."""
    for key in _KEY_ARGS:
        value = args.get(key)
        if isinstance(value, str) and value:
            prefix = "$ " if key == "command" else ""
            return _one_line(f"{name} {prefix}{value}", limit)
    if not args:
        return name
    return _one_line(f"{name} {json.dumps(args, ensure_ascii=False)}", limit)


class EventPrinter:
    """Turns session events into text handed to ``write``.

    Args:
        write: Writes text to the terminal as is (no newline added).
        color: Use ANSI dim/red for thinking, tool lines and errors.
    """

    def __init__(self, write: Callable[[str], None], *, color: bool) -> None:
        self._write = write
        self.color = color
        self.at_line_start = True
        self._in_thinking = False
        self.streamed_text = False

    def write(self, text: str) -> None:
        if text:
            self._write(text)
            self.at_line_start = text.endswith("\n")

    def _style(self, text: str, style: str) -> str:
        return f"{style}{text}{_RESET}" if self.color else text

    def line(self, text: str, style: str = "") -> None:
        """Print ``text`` on a line of its own."""
        if not self.at_line_start:
            self.write("\n")
        self.write((self._style(text, style) if style else text) + "\n")

    def __call__(self, event: Any) -> None:
        if isinstance(event, MessageUpdate):
            self._update(event.assistant_message_event)
        elif isinstance(event, MessageEnd):
            self._message_end(event.message)
        elif isinstance(event, ToolExecutionStart):
            self.line("→ " + tool_summary(event.tool_name, event.args), _DIM)
        elif isinstance(event, ToolExecutionEnd):
            self._tool_end(event)
        elif isinstance(event, AutoRetryStart):
            self.line(
                f"Retrying ({event.attempt}/{event.max_attempts}) in {event.delay_ms / 1000:.1f}s: "
                f"{_one_line(event.error_message, 200)}",
                _DIM,
            )
        elif isinstance(event, AutoRetryEnd) and not event.success:
            self.line(f"Giving up after {event.attempt} attempts", _RED)
        else:
            self._runtime(event)

    def _update(self, stream_event: Any) -> None:
        if isinstance(stream_event, ThinkingDelta):
            if not self._in_thinking:
                self._in_thinking = True
                if not self.at_line_start:
                    self.write("\n")
            self.write(self._style(stream_event.delta, _DIM))
        elif isinstance(stream_event, TextDelta):
            if self._in_thinking:
                self._in_thinking = False
                self.write("\n")
            self.write(stream_event.delta)
            self.streamed_text = True

    def _message_end(self, message: Any) -> None:
        if not isinstance(message, AssistantMessage):
            return
        self._in_thinking = False
        if not self.at_line_start:
            self.write("\n")
        reason = message.stop_reason
        if reason == "aborted":
            self.line("Aborted.", _DIM)
        elif reason == "error":
            self.line(f"Error: {_one_line(message.error_message or 'unknown error', 500)}", _RED)

    def _tool_end(self, event: ToolExecutionEnd) -> None:
        text = result_text(event.result)
        if event.is_error:
            self.line(f"  ✗ {_one_line(text or 'failed', 200)}", _RED)
            return
        lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
        first = _one_line(text.split("\n", 1)[0], 80) if text else ""
        detail = f"{lines} line{'s' if lines != 1 else ''}" if lines > 1 else (first or "done")
        self.line(f"  ✓ {detail}", _DIM)

    def _runtime(self, event: object) -> None:
        match event:
            case ExtensionError():
                self.line(f'Extension "{event.extension}" failed in {event.event}: {event.error}', _RED)
            case ErrorEvent():
                self.line(f"Error: {_one_line(event.message, 500)}", _RED)
            case AutoCompactionStart():
                self.line("Compacting the conversation…", _DIM)
            case AutoCompactionEnd(result=dict() as result) if result:
                before = result.get("tokensBefore", "?")
                self.line(f"Compacted: {before} tokens summarised (/summary shows the summary)", _DIM)
