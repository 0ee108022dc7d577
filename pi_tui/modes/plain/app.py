"""The line-mode loop: read a prompt, stream the answer, repeat.

A consumer of `AgentSession` like print mode: it subscribes to events, installs the shared
`BuiltinCommands`, attaches a `PlainUIBridge` for extension dialogs and calls ``session.prompt``.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pi_tui import __version__
from pi_tui.ai.types import AssistantMessage, ImageContent, TextContent, UserMessage
from pi_tui.modes.commands import BuiltinCommands
from pi_tui.modes.prompt_history import PromptHistory

from .bash import run_user_bash
from .bridge import PlainUIBridge
from .commands import QUIT, run_plain_command
from .completion import PlainCompleter, command_items
from .render import EventPrinter
from .terminal import Terminal, cwd_label, make_terminal

if TYPE_CHECKING:
    from pi_tui.runtime.agent_session import AgentSession

__all__ = ["run_plain"]

_DOUBLE_CTRL_C_S = 1.0


def _argument_completions(session: AgentSession, name: str, prefix: str) -> list[str] | None:
    runner = session.extensions
    command = runner.registry.commands.get(name) if runner is not None else None
    complete = command.get_argument_completions if command is not None else None
    if complete is None:
        return None
    result = complete(prefix)
    return [str(r.get("value", r)) if isinstance(r, dict) else str(r) for r in result or []]


def _history_for(session: AgentSession) -> PromptHistory:
    if session.session_manager.path is None:  # --no-session: keep nothing on disk
        return PromptHistory(None)
    return PromptHistory.for_project(session.cwd)


async def run_plain(
    session: AgentSession,
    prompts: list[str] | None = None,
    *,
    terminal: Terminal | None = None,
    first_images: Sequence[ImageContent] | None = None,
) -> int:
    """Run the line-mode interface on ``session`` until the user quits; returns the exit code.

    Args:
        session: The `pi_tui.runtime.agent_session.AgentSession`.
        prompts: Prompts from the command line, sent first.
        terminal: Where to read and write (default: chosen from stdin/stdout, see `make_terminal`).
        first_images: Images sent with the first of ``prompts`` (``@file`` arguments).
    """
    history = _history_for(session)
    bridge_box: list[PlainUIBridge] = []
    if terminal is None:
        completer = PlainCompleter(
            session.cwd,
            lambda: command_items(session),
            lambda name, prefix: _argument_completions(session, name, prefix),
        )
        terminal = make_terminal(history.entries, completer, lambda: bridge_box[0].toolbar())
    printer = EventPrinter(terminal.write, color=terminal.color)
    bridge = PlainUIBridge(terminal, printer)
    bridge_box.append(bridge)
    session.attach_ui(bridge, "tui")
    commands = BuiltinCommands(session, lambda text: printer.line(text.rstrip("\n")))
    session.builtin_commands = commands
    unsubscribe = session.subscribe(printer)

    model = session.model
    printer.line(
        f"pi-tui {__version__} · {model.provider}/{model.id} · {cwd_label(session.cwd)} — line mode; "
        "/hotkeys lists the keys, Ctrl+D quits"
    )
    _show_resumed(session, printer)
    stopped = _stop_on_signals(session)
    try:
        with terminal.keys_held():
            await session.start()
            for number, text in enumerate(prompts or []):
                await _send(session, terminal, printer, text, first_images if number == 0 else None)
            await _loop(session, terminal, printer, bridge, history)
    except asyncio.CancelledError:
        if not stopped:
            raise
        # SIGTERM/SIGHUP: the cancellation unwound raw mode and the prompt; the session file is whole
        # (every entry is appended as it happens).
        printer.line(f"Stopped by {stopped[0]}.")
        return 128 + _SIGNALS[stopped[0]]
    finally:
        _restore_signals()
        unsubscribe()
        session.builtin_commands = None
    return 0


_RESUME_LINES = 12


def _show_resumed(session: AgentSession, printer: EventPrinter) -> None:
    """A resumed session: how long it is, your last prompt and the end of the last answer, for context."""
    messages = [m for m in session.messages if isinstance(m, UserMessage | AssistantMessage)]
    if not messages:
        return

    def text_of(message: UserMessage | AssistantMessage) -> str:
        content = message.content
        if isinstance(content, str):
            return content
        return "".join(part.text for part in content if isinstance(part, TextContent))

    printer.line(f"Resumed a session of {len(messages)} messages.", "\x1b[2m")
    last_user = next((m for m in reversed(messages) if m.role == "user"), None)
    last_answer = next((m for m in reversed(messages) if m.role == "assistant" and text_of(m).strip()), None)
    if last_user is not None:
        printer.line("> " + " ".join(text_of(last_user).split())[:200])
    if last_answer is not None:
        lines = text_of(last_answer).strip().splitlines()
        if len(lines) > _RESUME_LINES:
            printer.line(f"… ({len(lines) - _RESUME_LINES} earlier lines)", "\x1b[2m")
        printer.line("\n".join(lines[-_RESUME_LINES:]))


_SIGNALS = {"SIGTERM": signal.SIGTERM.value, "SIGHUP": signal.SIGHUP.value}


def _stop_on_signals(session: AgentSession) -> list[str]:
    """SIGTERM and SIGHUP abort the run and cancel the loop, so the terminal is restored on the way out.

    Returns a list that receives the signal's name when one arrived.
    """
    stopped: list[str] = []
    pending: set[asyncio.Future[None]] = set()  # keeps the finishing task referenced
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()

    async def finish() -> None:
        # Let the aborted run end as an Escape would (its messages are saved), but not for long.
        try:
            await asyncio.wait_for(session.wait_for_idle(), 2.0)
        except Exception:  # a run that will not end (or fails ending) must not keep us from quitting
            pass
        if task is not None:
            task.cancel()

    def stop(name: str) -> None:
        if stopped:
            return
        stopped.append(name)
        session.abort()
        pending.add(asyncio.ensure_future(finish()))

    for name, number in _SIGNALS.items():
        try:
            loop.add_signal_handler(number, stop, name)
        except (NotImplementedError, RuntimeError, ValueError):  # no signals here (not the main thread)
            pass
    return stopped


def _restore_signals() -> None:
    loop = asyncio.get_running_loop()
    for number in _SIGNALS.values():
        try:
            loop.remove_signal_handler(number)
        except (NotImplementedError, RuntimeError, ValueError):
            pass


async def _loop(
    session: AgentSession,
    terminal: Terminal,
    printer: EventPrinter,
    bridge: PlainUIBridge,
    history: PromptHistory,
) -> None:
    last_interrupt = 0.0
    while True:
        default, bridge.editor_text = bridge.editor_text or "", None
        try:
            text = await terminal.read_line("> ", default)
        except KeyboardInterrupt:
            now = time.monotonic()
            if now - last_interrupt < _DOUBLE_CTRL_C_S:
                break
            last_interrupt = now
            printer.line("(Ctrl+C again or Ctrl+D to quit)")
            continue
        printer.at_line_start = True
        if text is None:
            break
        text = text.strip()
        if not text:
            continue
        history.add(text)
        handled = await run_plain_command(text, session, bridge, printer)
        if handled is QUIT:
            break
        if handled:
            continue
        if text.startswith("!"):
            await run_user_bash(text, session, terminal, printer)
        else:
            await _send(session, terminal, printer, text)


async def _send(
    session: AgentSession,
    terminal: Terminal,
    printer: EventPrinter,
    text: str,
    images: Sequence[ImageContent] | None = None,
) -> None:
    """Run one prompt (with ``images``, if any) to the end; Escape or Ctrl+C aborts it."""
    task = asyncio.ensure_future(session.prompt(text, images or None))
    with terminal.watch_abort(session.abort):
        try:
            await task
        except Exception as exc:  # the loop goes on: one failed prompt is a message, not the end
            printer.line(f"Error: {exc}")
    if not printer.at_line_start:
        printer.write("\n")
