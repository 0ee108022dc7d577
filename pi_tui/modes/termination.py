"""SIGTERM and SIGHUP end a headless run the way Ctrl+C does, with the signal's exit code.

Without a handler, Python dies at once on SIGTERM: the session file misses what was pending and the running
tool's process group is left to the watchdog (`pi_tui.tools.watchdog`). With `cancel_on_termination`
the run's task is cancelled instead, so the running tool kills its process group, the session is closed
normally, and the caller exits with 128 + the signal number (143 for SIGTERM, 129 for SIGHUP).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["cancel_on_termination", "TERMINATING_SIGNALS"]

TERMINATING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


@contextmanager
def cancel_on_termination(task: asyncio.Task[object]) -> Iterator[list[int]]:
    """While inside, SIGTERM/SIGHUP cancel ``task``; yields the list the received signals are added to.

    Must be entered on the event loop's thread (it uses ``loop.add_signal_handler``); where signal
    handlers cannot be installed (not the main thread, Windows) it does nothing.
    """
    loop = asyncio.get_running_loop()
    received: list[int] = []

    def on_signal(signum: int) -> None:
        received.append(signum)
        task.cancel()

    installed = []
    for sig in TERMINATING_SIGNALS:
        try:
            loop.add_signal_handler(sig, on_signal, int(sig))
        except (NotImplementedError, RuntimeError, ValueError):
            continue
        installed.append(sig)
    try:
        yield received
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
