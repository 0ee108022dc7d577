"""Running extension handlers: the handler table, calling one handler, and reporting its failure.

`Dispatch` is what the runner and its helpers (`loop_hooks`, `outside_turn`, the session events) call to
run handlers, so none of them reaches into the runner. A handler is called with as many of
``(event, ctx)`` as it accepts, an awaitable result runs within the hook budget, and a failure becomes
an ``extension_error`` runtime event (not one caused by the run's abort, `HookAborted`).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from pi_tui.agent.events import ExtensionError, ExtensionErrorPayload, RuntimeEvent
from pi_tui.context.hooks import ContextEvent

from .budget import HookAborted
from .events import EVENTS, Event, normalize_result
from .registry import positional_arity

if TYPE_CHECKING:
    from .context import ExtensionContext
    from .extension import Extension

__all__ = ["Dispatch"]

log = logging.getLogger(__name__)

# Sync by contract (the provider builds its request synchronously); its own check reports awaiting.
_UNBUDGETED = frozenset({"before_provider_request"})


class Dispatch:
    """The handler table of the loaded extensions, the way to call a handler, and error reporting.

    Args:
        extensions: the loaded extensions, in load order.
        context_for: the ``ctx`` an extension's handlers receive.
        within_budget: awaits a handler's awaitable within the hook budget (the runner's).
        emit: emits a runtime event through the session.
        spawn: runs an awaitable in the background (the runner waits for it on shutdown).
    """

    def __init__(
        self,
        *,
        extensions: Callable[[], Sequence[Extension]],
        context_for: Callable[[Extension], ExtensionContext],
        within_budget: Callable[[Awaitable[Any], Extension, str], Awaitable[Any]],
        emit: Callable[[RuntimeEvent], Awaitable[None]],
        spawn: Callable[[Awaitable[object]], object],
    ) -> None:
        self._extensions = extensions
        self.context_for = context_for
        self._within_budget = within_budget
        self._emit = emit
        self._spawn = spawn
        self._arity: dict[Callable[..., Any], int] = {}
        self.errors: list[ExtensionErrorPayload] = []
        """Every reported failure, as its ``extension_error`` payload."""
        self.queued_errors: list[ExtensionErrorPayload] = []
        """Failures reported while no event loop ran (at load), emitted when the runner starts."""

    # --- the handler table ------------------------------------------------------------------------

    def handlers(self, event: str) -> list[tuple[Extension, Callable[..., Any]]]:
        """``(extension, handler)`` for ``event``, in load order."""
        return [(ext, handler) for ext in list(self._extensions()) for handler in ext.handlers.get(event, ())]

    def has_handlers(self, event: str) -> bool:
        return any(event in ext.handlers and ext.handlers[event] for ext in self._extensions())

    def forget_arities(self) -> None:
        """Drop the cached handler arities (after a reload the handlers are new functions)."""
        self._arity.clear()

    # --- calling ----------------------------------------------------------------------------------

    def call(
        self, ext: Extension, handler: Callable[..., Any], *args: Any, ctx: ExtensionContext | None = None
    ) -> Any:
        """Call ``handler`` with as many of ``(*args, ctx)`` as it accepts (result may be awaitable)."""
        arity = self._arity.get(handler)
        if arity is None:
            arity = positional_arity(handler)
            self._arity[handler] = arity
        full = (*args, ctx if ctx is not None else self.context_for(ext))
        result = handler(*full[:arity])
        # (the context engine's ContextEvent is not an Event, but has a type and the same budget)
        kind = args[0].type if args and isinstance(args[0], Event | ContextEvent) else None
        if inspect.isawaitable(result) and kind in EVENTS and kind not in _UNBUDGETED:
            return self._within_budget(result, ext, kind)
        return result

    async def invoke(self, ext: Extension, handler: Callable[..., Any], event: Event) -> tuple[bool, Any]:
        """Run one handler; ``(True, result)``, or ``(False, None)`` after reporting its exception."""
        try:
            result = self.call(ext, handler, event)
            if inspect.isawaitable(result):
                result = await result
            return True, result
        except Exception as exc:
            await self.report(ext, event.type, exc)
            return False, None

    async def result(
        self, ext: Extension, handler: Callable[..., Any], event: Event
    ) -> dict[str, Any] | None:
        """`invoke`, with the result normalised to a dict (None: nothing, or a failure, reported)."""
        ok, raw = await self.invoke(ext, handler, event)
        if not ok:
            return None
        try:
            return normalize_result(raw)
        except TypeError as exc:
            await self.report(ext, event.type, exc)
            return None

    # --- reporting --------------------------------------------------------------------------------

    def error_payload(self, ext: Extension, event: str, error: BaseException | str) -> ExtensionErrorPayload:
        """The ``extension_error`` payload of a failure (also logged and kept in `errors`)."""
        text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        log.warning("extension %s failed in %s: %s", ext.name, event, text)
        payload: ExtensionErrorPayload = {"extensionPath": ext.path, "extension": ext.name, "event": event, "error": text}
        self.errors.append(payload)
        return payload

    async def report(self, ext: Extension, event: str, error: BaseException | str) -> None:
        """Report a failed handler as an ``extension_error`` runtime event (not one stopped by abort)."""
        if isinstance(error, HookAborted):
            log.info("%s", error)
            return
        await self._emit(ExtensionError.from_payload(self.error_payload(ext, event, error)))

    def report_soon(self, ext: Extension, event: str, error: BaseException | str) -> None:
        """`report` from synchronous code (emitted on the event loop, or at start when there is none)."""
        if isinstance(error, HookAborted):
            log.info("%s", error)
            return
        payload = self.error_payload(ext, event, error)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self.queued_errors.append(payload)
            return
        self._spawn(self._emit(ExtensionError.from_payload(payload)))
