"""SIGTERM and SIGHUP end a headless run the way Ctrl+C does, with the signal's exit code.

Without a handler, Python dies at once on SIGTERM: the session file misses what was pending and the running
tool's process group is left to the watchdog (`pi_tui.tools.watchdog`). With `cancel_on_termination`
the run's task is cancelled instead, so the running tool kills its process group, the session is closed
normally, and the caller exits with 128 + the signal number (143 for SIGTERM, 129 for SIGHUP).

The event loop may be stuck, though: an extension's handler that blocks (``time.sleep``, a busy loop)
never gives it back, and a handler the loop would run is never run. `TerminationGuard` therefore takes the
signals with a plain Python handler, which runs even then, and gives the normal way out `DEADLINE`
seconds; after that the process exits with the same code without waiting. Every session entry already
written is in the file (each is appended whole as it happens); only what the stuck code had not
finished is lost.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["DEADLINE", "TERMINATING_SIGNALS", "TerminationGuard", "cancel_on_termination"]

TERMINATING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)

DEADLINE = 5.0
"""Seconds between a terminating signal and a forced exit, when the normal way out has not ended the
process by then."""


class TerminationGuard:
    """SIGTERM/SIGHUP run ``on_signal(signum)`` on the event loop, and end the process `DEADLINE` seconds
    later if it is still there.

    Args:
        on_signal: the normal way out (cancel the run, close the input); runs on the loop, first signal only.
        deadline: seconds before the forced exit.
    """

    def __init__(self, on_signal: Callable[[int], object], deadline: float = DEADLINE) -> None:
        self._on_signal = on_signal
        self._deadline = deadline
        self.received: list[int] = []
        """The signals received, in order."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous: dict[int, Callable[[int, FrameType | None], object] | int] = {}
        self._wake: tuple[int, int] | None = None

    def install(self) -> bool:
        """Take SIGTERM and SIGHUP from now on (on the loop's thread); False where that is impossible (not
        the main thread, or no signals)."""
        if threading.current_thread() is not threading.main_thread():
            return False
        self._loop = asyncio.get_running_loop()
        self._wake = os.pipe()
        # started now, not in the signal handler: starting a thread there could wait on a lock the
        # interrupted code holds
        threading.Thread(
            target=self._enforce, args=(self._wake[0],), name="pi-tui-stop-deadline", daemon=True
        ).start()
        for sig in TERMINATING_SIGNALS:
            try:
                previous = signal.signal(sig, self._handle)
            except (OSError, ValueError):
                continue
            self._previous[sig] = signal.SIG_DFL if previous is None else previous
        return True

    def uninstall(self) -> None:
        """Give the signals back; a deadline already running still ends the process."""
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        self._previous.clear()
        if self._wake is not None and not self.received:
            os.close(self._wake[1])  # the deadline thread reads end of file and returns
            self._wake = None

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        first = not self.received
        self.received.append(signum)
        if not first:
            return
        if self._wake is not None:
            try:
                os.write(self._wake[1], bytes([signum]))
            except OSError:
                pass
        loop = self._loop
        if loop is not None:
            try:
                loop.call_soon_threadsafe(self._on_signal, signum)
            except RuntimeError:  # the loop has closed: the process is on its way out already
                pass

    def _enforce(self, wake: int) -> None:
        try:
            data = os.read(wake, 1)
        except OSError:
            return
        finally:
            os.close(wake)
        if not data:
            return
        signum = data[0]
        threading.Event().wait(self._deadline)
        name = signal.Signals(signum).name
        message = (
            f"Stopped by {name}: still busy {self._deadline:g} s later (an extension handler that does not "
            "return?); exiting without waiting. The session file holds every entry written so far.\n"
        )
        try:
            os.write(2, message.encode())
        finally:
            os._exit(128 + signum)


@contextmanager
def cancel_on_termination(task: asyncio.Task[object], deadline: float = DEADLINE) -> Iterator[list[int]]:
    """While inside, SIGTERM/SIGHUP cancel ``task``; yields the list the received signals are added to.

    Must be entered on the event loop's thread; where signal handlers cannot be installed (not the main
    thread, Windows) it does nothing. A process still running ``deadline`` seconds after the signal
    (its loop stuck in an extension's code) exits with 128 + the signal number.
    """
    guard = TerminationGuard(lambda _signum: task.cancel(), deadline)
    guard.install()
    try:
        yield guard.received
    finally:
        guard.uninstall()
