"""SIGTERM, SIGHUP and a lost terminal end the full-screen app promptly, whatever the terminal does.

The normal way out is the app's quit: the session is closed (a streaming answer is aborted and saved, the
running tool's process group is stopped), the terminal restored, and the process exits with 128 + the
signal (143 for SIGTERM, 129 for SIGHUP or a lost terminal), as print and RPC modes do. Two things could
stop that from happening, and `ExitGuard` deals with both:

- The app's thread may be stuck writing to a terminal that does not read (Textual's output queue is full):
  the handler runs anyway (a Python signal handler interrupts the wait) and cuts the output first, which
  empties the queue, then asks the event loop to quit.
- Something may keep the quit from finishing (an extension's shutdown hook that hangs, a thread that does
  not end): once `DEADLINE` seconds have passed since the request, the terminal's modes are put back as
  well as can be done without waiting and the process ends with the same code. Entries already in the
  session file are safe (each is appended whole as it happens); only what the quit had not written yet is
  lost in that case.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType

__all__ = ["ExitGuard", "DEADLINE"]

DEADLINE = 1.5
"""Seconds between a terminating signal (or a lost terminal) and a forced exit."""

_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class ExitGuard:
    """Installs the SIGTERM/SIGHUP handlers of the full-screen app and enforces the exit deadline.

    Args:
        quit: Runs on the event loop: the app's normal quit, with the exit code.
        cut: Drops all further terminal output (called from a signal handler or a driver thread: it
            must only set a flag).
        restore: Puts the terminal's modes back without waiting (before a forced exit).
    """

    def __init__(
        self, quit: Callable[[int], object], cut: Callable[[], None], restore: Callable[[], None]
    ) -> None:
        self._quit = quit
        self._cut = cut
        self._restore = restore
        self.code: int | None = None
        """The exit code once a signal or a lost terminal asked the app to leave."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous: dict[int, Callable[[int, FrameType | None], object] | int] = {}
        self._wake_r, self._wake_w = os.pipe()

    def install(self) -> bool:
        """Handle SIGTERM and SIGHUP from now on; False where that is impossible (not the main thread)."""
        if threading.current_thread() is not threading.main_thread():
            return False
        self._loop = asyncio.get_running_loop()
        for sig in _SIGNALS:
            previous = signal.signal(sig, self._on_signal)
            self._previous[sig] = signal.SIG_DFL if previous is None else previous
        threading.Thread(target=self._enforce_deadline, name="pi-tui-exit-deadline", daemon=True).start()
        return True

    def uninstall(self) -> None:
        """Give the signals back to their previous handlers (the app has left)."""
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        self._previous.clear()

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self.trigger(128 + signum)

    def trigger(self, code: int) -> None:
        """Leave with ``code``: cut the output, ask the loop to quit, start the deadline. Safe to call from
        a signal handler or any thread; only the first call counts."""
        if self.code is not None:
            return
        self.code = code
        self._cut()
        try:
            os.write(self._wake_w, b"x")  # starts the deadline (no lock: a signal may interrupt anything)
        except OSError:
            pass
        loop = self._loop
        if loop is not None:
            try:
                loop.call_soon_threadsafe(self._quit, code)
            except RuntimeError:  # the loop has closed: the app is leaving already
                pass

    def _enforce_deadline(self) -> None:
        try:
            os.read(self._wake_r, 1)
        except OSError:
            return
        time.sleep(DEADLINE)
        self._restore()
        os._exit(self.code if self.code is not None else 1)
