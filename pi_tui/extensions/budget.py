"""The time budget of extension handlers, and abort while one runs.

An awaiting handler runs at most ``extensionHookTimeout`` seconds (default `HOOK_TIMEOUT`), not counting
time a ``ctx.ui`` dialog is open (`pi_tui.extensions.dialog_clock`); then it is cancelled and counts as
a handler that raised `HookTimeoutError`, which names the extension and the event. The handlers the
agent loop waits for (``context``, ``tool_call``, ``tool_result``, ``message``) are also cancelled by
`HookBudgetMixin.abort_hooks` (the run's abort) and fail with `HookAborted`, which is not reported.
Cancelling the caller cancels the handler too.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .extension import Extension
    from .host import SessionHost

__all__ = ["HOOK_TIMEOUT", "HookAborted", "HookBudgetMixin", "HookTimeoutError"]

HOOK_TIMEOUT = 120.0
"""Default seconds an awaited handler may run (``extensionHookTimeout``); dialog time is not counted."""


class HookTimeoutError(Exception):
    """A handler overran ``extensionHookTimeout``; the message names the extension and the event."""


class HookAborted(Exception):
    """The run was aborted while this handler ran (it was cancelled); not reported as an error."""


# Handlers the agent loop waits for: abort cancels them (input/before_agent_start end with the prompt).
_ABORTABLE_EVENTS = frozenset({"context", "tool_call", "tool_result", "message"})


class HookBudgetMixin:
    """`pi_tui.extensions.runner.ExtensionRunner`'s budget: `hook_timeout`, `_within_budget`, `abort_hooks`."""

    session: SessionHost
    _abortable_hooks: set[asyncio.Future[Any]]
    _aborted_hooks: set[asyncio.Future[Any]]

    def hook_timeout(self) -> float | None:
        """Seconds a handler may take (``extensionHookTimeout`` setting; 0 or a non-number: no limit)."""
        settings = self.session.settings
        value = settings.get("extensionHookTimeout", HOOK_TIMEOUT) if settings is not None else HOOK_TIMEOUT
        return float(value) if isinstance(value, int | float) and value > 0 else None

    async def _within_budget(self, awaitable: Awaitable[Any], ext: Extension, event: str) -> Any:
        """Await a handler for at most `hook_timeout` seconds, not counting time a ``ctx.ui`` dialog was
        open (a user thinking in a confirm must not time out the ``tool_call`` hook that asked); past
        that it is cancelled and fails the way a raising handler of that event fails (reported; a
        ``tool_call`` blocks, a ``context`` request fails). A handler the agent loop waits for is also
        cancelled by `abort_hooks` (the run's abort) and fails with `HookAborted`, which is not reported."""
        budget = self.hook_timeout()
        abortable = event in _ABORTABLE_EVENTS
        if budget is None and not abortable:
            return await awaitable
        from .dialog_clock import DIALOGS

        limit = math.inf if budget is None else budget
        task = asyncio.ensure_future(awaitable)
        if abortable:
            self._abortable_hooks.add(task)
        started, dialogs_before = time.monotonic(), DIALOGS.seconds()
        used = 0.0
        try:
            while used < limit:
                wait = None if budget is None else max(limit - used, 0.01)
                done, _ = await asyncio.wait({task}, timeout=wait)
                if done:
                    if task.cancelled() and task in self._aborted_hooks:
                        raise HookAborted(
                            f'the {event} handler of extension "{ext.name}" was stopped by abort'
                        )
                    return task.result()
                used = time.monotonic() - started - (DIALOGS.seconds() - dialogs_before)
        except asyncio.CancelledError:  # the caller was cancelled (abort, shutdown): so is the handler
            _cancel_quietly(task)
            raise
        finally:
            self._abortable_hooks.discard(task)
            self._aborted_hooks.discard(task)
        _cancel_quietly(task)
        raise HookTimeoutError(
            f'extension "{ext.name}" did not finish its {event} handler within {limit:g}s '
            "(setting extensionHookTimeout); it was cancelled"
        )

    def abort_hooks(self) -> None:
        """Cancel the handlers the agent loop is waiting for (``context``, ``tool_call``, ``tool_result``,
        ``message``): `pi_tui.runtime.agent_session.AgentSession.abort` calls it, so abort works while
        one of them hangs. Each fails with `HookAborted` (a ``tool_call`` blocks its call)."""
        for task in list(self._abortable_hooks):
            self._aborted_hooks.add(task)
            task.cancel()


def _cancel_quietly(task: asyncio.Future[Any]) -> None:
    """Cancel ``task`` and consume whatever it ends with (a handler that swallows the cancellation and
    raises must not log "exception was never retrieved")."""
    task.cancel()
    task.add_done_callback(lambda done: done.cancelled() or done.exception())
