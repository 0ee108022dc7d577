"""Ending a finished print-mode run without Python's interpreter teardown.

After the last exit hook, Python tears the interpreter down: it clears every module and frees every
object still alive, one by one. After a big session that is hundreds of thousands of records, dicts
and strings (about 0.05 s of CPU at 100,000 entries) that the operating system reclaims anyway when the
process ends. `end_process` does what that teardown does that anyone can observe (non-daemon threads
finished, `atexit` hooks run, stdout and stderr flushed) and then ends the process with `os._exit`.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading

__all__ = ["end_process"]


def end_process(code: int) -> None:
    """End the process with exit status ``code`` once nothing can be lost by skipping the teardown.

    Returns (and the caller exits the usual way) when a non-daemon thread is still running, which the
    interpreter would wait for, when a profiler or tracer is attached (``python -m cProfile`` writes its
    report after the program returns), or when flushing stdout or stderr fails, which the interpreter
    reports in its own way (a closed pipe, say).
    """
    if sys.getprofile() is not None or sys.gettrace() is not None:
        return
    main = threading.main_thread()
    if any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate()):
        return
    atexit._run_exitfuncs()  # every registered hook, last registered first, as the interpreter runs them
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return
    os._exit(code)
