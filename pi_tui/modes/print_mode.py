"""Print and JSON modes: run the prompt(s) without a UI.

- text (``-p``): the final assistant text on stdout (each text block on its own line); on failure one line
  on stderr and exit 1.
- json (``--mode json``): the session header, then every event as one JSON line (pi 0.87.1's shapes and
  order, `pi_tui.modes.json_events`); a failed answer is reported there only (exit code 0, as pi).
  A prompt that cannot be sent at all (no model, or no key for it) prints the header, then says why on
  stderr and exits 1, as pi does.

Retries and other notices go to stderr in text mode so the user sees them without polluting stdout.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from pi_tui.agent.events import (
    AgentEvent,
    AutoCompactionEnd,
    AutoCompactionStart,
    AutoRetryEnd,
    AutoRetryStart,
    ErrorEvent,
    ExtensionError,
    RuntimeEvent,
)
from pi_tui.ai.types import AssistantMessage, ImageContent
from pi_tui.extensions.ui import NotifyLevel, NullUIBridge
from pi_tui.runtime.agent_session import AgentSession, ModelUnavailableError

from .commands import BuiltinCommands
from .json_events import JsonEventStream

__all__ = ["run_print_mode"]


class _OutputClosed(Exception):
    """stdout went away (e.g. piped into ``head``): stop quietly."""


def _json_line(out: TextIO, obj: Any) -> None:
    try:
        out.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
        out.flush()
    except (BrokenPipeError, ValueError) as exc:  # ValueError: write to a closed file
        raise _OutputClosed from exc


async def run_print_mode(
    session: AgentSession,
    prompts: list[str],
    *,
    json_mode: bool = False,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    first_images: list[ImageContent] | None = None,
) -> int:
    """Run each prompt in turn (the first with ``first_images``, from ``@file``); return the exit code."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr

    closed: list[bool] = []
    if json_mode:
        try:
            _json_line(out, session.session_manager.header.to_json_dict())
        except _OutputClosed:
            return 0

        def emit(record: dict[str, Any]) -> None:
            if closed:
                return
            try:
                _json_line(out, record)
            except _OutputClosed:
                closed.append(True)
                session.abort()

        json_stream = JsonEventStream(session, emit)  # pi 0.87.1's record shapes and order
        on_event = json_stream.on_event

    else:

        def on_event(event: AgentEvent | RuntimeEvent) -> None:
            match event:
                case AutoRetryStart():
                    err.write(
                        f"Retrying ({event.attempt}/{event.max_attempts}) in {event.delay_ms / 1000:.1f}s: "
                        f"{event.error_message}\n"
                    )
                    err.flush()
                case AutoRetryEnd(success=False):
                    err.write(f"Giving up after {event.attempt} attempts\n")
                    err.flush()
                case ExtensionError():
                    err.write(f'Extension "{event.extension}" failed in {event.event}: {event.error}\n')
                    err.flush()
                case AutoCompactionEnd(result=dict() as result) if result:
                    err.write(
                        f"[auto_compaction_end] summarised {result.get('tokensBefore', '?')} tokens; "
                        "read the summary with: pi-tui -c -p /summary\n"
                    )
                    err.flush()
                case ErrorEvent():
                    # Whole: the reason (disk full, no permission) comes last, after a long file path.
                    err.write(f"[error] {_one_line(event.message, 10_000)}\n")
                    err.flush()
                case AutoCompactionStart() | AutoCompactionEnd():
                    data = event.to_json()
                    err.write(f"[{data.pop('type')}] {json.dumps(data, ensure_ascii=False)[:300]}\n")
                    err.flush()

    def write(text: str) -> None:
        try:
            if json_mode:
                _json_line(out, {"type": "command_output", "text": text})
            else:
                out.write(text.rstrip("\n") + "\n")
                out.flush()
        except (_OutputClosed, BrokenPipeError):
            closed.append(True)

    commands = BuiltinCommands(session, write)
    session.builtin_commands = commands
    if session.ui.__class__ is NullUIBridge:
        # Extension notices go to stderr, one line each with their level; stdout stays the answer.
        session.ui = _StderrNoticeBridge(err)
    failed_commands: list[str] = []

    def on_command_error(event: AgentEvent | RuntimeEvent) -> None:
        if isinstance(event, ExtensionError) and event.event.startswith("command /"):
            failed_commands.append(event.event)

    unsubscribe_errors = session.subscribe(on_command_error)
    unsubscribe = session.subscribe(on_event)
    try:
        last_was_command = False
        for number, text in enumerate(prompts):
            before = commands.handled_count
            is_extension_command = _names_extension_command(session, text)
            try:
                await session.prompt(text, first_images if number == 0 and first_images else None)
            except ModelUnavailableError as exc:  # nothing was sent: no model, or no key for it
                err.write(f"{_unavailable_message(session, exc)}\n")
                err.flush()
                return 1
            if json_mode:
                json_stream.settled()
            last_was_command = commands.handled_count > before or is_extension_command
            last = session.last_assistant_message()
            if last is not None and last.stop_reason in ("error", "aborted") and not last_was_command:
                break
    finally:
        unsubscribe()
        unsubscribe_errors()
        session.builtin_commands = None
    if failed_commands:
        if json_mode:
            err.write(f"Error: extension {failed_commands[-1]} failed\n")
        return 1
    if last_was_command and not closed:
        return 0

    if closed:
        return 0
    if not prompts:
        # Nothing was asked (``-p`` alone, or ``-c -p``): as pi, answer with the session's last message
        # when it is the assistant's, else end quietly.
        ending = session.agent.messages[-1:]
        if not ending or not isinstance(ending[0], AssistantMessage):
            return 0
    if json_mode:
        # As pi: a failed answer is reported in the event stream (its ``message_end`` carries
        # ``stopReason`` and ``errorMessage``); only text mode turns it into an exit code.
        return 0
    last = session.last_assistant_message()
    if last is None:
        err.write("Error: the model produced no answer\n")
        return 1
    if last.stop_reason in ("error", "aborted"):
        reason = last.error_message or (
            "Operation aborted" if last.stop_reason == "aborted" else "unknown error"
        )
        err.write(f"Error: {_one_line(reason)}\n")
        return 1
    answer = _final_text(last)
    if answer is None:  # no text block at all (thinking only): pi prints no line
        return 0
    try:
        out.write(answer + ("" if answer.endswith("\n") else "\n"))
        out.flush()
    except BrokenPipeError:
        return 0
    return 0


