"""Telling a real cancellation of the running task from a stray `CancelledError`."""

from __future__ import annotations

import asyncio

__all__ = ["stray_cancellation"]


def stray_cancellation() -> bool:
    """True when a `CancelledError` being handled was not a request to cancel the current task.

    Code that awaits a future or task somebody else cancelled (a widget stopping its own helper task,
    say) sees `CancelledError` although nobody cancelled *it*. Event dispatchers report such an error
    like any other failure of a listener; a real cancellation (``Task.cancelling()`` > 0: abort,
    shutdown) must go on up.
    """
    task = asyncio.current_task()
    return task is not None and task.cancelling() == 0
