"""The tests' processes start with Ctrl+C (SIGINT) at its default, as in a terminal, however pytest began.

A process started in the background by a script (``pytest ... &``, a job runner without job control)
inherits SIGINT *ignored*, and so does every program it starts: pi-tui then keeps ignoring it, as a
program should that a shell put in the background. The tests that interrupt pi-tui (Ctrl+C in print
mode, SIGINT during a bash call, Ctrl+C typed in a terminal) waited for an exit that never came, on every
run started that way. Setting a handler here undoes the inherited ``SIG_IGN``: programs started from now
on begin with the default again (a handler, unlike ``SIG_IGN``, is not inherited across ``exec``).
"""

from __future__ import annotations

import signal
import threading

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    ):
        signal.signal(signal.SIGINT, signal.default_int_handler)
