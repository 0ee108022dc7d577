"""Threads that compute beside the UI thread hand the interpreter back sooner while they run.

CPython lets a thread that wants the interpreter lock wait up to the switch interval (5 ms by default)
before the running thread gives it up. The UI thread takes the lock again after every wait of its event
loop (a key read, a frame written), so a key handled while a background thread computes (the work ahead
of the big screens, ``/context``'s cache projection) waited several such intervals: tens of
milliseconds, most of a keystroke's budget. `quick_handoff` lowers the interval to `SWITCH_S` while any
such thread runs and puts the previous one back when the last one ends. The work costs what it cost:
only who runs when changes.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["SWITCH_S", "quick_handoff"]

SWITCH_S = 0.001
"""The switch interval while a background thread computes (seconds)."""

_lock = threading.Lock()
_running = 0
_saved = 0.0


@contextmanager
def quick_handoff() -> Iterator[None]:
    """Run the body (a background thread's work) with the switch interval at `SWITCH_S`; nested and
    concurrent uses share it, and the interval set before the first comes back after the last."""
    global _running, _saved
    with _lock:
        if _running == 0:
            _saved = sys.getswitchinterval()
            sys.setswitchinterval(min(SWITCH_S, _saved))
        _running += 1
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if _running == 0:
                sys.setswitchinterval(_saved)
