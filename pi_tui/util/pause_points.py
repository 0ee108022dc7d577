"""Pause points: long work in a background thread lets the user's keys go first.

A thread that computes beside the UI thread (``/context``'s cache projection hashes a whole request of a
long session: ~0.5 s) takes the interpreter from it, and a key handled meanwhile waits for it again and
again: 20-40 ms of a keystroke's 33. A long loop calls `pause_point` now and then; a thread that runs it
inside `pausing` has the given ``wait`` called there, which sleeps while the keys come (a sleeping thread
holds no interpreter lock). Anywhere else `pause_point` costs one context-variable read.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["pause_point", "pausing", "sleep_while"]

_WAIT: ContextVar[Callable[[], None] | None] = ContextVar("pi_tui_pause_wait", default=None)


def pause_point() -> None:
    """Let the current thread's ``wait`` (`pausing`) run; nothing when there is none."""
    wait = _WAIT.get()
    if wait is not None:
        wait()


@contextmanager
def pausing(wait: Callable[[], None]) -> Iterator[None]:
    """Call ``wait`` at every `pause_point` reached in the body, in this thread only (a context
    variable: other threads and the event loop are not affected)."""
    token = _WAIT.set(wait)
    try:
        yield
    finally:
        _WAIT.reset(token)


def sleep_while(pending: Callable[[], float]) -> Callable[[], None]:
    """A ``wait`` for `pausing` that sleeps while ``pending()`` (seconds left until the keys count as
    paused, ≤ 0 when they did) says the keys are coming.

    Args:
        pending: safe to call from the worker thread (`WarmUpTurn.keys_pending`).
    """

    def wait() -> None:
        while (left := pending()) > 0:
            time.sleep(left)

    return wait
