"""How long ``ctx.ui`` dialogs have been open, so the hook budget does not count a user's thinking time.

`pi_tui.extensions.ui.UIProxy` brackets every dialog (``select``, ``confirm``, ``input``, ``editor``) with
`DialogClock.opened` / `DialogClock.closed`; the runner's budget
(`pi_tui.extensions.budget.HookBudgetMixin.hook_timeout`) subtracts the dialog seconds that passed while
a handler ran. One clock per process: while any dialog is open, every handler's budget is paused (a
dialog holds the user, so nothing else is expected to progress).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["DIALOGS", "DialogClock"]


class DialogClock:
    """Counts the seconds during which at least one dialog was open."""

    def __init__(self) -> None:
        self._open = 0
        self._since = 0.0
        self._total = 0.0

    @property
    def is_open(self) -> bool:
        return self._open > 0

    def opened(self) -> None:
        if self._open == 0:
            self._since = time.monotonic()
        self._open += 1

    def closed(self) -> None:
        if self._open == 0:
            return
        self._open -= 1
        if self._open == 0:
            self._total += time.monotonic() - self._since

    def seconds(self) -> float:
        """Dialog-open seconds since the process started (a running total, for differences)."""
        return self._total + (time.monotonic() - self._since if self._open else 0.0)

    def timed(self, dialog: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        """``dialog`` with its open time counted."""

        async def run(*args: Any, **kwargs: Any) -> Any:
            self.opened()
            try:
                return await dialog(*args, **kwargs)
            finally:
                self.closed()

        return run


DIALOGS = DialogClock()
