"""Wake the event loop whenever a signal arrives, so the app's Python signal handlers run at once.

The full-screen app handles several signals with Python-level handlers (`signal.signal`): Textual's
driver suspends on SIGTSTP and takes the terminal back on SIGCONT, and redraws on SIGWINCH; `ExitGuard`
quits on SIGTERM and SIGHUP. Python runs such a handler only when the main thread next executes Python
code. The kernel hands a process-directed signal to any thread that does not block it; when that is not
the main thread, which is asleep in the event loop's wait, nothing wakes it and the handler waits for the
next key, timer or network packet. After Ctrl+Z and ``fg`` this left the app stopped-looking and silent
(about one resume in seven when the machine was busy).

`SignalWakeup` gives Python a wakeup descriptor (`signal.set_wakeup_fd`): the low-level handler writes the
signal's number to it after recording the signal, on whatever thread it runs, and the event loop watches
the other end, so the main thread wakes and runs the pending handlers straight away.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import threading

__all__ = ["SignalWakeup"]


class SignalWakeup:
    """Wires Python's signal wakeup descriptor to the running event loop (see the module doc)."""

    def __init__(self) -> None:
        self._read: socket.socket | None = None
        self._write: socket.socket | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def install(self) -> bool:
        """Wake the running loop on every signal from now on.

        Must be called on the main thread with the loop running. Returns False, changing nothing, off
        the main thread or when a wakeup descriptor is already set (asyncio sets its own once a handler
        is added with ``loop.add_signal_handler``, and that one wakes the loop already).
        """
        if threading.current_thread() is not threading.main_thread() or self._write is not None:
            return False
        loop = asyncio.get_running_loop()
        read, write = socket.socketpair()
        read.setblocking(False)
        write.setblocking(False)
        # a full buffer only means a wake-up is already pending: no warning for it
        previous = signal.set_wakeup_fd(write.fileno(), warn_on_full_buffer=False)
        if previous != -1:
            signal.set_wakeup_fd(previous)
            read.close()
            write.close()
            return False
        self._read, self._write, self._loop = read, write, loop
        loop.add_reader(read.fileno(), self._drain)
        return True

    def _drain(self) -> None:
        """Empty the descriptor. Running this (Python code on the main thread) is what lets the pending
        handlers run; the bytes themselves are only signal numbers."""
        read = self._read
        if read is None:
            return
        try:
            while read.recv(512):
                pass
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            pass

    def uninstall(self) -> None:
        """Stop writing to the descriptor and close it (on the main thread)."""
        write, read = self._write, self._read
        if write is None or read is None:
            return
        current = signal.set_wakeup_fd(-1)
        if current != write.fileno():  # someone replaced ours since: keep theirs
            signal.set_wakeup_fd(current)
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.remove_reader(read.fileno())
        self._read = self._write = None
        self._loop = None
        read.close()
        write.close()
