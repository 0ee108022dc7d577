"""``pi.events``: a bus extensions use to talk to each other (``on(name, fn)`` / ``emit(name, data)``)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["EventBus", "ExtensionBus"]

ErrorSink = Callable[[str, str, BaseException], None]
Spawner = Callable[[Awaitable[object], str, str], None]


class EventBus:
    """The shared bus. Handlers run in subscription order; async handlers run as background tasks.

    Args:
        on_error: ``(extension name, event name, exception)`` for a handler that raised.
        spawn: ``(awaitable, extension name, event name)`` runs an async handler's coroutine.
        on_emit: called with each emitted name (marks panels that refresh on it).
    """

    def __init__(
        self,
        on_error: ErrorSink,
        spawn: Spawner,
        on_emit: Callable[[str], None] = lambda _name: None,
    ) -> None:
        self._handlers: list[tuple[str, str, Callable[[Any], Any]]] = []
        self._on_error = on_error
        self._spawn = spawn
        self._on_emit = on_emit

    def subscribe(self, owner: str, name: str, handler: Callable[[Any], Any]) -> Callable[[], None]:
        entry = (owner, name, handler)
        self._handlers.append(entry)

        def unsubscribe() -> None:
            if entry in self._handlers:
                self._handlers.remove(entry)

        return unsubscribe

    def remove_owner(self, owner: str) -> None:
        self._handlers = [h for h in self._handlers if h[0] != owner]

    def emit(self, name: str, data: Any = None) -> None:
        self._on_emit(name)
        for owner, event, handler in list(self._handlers):
            if event != name:
                continue
            try:
                result = handler(data)
                if inspect.isawaitable(result):
                    self._spawn(result, owner, f"events:{name}")
            except Exception as exc:
                self._on_error(owner, f"events:{name}", exc)


class ExtensionBus:
    """One extension's handle on the shared bus (``pi.events``)."""

    def __init__(self, bus: EventBus, owner: str) -> None:
        self._bus = bus
        self._owner = owner

    def on(self, name: str, handler: Callable[[Any], Any]) -> Callable[[], None]:
        """Call ``handler(data)`` for every ``emit(name, data)``. Returns an unsubscribe function."""
        return self._bus.subscribe(self._owner, name, handler)

    def emit(self, name: str, data: Any = None) -> None:
        """Deliver ``data`` to every extension listening on ``name``."""
        self._bus.emit(name, data)
