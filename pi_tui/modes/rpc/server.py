"""The RPC loop: read commands, run them, write responses and events (pi's ``--mode rpc``).

Commands run concurrently, as in pi: each one is a task, so ``abort`` or ``steer`` is handled while a
``prompt`` streams and an ``extension_ui_response`` reaches the dialog that waits for it. Responses echo
the command's ``id``; events carry none. Nothing a client sends can stop the loop: a line that is not
JSON gets ``{"command": "parse", "success": false}``, an unknown type ``Unknown command: x``, and any
failure inside a command an error response under that command's type and id.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from typing import Any

from pi_tui.agent.events import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    AutoCompactionEnd,
    AutoCompactionStart,
    AutoRetryEnd,
    AutoRetryStart,
    RuntimeEvent,
    SessionSwitched,
)
from pi_tui.ai.types import ImageContent, message_text
from pi_tui.modes.json_events import JsonEventStream
from pi_tui.runtime.agent_session import AgentSession

from .fields import Command, Reply
from .framing import JsonlWriter, Line, LineReader, OutputClosed, decode_line
from .handlers import COMMANDS, DEFERRED, HANDLERS, NO_DATA, CommandHandlers, RpcError
from .ui import RpcUIBridge

__all__ = ["RpcServer"]

log = logging.getLogger(__name__)

# Runtime events pi's RPC stream does not have; the command that caused them already answers (a client
# reads the new session with get_state).
_NOT_IN_PI_STREAM = frozenset({"session_switch", "session_tree"})


class RpcServer:
    """Serves one `AgentSession` over a `LineReader` / `JsonlWriter` pair."""

    def __init__(self, session: AgentSession, writer: JsonlWriter) -> None:
        self.session = session
        self.writer = writer
        self.stream = JsonEventStream(session, self._emit_event)  # pi 0.87.1's shapes and order
        self.ui = RpcUIBridge(self.send)
        self.handlers = CommandHandlers(self)
        self.is_compacting = False
        self.retrying = False
        self._run_task: asyncio.Task[None] | None = None
        self._ack_id: object = None  # the prompt whose response waits for its run to start
        self._ack_pending = False
        self._saw_agent_start = False
        self._queues: tuple[list[str], list[str]] = ([], [])
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = asyncio.Event()
        self.stopped_by: int | None = None  # SIGTERM/SIGHUP, when one ended the loop

    # --- output -----------------------------------------------------------------------------------

    def send(self, record: dict[str, Any]) -> None:
        try:
            self.writer.write(record)
        except OutputClosed:
            log.info("RPC client closed stdout; stopping")
            self._closed.set()

    def respond(
        self, cmd_id: object, command: str | None, data: Reply = NO_DATA, error: str | None = None
    ) -> None:
        record: dict[str, Any] = {} if cmd_id is None else {"id": cmd_id}
        record["type"] = "response"
        if command is not None:
            record["command"] = command
        record["success"] = error is None
        if error is not None:
            record["error"] = error
        elif data is not NO_DATA:
            record["data"] = data
        self.send(record)

    def sync_queue(self, *, force: bool = False) -> None:
        """Send ``queue_update`` when the steering or follow-up queue changed since the last one (or
        always, with ``force``: pi answers ``clear_queue`` with one even when nothing was queued)."""
        agent = self.session.agent
        current = (
            [message_text(m) for m in agent.steering_queue],
            [message_text(m) for m in agent.follow_up_queue],
        )
        if force or current != self._queues:
            self._queues = current
            self.send({"type": "queue_update", "steering": current[0], "followUp": current[1]})

    def on_event(self, event: AgentEvent | RuntimeEvent) -> None:
        if isinstance(event, AgentStart):
            self._saw_agent_start = True
            self._ack_prompt()
        elif isinstance(event, AgentEnd) and not self._prompt_running():
            self._settle_later()  # a run no prompt command started (an extension's message, say)
        elif isinstance(event, AutoRetryStart):
            self.retrying = True
        elif isinstance(event, AutoRetryEnd):
            self.retrying = False
        elif isinstance(event, AutoCompactionStart):
            self.is_compacting = True
        elif isinstance(event, AutoCompactionEnd):
            self.is_compacting = False
        self.stream.on_event(event)
        if isinstance(event, SessionSwitched):  # a new session: pi announces its system prompt again
            self.stream = JsonEventStream(self.session, self._emit_event)

    def _emit_event(self, record: dict[str, Any]) -> None:
        if record.get("type") in _NOT_IN_PI_STREAM:
            return
        # pi sends a turn's queue_update after its turn_start, just before the message it took
        if record.get("type") != "turn_start":
            self.sync_queue()
        self.send(record)

    def _prompt_running(self) -> bool:
        return self._run_task is not None and not self._run_task.done()

    def _settle_later(self) -> None:
        async def settle() -> None:
            await self.session.wait_for_idle()
            await asyncio.sleep(0)  # let a queued continuation start before deciding
            if not self.busy:
                self.send({"type": "agent_settled"})

        task = asyncio.ensure_future(settle())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- state ------------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """A prompt's run is in progress (streaming, running tools, retrying, or about to start)."""
        return self._prompt_running() or self.session.is_streaming

    # --- the loop ---------------------------------------------------------------------------------

    async def serve(self, reader: LineReader) -> None:
        """Answer commands until stdin ends or stdout closes, then stop what runs."""
        from pi_tui.modes.commands import BuiltinCommands

        unsubscribe = self.session.subscribe(self.on_event)
        self.session.attach_ui(self.ui, "rpc")
        # pi-tui's built-in /commands work in prompts too; their output is a command_output event
        self.session.builtin_commands = BuiltinCommands(
            self.session, lambda text: self.send({"type": "command_output", "text": text})
        )
        try:
            try:
                await self.session.start()
            except Exception:  # a broken extension must not keep the client from talking to us
                log.exception("extension start-up failed")
            self._stop_on_signals()
            closed = asyncio.ensure_future(self._closed.wait())
            try:
                while not self._closed.is_set():
                    next_line = asyncio.ensure_future(reader.next_line())
                    await asyncio.wait({next_line, closed}, return_when=asyncio.FIRST_COMPLETED)
                    if not next_line.done():
                        next_line.cancel()
                        break
                    line = next_line.result()
                    if line is None:
                        break
                    self.handle_value(line)
            finally:
                closed.cancel()
                reader.stop()
        finally:
            await self._stop()
            unsubscribe()
            self.session.builtin_commands = None

    def _stop_on_signals(self) -> None:
        """SIGTERM and SIGHUP end the loop like end of input (the turn stops and the running tool's
        process group with it, pending entries are written, extensions get ``session_shutdown``);
        `stopped_by` keeps the signal so the process exits 128 + its number."""
        from pi_tui.modes.termination import TerminationGuard

        def on_signal(signum: int) -> None:
            if self.stopped_by is None:
                self.stopped_by = signum
            self._closed.set()

        # a plain signal handler: a process whose loop an extension blocks still ends (see TerminationGuard)
        TerminationGuard(on_signal).install()

    def handle_value(self, line: Line) -> None:
        try:
            value = decode_line(line)
        except ValueError as exc:
            self.respond(None, "parse", error=f"Failed to parse command: {exc}")
            return
        if not isinstance(value, dict):
            self.respond(None, "parse", error="Failed to parse command: expected a JSON object")
            return
        kind = value.get("type")
        if kind == "extension_ui_response":
            self.ui.resolve(value)
            return
        cmd_id = value.get("id")
        if not isinstance(kind, str) or kind not in COMMANDS:
            name = kind if isinstance(kind, str) else None
            shown = name if name is not None else json.dumps(kind)
            self.respond(cmd_id, name, error=f"Unknown command: {shown}")
            return
        task = asyncio.ensure_future(self._run_command(cmd_id, kind, value))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run_command(self, cmd_id: object, kind: str, command: Command) -> None:
        handler = HANDLERS[kind]
        try:
            result = handler(self.handlers, cmd_id, command)
            if inspect.isawaitable(result):
                result = await result
        except RpcError as exc:
            self.respond(cmd_id, kind, error=str(exc))
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # any failure is an answer, never the end of the loop
            log.exception("RPC command %s failed", kind)
            self.respond(cmd_id, kind, error=str(exc) or type(exc).__name__)
            return
        if result is DEFERRED:
            return
        self.sync_queue()
        self.respond(cmd_id, kind, data=result)

    # --- prompts ----------------------------------------------------------------------------------

    def start_prompt(self, cmd_id: object, text: str, images: list[ImageContent] | None) -> None:
        """Run a prompt in the background; its response goes out when the run starts (pi answers after
        preflight), or when the prompt ends without a run (an extension command, a failure)."""
        self._ack_id, self._ack_pending = cmd_id, True
        self._saw_agent_start = False
        self._run_task = asyncio.ensure_future(self._run_prompt(cmd_id, text, images))

    def _ack_prompt(self) -> None:
        if self._ack_pending:
            self._ack_pending = False
            self.sync_queue()
            self.respond(self._ack_id, "prompt")

    async def _run_prompt(self, cmd_id: object, text: str, images: list[ImageContent] | None) -> None:
        error: str | None = None
        try:
            await self.session.prompt(text, images, source="rpc")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.info("prompt failed: %s", exc)
            error = str(exc) or type(exc).__name__
        if self._ack_pending and self._ack_id is cmd_id:
            self._ack_pending = False
            self.sync_queue()
            self.respond(cmd_id, "prompt", error=error)
        elif error is not None:  # the run had started: a later failure is a second response
            self.respond(cmd_id, "prompt", error=error)
        if self._saw_agent_start and not self.session.is_streaming:
            # (a run still going belongs to someone else, e.g. an extension's message: it settles itself)
            self.send({"type": "agent_settled"})

    async def wait_for_run(self, timeout: float = 30.0) -> None:
        """Wait until the prompt task (including its ``agent_settled``) is done."""
        task = self._run_task
        # A prompt that never started a run is an extension command (perhaps waiting on a dialog):
        # abort does not wait for it, as pi's abort waits only for the agent.
        if task is not None and not task.done() and (self._saw_agent_start or self.session.is_streaming):
            await asyncio.wait({task}, timeout=timeout)
        if self.session.is_streaming:
            await asyncio.wait_for(self.session.wait_for_idle(), timeout)

    # --- shutdown ---------------------------------------------------------------------------------

    async def _stop(self) -> None:
        self.ui.cancel_all()
        self.handlers.abort_bash()
        if self.busy:
            self.session.abort()
            try:
                await self.wait_for_run(timeout=5.0)
            except TimeoutError:
                log.warning("the run did not stop within 5 s of end of input")
        if self._run_task is not None and not self._run_task.done():
            self._run_task.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await asyncio.gather(*self.handlers.background, return_exceptions=True)