def _unavailable_message(session: AgentSession, exc: ModelUnavailableError) -> str:
    """Why nothing was sent, in command-line words (this mode has no ``/model`` to pick one with)."""
    if session.has_model or session.registry is None:
        return str(exc)
    from pi_tui.ai.no_model import no_models_startup_message

    return no_models_startup_message(session.registry.agent_dir)


def _names_extension_command(session: AgentSession, text: str) -> bool:
    """True when ``text`` is ``/name …`` for a command an extension registered."""
    ext = session.extensions
    return ext is not None and text.startswith("/") and ext.registry.find_command(text) is not None


class _StderrNoticeBridge(NullUIBridge):
    """Print mode's ``ctx.ui``: dialogs decline, notices are written to stderr as ``[level] message``."""

    def __init__(self, err: TextIO) -> None:
        self._err = err

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        try:
            self._err.write(f"[{level}] {_one_line(message)}\n")
            self._err.flush()
        except (BrokenPipeError, ValueError):
            pass


def _final_text(message: AssistantMessage) -> str | None:
    """The answer's text blocks, one per line, as pi prints them (a thinking block or tool call between
    two text blocks must not run their sentences together); None when it has none."""
    texts = [block.text for block in message.content if block.type == "text"]
    return "\n".join(texts) if texts else None


def _one_line(text: str, limit: int = 500) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
