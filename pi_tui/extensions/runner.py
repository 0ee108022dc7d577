"""The extension runner: loads extensions, dispatches events to their handlers, isolates failures.

Isolation: every handler call is guarded. An exception is reported as a runtime event
``extension_error {extensionPath, extension, event, error}`` (modes show it) and the app goes on. The
exceptions are the rules of the events themselves: a raising ``tool_call`` handler blocks the tool,
and a raising ``context`` handler fails that request.

Waiting: the runtime waits for the handlers of events whose result it needs (see
`pi_tui.extensions.events.EVENTS`, ``awaited``). Informational events (``agent_start``,
``message_update``, ``tool_execution_end``, …) are run as tasks and awaited only up to
``informational_timeout`` seconds; a slower handler is reported once and finishes in the background,
so it can delay the agent by at most that much. ``session_start``, ``session_shutdown`` and
``resources_discover`` wait up to ``lifecycle_timeout``. Sync handlers run on the event loop: one
that blocks blocks everything, so slow work belongs in ``async`` handlers or ``asyncio.to_thread``.

Budget: an awaiting handler of any event runs at most ``extensionHookTimeout`` seconds (a setting,
default `HOOK_TIMEOUT`), dialog time not counted, and abort cancels the ones the loop waits for: see
`pi_tui.extensions.budget`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.agent.events import (
    AgentEvent,
    ExtensionError,
    ExtensionErrorPayload,
    ExtensionWarning,
    RuntimeEvent,
    dataclass_fields,
)

from .budget import HOOK_TIMEOUT, HookAborted, HookBudgetMixin, HookTimeoutError
from .bus import EventBus
from .compaction_hooks import CompactionHooks
from .context import CommandContext, ExtensionContext
from .convert import to_custom_message, to_images
from .discovery import Discovery, ExtensionSource
from .dispatch import Dispatch
from .events import EVENTS, Event
from .extension import Extension
from .extension_api import ExtensionAPI
from .loader import ExtensionLoadError, failure_place, forget_module, import_extension
from .loop_hooks import LoopHooks
from .registry import Registry, positional_arity
from .renewal import RenewalMixin
from .session_events import BeforeOutcome, SessionEventsMixin
from .ui import ExtensionUIState

if TYPE_CHECKING:
    from pi_tui.ai.types import CustomMessage, ImageContent, Message

    from .host import SessionHost
    from .reload import ExtensionWatcher

__all__ = [
    "ExtensionRunner",
    "InputOutcome",
    "AgentStartOutcome",
    "BeforeOutcome",
    "HOOK_TIMEOUT",
    "HookAborted",
    "HookTimeoutError",
]

log = logging.getLogger(__name__)


@dataclasses.dataclass(slots=True)
class InputOutcome:
    """The ``input`` chain's result: ``handled`` stops the pipeline, else the (transformed) input."""

    handled: bool
    text: str
    images: list[ImageContent] | None


@dataclasses.dataclass(slots=True)
class AgentStartOutcome:
    """``before_agent_start``: accumulated custom messages, and the chained system prompt (None: base)."""

    messages: list[CustomMessage]
    system_prompt: str | None


class ExtensionRunner(HookBudgetMixin, SessionEventsMixin, RenewalMixin):
    """Holds the loaded extensions of one `AgentSession` and runs their handlers.

    Args:
        session: The `pi_tui.runtime.agent_session.AgentSession`.
        flags: Command-line flags nobody else claimed (``args.unknown_flags``), for ``pi.get_flag``.
        informational_timeout: Seconds the runtime waits for informational handlers.
        lifecycle_timeout: Seconds it waits for session_start / session_shutdown / resources_discover.
        shutdown_grace: Seconds background handler work may still take when the session closes.
        rediscover: Finds the extensions again (for reload); without it reload re-imports the same paths.
    """

    def __init__(
        self,
        session: SessionHost,
        *,
        flags: dict[str, str | bool] | None = None,
        informational_timeout: float = 5.0,
        lifecycle_timeout: float = 30.0,
        shutdown_grace: float = 2.0,
        rediscover: Callable[[], Discovery] | None = None,
    ) -> None:
        self.session = session
        self.extensions: list[Extension] = []
        self.registry = Registry(self, flags or {})
        self.bus = EventBus(self._bus_error, self.spawn_owned, session.panels.mark_dirty)
        self.dispatch = Dispatch(
            extensions=lambda: self.extensions,
            context_for=self.context_for,
            within_budget=self._within_budget,
            emit=lambda event: self.session.emit(event),
            spawn=self.spawn,
        )
        """Calls the handlers and reports their failures (for the runner and its helpers)."""
        self.hooks = LoopHooks(self.dispatch)
        self.informational_timeout = informational_timeout
        self.lifecycle_timeout = lifecycle_timeout
        self.shutdown_grace = shutdown_grace
        self.warnings: list[str] = []
        self.theme_paths: list[str] = []
        self.ui_state = ExtensionUIState()
        """The statuses and widgets extensions have shown; cleared on reload and session switch."""
        self.reload_count = 0
        self._rediscover = rediscover
        self._sources: list[ExtensionSource] = []
        self._pending: list[tuple[Extension, Awaitable[object]]] = []
        self._background: set[asyncio.Future[object]] = set()
        self._next_turn: list[CustomMessage] = []
        self._abortable_hooks: set[asyncio.Future[Any]] = set()  # loop handlers abort may cancel
        self._aborted_hooks: set[asyncio.Future[Any]] = set()
        self._contexts: dict[str, ExtensionContext] = {}
        self._slow_reported: set[tuple[str, str]] = set()
        self._lanes: dict[str, asyncio.Future[Any]] = {}
        self._context_handlers: list[tuple[str, Callable[..., Any]]] | None = None
        self._announce_load_errors = False
        self._started = False
        self._closed = False
        self._reloading: asyncio.Lock | None = None
        self._watcher: ExtensionWatcher | None = None
        self._reloaded: asyncio.Event | None = None
        self._tree_from_extension = False
        self._tree_skip = False
        self.tree_asked_for: str | None = None
        """The target of a branch summary the compaction already asked extensions about."""

    # --- binding and loading ------------------------------------------------------------------------

    def bind(self) -> None:
        """Attach to the session: event forwarding, loop hooks, context handlers."""
        session = self.session
        session.extensions = self
        session.set_context_handlers(self.context_handlers)
        self.hooks.install(session)
        CompactionHooks(self).install(session.compaction)
        session.subscribe(self._on_session_event)

    @property
    def started(self) -> bool:
        return self._started

    def load(self, sources: Sequence[ExtensionSource]) -> None:
        """Import each source and call its ``register(pi)`` (an async ``register`` finishes in `start`)."""
        self._sources = list(sources)
        for source in sources:
            self._load_one(source)

    def _load_one(self, source: ExtensionSource) -> None:
        ext = Extension(source)
        try:
            module = import_extension(source)
        except ExtensionLoadError as exc:
            self._load_failed(ext, str(exc))
            return
        ext.module, ext.module_name = module, module.__name__
        register = getattr(module, "register", None)  # the extension's own module: it may have none
        if not callable(register):
            forget_module(ext.module_name)
            self._load_failed(ext, "it has no register(pi) function")
            return
        self.extensions.append(ext)
        try:
            result = register(ExtensionAPI(self, ext))
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # SystemExit too: an extension must never end the app
            self._unload(ext)
            self._load_failed(ext, f"{type(exc).__name__}: {exc}{failure_place(exc, ext.source)}")
            return
        if inspect.isawaitable(result):
            self._pending.append((ext, result))

    def _load_failed(self, ext: Extension, reason: str) -> None:
        message = f'Failed to load extension "{ext.path}": {reason}'
        log.warning(message)
        if not self._announce_load_errors:
            self.warnings.append(message)  # start-up: shown with the other start-up warnings
        elif self._started:
            self.report_soon(ext, "load", message)
        else:  # a reload: `start` reports it, in order, before the reload is over
            self.dispatch.queued_errors.append(self.dispatch.error_payload(ext, "load", message))

    def _unload(self, ext: Extension, *, keep_panels: bool = False) -> None:
        self.registry.remove_tools(ext)
        self.registry.remove_owned(ext)
        self.bus.remove_owner(ext.name)
        if not keep_panels:
            self.session.panels.unregister_source(ext.name)
        if ext.module_name:
            forget_module(ext.module_name)
        if ext in self.extensions:
            self.extensions.remove(ext)
        self._contexts.pop(ext.name, None)
        self._lanes.pop(ext.name, None)
        self.handlers_changed()

    def handlers_changed(self) -> None:
        self._context_handlers = None

    # --- reporting ----------------------------------------------------------------------------------

    def warn(self, message: str) -> None:
        """A registration conflict or similar: shown at start-up, or as an event once running."""
        log.warning(message)
        if self._started:
            self.spawn(self.session.emit(ExtensionWarning(message)))
        else:
            self.warnings.append(message)

    @property
    def errors(self) -> list[ExtensionErrorPayload]:
        """Every reported handler failure, as its ``extension_error`` payload."""
        return self.dispatch.errors

    async def report(self, ext: Extension, event: str, error: BaseException | str) -> None:
        """Report a failed handler as an ``extension_error`` runtime event (see `Dispatch.report`)."""
        await self.dispatch.report(ext, event, error)

    def report_soon(self, ext: Extension, event: str, error: BaseException | str) -> None:
        """`report` from synchronous code (see `Dispatch.report_soon`)."""
        self.dispatch.report_soon(ext, event, error)

    def _bus_error(self, owner: str, event: str, exc: BaseException) -> None:
        ext = self._extension(owner)
        if ext is not None:
            self.report_soon(ext, event, exc)

    def _extension(self, name: str) -> Extension | None:
        return next((e for e in self.extensions if e.name == name), None)

    # --- background work ----------------------------------------------------------------------------

    def spawn(
        self, work: Awaitable[object], ext: Extension | None = None, what: str = ""
    ) -> asyncio.Future[object]:
        """Run ``work`` in the background; its failure is reported under ``ext``. `drain` waits for it."""
        task = asyncio.ensure_future(work)
        self._background.add(task)

        def finished(done: asyncio.Future[object]) -> None:
            self._background.discard(done)
            if done.cancelled():
                return
            exc = done.exception()
            if exc is None:
                return
            if ext is not None:
                self.report_soon(ext, what, exc)
            else:
                log.warning("background work %s failed: %s", what, exc)

        task.add_done_callback(finished)
        return task

    def spawn_owned(self, work: Awaitable[object], owner: str, what: str) -> None:
        self.spawn(work, self._extension(owner), what)

    async def drain(self, timeout: float | None = None) -> None:
        """Wait for background handler work (slow informational handlers, spawned turns, reports)."""
        while self._background:
            _, pending = await asyncio.wait(set(self._background), timeout=timeout)
            if pending and timeout is not None:
                return

    # --- calling handlers ---------------------------------------------------------------------------

    def context_for(self, ext: Extension) -> ExtensionContext:
        ctx = self._contexts.get(ext.name)
        if ctx is None or not ctx.is_for(ext):
            ctx = ExtensionContext(self, ext)
            self._contexts[ext.name] = ctx
        return ctx

    async def run_shortcut(self, key: str) -> bool:
        """Run the handler an extension bound to ``key`` with that extension's context.

        Returns:
            False when no extension binds ``key``. The handler's own exception goes up to the caller.
        """
        shortcut = self.registry.shortcuts.get(key)
        if shortcut is None:
            return False
        ext = self._extension(shortcut.source)
        ctx = self.context_for(ext) if ext is not None else None
        result = shortcut.handler(*(ctx,)[: positional_arity(shortcut.handler)])
        if inspect.isawaitable(result):
            await result
        return True

    def has_handlers(self, event: str) -> bool:
        return self.dispatch.has_handlers(event)

    def call(
        self, ext: Extension, handler: Callable[..., Any], *args: Any, ctx: ExtensionContext | None = None
    ) -> Any:
        """Call ``handler`` with as many of ``(*args, ctx)`` as it accepts (see `Dispatch.call`)."""
        return self.dispatch.call(ext, handler, *args, ctx=ctx)

    async def invoke(self, ext: Extension, handler: Callable[..., Any], event: Event) -> tuple[bool, Any]:
        """Run one handler; ``(True, result)``, or ``(False, None)`` after reporting its exception."""
        return await self.dispatch.invoke(ext, handler, event)

    # --- the message hook for messages saved outside a turn -------------------------------------------

    def message_outside_turn(self, message: Message) -> Message:
        """The ``message`` handlers run synchronously on a message saved outside the agent loop (see
        `pi_tui.extensions.outside_turn.message_outside_turn`); returns the (possibly replaced) message."""
        from .outside_turn import message_outside_turn

        return message_outside_turn(self.dispatch, message)

    # --- informational events -----------------------------------------------------------------------

    async def notify(self, name: str, *, timeout: float | None = None, **fields: Any) -> None:
        """Deliver an informational event to every handler (see the module doc for the waiting rule).

        Each extension has a lane: while one of its handlers is still running in the background, its
        later events queue behind it (keeping their order) and nobody waits for them.
        """
        self.session.panels.mark_dirty(name)
        groups = [(ext, list(ext.handlers[name])) for ext in self.extensions if ext.handlers.get(name)]
        if not groups:
            return
        event = Event(name, **fields)
        waited: list[tuple[Extension, asyncio.Future[Any]]] = []
        for ext, handlers in groups:
            busy = self._lanes.get(ext.name)
            if busy is not None and busy.done():
                busy = None
            task: asyncio.Future[Any] = asyncio.ensure_future(self._run_group(ext, handlers, event, busy))
            self._lanes[ext.name] = task
            if busy is None:
                waited.append((ext, task))
            else:
                self._keep(task)
        limit = self.informational_timeout if timeout is None else timeout
        try:
            if waited:
                await asyncio.wait([task for _, task in waited], timeout=limit)
        finally:
            for ext, task in waited:
                if task.done():
                    continue
                self._keep(task)
                if (ext.name, name) not in self._slow_reported:
                    self._slow_reported.add((ext.name, name))
                    self.report_soon(
                        ext, name, f"handler still running after {limit:g}s; no longer waiting for it"
                    )

    def _keep(self, task: asyncio.Future[Any]) -> None:
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _run_group(
        self,
        ext: Extension,
        handlers: list[Callable[..., Any]],
        event: Event,
        after: asyncio.Future[Any] | None = None,
    ) -> None:
        if after is not None:
            await asyncio.wait({after})
        for handler in handlers:
            await self.invoke(ext, handler, event)

    async def _on_session_event(self, event: AgentEvent | RuntimeEvent) -> None:
        """Forward the agent's events (agent/turn/message/tool_execution) to the handlers."""
        if isinstance(event, RuntimeEvent):
            return
        name = event.type
        spec = EVENTS.get(name)
        if spec is None or spec.combine != "notify":
            return
        if not self.has_handlers(name):
            self.session.panels.mark_dirty(name)
            return
        fields = dataclass_fields(event)
        for key, value in fields.items():
            if isinstance(value, tuple):
                fields[key] = list(value)
        await self.notify(name, **fields)

    # --- the input pipeline -------------------------------------------------------------------------

    async def run_command(self, text: str) -> bool:
        """Run the extension command ``text`` names (``/name args``). False when there is none."""
        found = self.registry.find_command(text)
        if found is None:
            return False
        command, args = found
        ext = self._extension(command.source)
        if ext is None:
            return False
        ctx = CommandContext(self, ext)
        try:
            result = self.call(ext, command.handler, args, ctx=ctx)
            if inspect.isawaitable(result):
                await result
        except Exception as exc:
            await self.report(ext, f"command /{command.name}", exc)
        return True

    async def emit_input(self, text: str, images: list[ImageContent] | None, source: str) -> InputOutcome:
        """``input``: transforms chain, the first ``handled`` stops everything."""
        for ext, handler in self.dispatch.handlers("input"):
            result = await self.dispatch.result(
                ext, handler, Event("input", text=text, images=images, source=source)
            )
            if not result:
                continue
            action = result.get("action", "continue")
            if action == "handled":
                return InputOutcome(True, text, images)
            if action == "transform":
                try:
                    if "images" in result:
                        images = to_images(result["images"])
                    text = str(result.get("text", text))
                except (TypeError, ValueError) as exc:
                    await self.report(ext, "input", exc)
        return InputOutcome(False, text, images)

    async def emit_before_agent_start(
        self, prompt: str, images: list[ImageContent] | None, system_prompt: str
    ) -> AgentStartOutcome:
        """``before_agent_start``: messages accumulate, system prompts chain."""
        outcome = AgentStartOutcome([], None)
        current = system_prompt
        for ext, handler in self.dispatch.handlers("before_agent_start"):
            event = Event("before_agent_start", prompt=prompt, images=images, system_prompt=current)
            result = await self.dispatch.result(ext, handler, event)
            if not result:
                continue
            if result.get("message") is not None:
                try:
                    outcome.messages.append(to_custom_message(result["message"], default_type=ext.name))
                except (TypeError, ValueError) as exc:
                    await self.report(ext, "before_agent_start", exc)
            if result.get("system_prompt") is not None:
                current = str(result["system_prompt"])
                outcome.system_prompt = current
        return outcome

    async def emit_cache_warming_decision(
        self, *, warm_cost: float, miss_cost: float, continuation_probability: float, action: str
    ) -> str:
        """``cache_warming_decision``: before a prompt cache refresh, each handler may return
        ``{"action": "warm" | "stop"}``; the last one given wins. A failing handler is reported and leaves
        the action as it was. Every handler sees the warmer's own economics and action."""
        proposed = action
        for ext, handler in self.dispatch.handlers("cache_warming_decision"):
            event = Event(
                "cache_warming_decision",
                warm_cost=warm_cost,
                miss_cost=miss_cost,
                continuation_probability=continuation_probability,
                action=proposed,
            )
            result = await self.dispatch.result(ext, handler, event)
            if not result or result.get("action") is None:
                continue
            if result["action"] in ("warm", "stop"):
                action = result["action"]
            else:
                problem = f"unknown action {result['action']!r} (warm or stop)"
                await self.report(ext, "cache_warming_decision", problem)
        return action

    def take_next_turn(self) -> list[CustomMessage]:
        """The custom messages queued with ``deliver_as="next_turn"`` (the queue is emptied)."""
        queued, self._next_turn = self._next_turn, []
        return queued

    def send_custom_message(
        self, message: CustomMessage, deliver: str | None, trigger: bool, ext: Extension
    ) -> None:
        session = self.session
        if deliver == "next_turn":
            self._next_turn.append(message)
        elif session.is_streaming:
            if deliver == "follow_up":
                session.agent.follow_up(message)
            else:
                session.agent.steer(message)
        elif trigger:
            self.spawn(session.agent.prompt(message), ext, "send_message")
        else:
            session.append_custom_message(message)

    def context_handlers(self) -> list[tuple[str, Callable[..., Any]]]:
        """The ``context`` handlers in load order, for the context engine (their errors fail the request)."""
        if self._context_handlers is None:
            self._context_handlers = [
                (ext.name, self.hooks.context_handler(ext, handler))
                for ext, handler in self.dispatch.handlers("context")
            ]
        return self._context_handlers

    # --- lifecycle ----------------------------------------------------------------------------------

    async def start(
        self,
        *,
        reason: str = "startup",
        watch: bool = False,
        discover_reason: str | None = None,
        previous_session_file: str | None = None,
    ) -> None:
        """Finish async registrations, then ``session_start`` (with ``previous_session_file`` after a
        switch that left a saved session) and ``resources_discover`` (with ``discover_reason``, by default
        ``reason``)."""
        if watch:
            self.start_watching()
        if self._started:
            return
        self._started = True
        pending, self._pending = self._pending, []
        for ext, work in pending:
            try:
                await work
            except Exception as exc:
                self._unload(ext)
                message = f'Failed to load extension "{ext.path}": {type(exc).__name__}: {exc}'
                log.warning(message)
                self.dispatch.queued_errors.append(self.dispatch.error_payload(ext, "load", message))
        queued, self.dispatch.queued_errors = self.dispatch.queued_errors, []
        for payload in queued:
            await self.session.emit(ExtensionError.from_payload(payload))
        self.session.restore_panel_state()
        previous = {"previous_session_file": previous_session_file} if previous_session_file else {}
        await self.notify("session_start", timeout=self.lifecycle_timeout, reason=reason, **previous)
        await self.emit_resources_discover(discover_reason or reason)

    async def ensure_started(self) -> None:
        if not self._started:
            await self.start()

    def start_watching(self) -> None:
        """Reload when a loaded extension's file changes (see `pi_tui.extensions.reload`)."""
        if self._watcher is None and not self._closed:
            from .reload import ExtensionWatcher

            self._watcher = ExtensionWatcher(self)
            self._watcher.start()

    def watched_paths(self) -> list[Path]:
        return [ext.source.path for ext in self.extensions] + [
            e.path for e in self._sources if not any(x.source == e for x in self.extensions)
        ]

    async def wait_for_reload(self) -> None:
        """Return after the next reload has finished (hot reload is asynchronous)."""
        if self._reloaded is None:
            self._reloaded = asyncio.Event()
        await self._reloaded.wait()

    async def wait_watching(self) -> None:
        """Return once the file watcher records changes (after ``start(watch=True)``)."""
        if self._watcher is not None:
            await self._watcher.wait_ready()

    async def shutdown(self) -> None:
        """``session_shutdown`` (when started), then wait briefly for background handler work."""
        if self._closed:
            return
        self._closed = True
        if self._watcher is not None:
            await self._watcher.stop()
        if self._started:
            await self.notify("session_shutdown", timeout=self.lifecycle_timeout, reason="quit")
        for _, work in self._pending:
            if isinstance(work, Coroutine):
                work.close()  # an async register() that never ran: no "never awaited" warning
        self._pending = []
        await self.drain(timeout=self.shutdown_grace)
        for task in list(self._background):
            task.cancel()
