"""The per-test time limit (pytest-timeout's ``timeout``), made to hold for asyncio and TUI tests.

pytest-timeout's ``signal`` method raises ``Failed`` in whatever Python code the main thread runs when the
alarm goes off. In an asyncio test that is often a task's step (a Textual message handler, a stream
reader), and a task keeps any exception other than ``SystemExit``/``KeyboardInterrupt`` to itself: the
timeout ended up in the app's task and the test ran on until some later wait gave up (a Textual pilot
waits 30 s), or forever. The alarm fires once only.

This plugin takes over pytest-timeout's timer (its ``pytest_timeout_set_timer`` hook) and keeps its
settings (the ini ``timeout``, ``--timeout``, ``@pytest.mark.timeout``):

1. At the limit, the alarm notes where the test was stuck: the main thread's frame, what each pending
   asyncio task awaits, and any other thread still running. It raises `TestTimedOut`, a ``SystemExit``,
   which asyncio tasks and event loops pass on instead of keeping, so the test's call ends at once.
2. Whatever the code under test did with that exception (caught it, kept it in a task), the test's report
   says it failed, naming the test and where it was stuck.
3. If the test has still not finished ``timeout_grace`` seconds later (default 10; an ``except
   BaseException`` that loops, a teardown that hangs), the message and every thread's stack go to stderr
   and the process ends. Under xdist the controller reports the test its worker crashed in and starts
   another worker.

The limit covers set-up, call and teardown, as pytest-timeout's default does, and is not stopped by a
failure (pytest-timeout stops it when a test fails, leaving a hung teardown without a limit). A debugger
(``--pdb``, ``breakpoint()``) turns the limit off as pytest-timeout does.
"""

from __future__ import annotations

import asyncio
import faulthandler
import os
import signal
import sys
import sysconfig
import threading
import time
import traceback
from collections.abc import Generator, Iterable
from pathlib import Path
from types import FrameType

import pytest
import pytest_timeout

__all__ = ["TestTimedOut", "where_stuck"]

_REPO = Path(__file__).resolve().parents[1]
_GRACE_DEFAULT = 10.0
_TIMED_OUT = pytest.StashKey[str]()
_REPORTED = pytest.StashKey[bool]()


class TestTimedOut(SystemExit):
    """A test ran past its time limit.

    A ``SystemExit`` so that asyncio tasks and loops pass it on; pytest reports it as the test's failure.
    """

    __test__ = False  # not a test class, whatever its name


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "timeout_grace",
        "seconds after the time limit before a test that has not finished ends its process",
        default=str(_GRACE_DEFAULT),
    )


# Python's own library and the installed packages: frames there say less than the code calling them
_LIBRARIES = tuple(
    {Path(sysconfig.get_paths(vars=scheme)[key]) for key in ("stdlib", "platstdlib", "purelib", "platlib")
     for scheme in ({"base": sys.prefix, "platbase": sys.prefix},
                    {"base": sys.base_prefix, "platbase": sys.base_prefix})}
)  # fmt: skip


def _own_frame(frames: Iterable[traceback.FrameSummary]) -> traceback.FrameSummary | None:
    """The innermost frame of the tests' or the project's code, outside Python's library and packages."""
    found = None
    for frame in frames:
        path = Path(frame.filename)
        if path.is_absolute() and not any(path.is_relative_to(lib) for lib in _LIBRARIES):
            found = frame
    return found


def _describe(frames: list[traceback.FrameSummary]) -> str:
    """Where a stack is: its innermost frame, and the innermost frame of the repository's code if not that."""
    if not frames:
        return "(no frames)"

    def at(frame: traceback.FrameSummary) -> str:
        path = Path(frame.filename)
        shown = path.relative_to(_REPO) if path.is_relative_to(_REPO) else path
        return f"{shown}:{frame.lineno} in {frame.name}"

    inner = frames[-1]
    own = _own_frame(frames)
    if own is None or own is inner:
        return at(inner)
    return f"{at(own)} (inside {at(inner)})"


def _listed(kind: str, entries: list[tuple[str, list[traceback.FrameSummary]]], limit: int) -> list[str]:
    """Lines for tasks or threads: those in the tests' or the project's code, then a count of the rest.

    The rest wait in library code only (Textual's idle message pumps, a thread pool's idle workers): they
    say little about what the test waited for, and a TUI test has a hundred of them.
    """
    own = [f"{kind} {name}: {_describe(stack)}" for name, stack in entries if _own_frame(stack) is not None]
    rest = [f"{kind} {name}: {_describe(stack)}" for name, stack in entries if _own_frame(stack) is None]
    shown = own[:limit] if own else rest[:3]
    lines = shown
    if len(entries) > len(shown):
        lines.append(f"... and {len(entries) - len(shown)} more {kind}s, in library code only")
    return lines


def where_stuck(frame: FrameType | None) -> str:
    """Where the process was when the limit struck: the main thread, asyncio tasks, other threads.

    Args:
        frame: the main thread's frame the alarm interrupted.
    """
    lines = [f"main thread: {_describe(traceback.extract_stack(frame)) if frame else '(unknown)'}"]
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if loop is not None:
        tasks = [
            (
                task.get_name(),
                [
                    traceback.FrameSummary(f.f_code.co_filename, f.f_lineno, f.f_code.co_name, line=None)
                    for f in task.get_stack()
                ],
            )
            for task in asyncio.all_tasks(loop)
            if not task.done()
        ]
        lines += _listed("task", tasks, 12)
    frames = sys._current_frames()
    threads = [
        (thread.name, traceback.extract_stack(frames[thread.ident]))
        for thread in threading.enumerate()
        if thread is not threading.main_thread() and thread.ident in frames and not thread.daemon
    ]
    lines += _listed("thread", threads, 8)
    return "\n".join(lines)


class _Watchdog:
    """One daemon thread that ends the process when a timed-out test does not finish within its grace."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._deadline: float | None = None
        self._message = ""
        self._config: pytest.Config | None = None
        self._thread: threading.Thread | None = None

    def arm(self, deadline: float, message: str, config: pytest.Config) -> None:
        with self._lock:
            self._deadline = deadline
            self._message = message
            self._config = config
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="test time limit", daemon=True)
                self._thread.start()
            self._lock.notify()

    def disarm(self) -> None:
        with self._lock:
            self._deadline = None
            self._lock.notify()

    def _run(self) -> None:
        with self._lock:
            while True:
                if self._deadline is None:
                    self._lock.wait()
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._lock.wait(left)
                    continue
                # pytest captures the output (file descriptor 2 too): what follows must reach the terminal
                capture = self._config.pluginmanager.getplugin("capturemanager") if self._config else None
                if capture is not None:
                    capture.suspend_global_capture(in_=True)
                sys.stderr.write(
                    f"\n{self._message}\nIt did not end within its grace; ending this process.\n"
                )
                sys.stderr.flush()
                faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
                sys.stderr.flush()
                os._exit(1)


_watchdog = _Watchdog()


def _debugging() -> bool:
    return bool(pytest_timeout.is_debugging())


@pytest.hookimpl(tryfirst=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: pytest_timeout.Settings) -> bool | None:
    limits = settings
    if limits.method != "signal" or threading.current_thread() is not threading.main_thread():
        return None  # pytest-timeout's own thread method: it ends the process at the limit
    grace = float(str(item.config.getini("timeout_grace")))

    def on_alarm(_signum: int, frame: FrameType | None) -> None:
        if not limits.disable_debugger_detection and _debugging():
            return
        message = (
            f"{item.nodeid} ran past its time limit of {limits.timeout:g} s. Where it was:\n"
            f"{where_stuck(frame)}"
        )
        item.stash[_TIMED_OUT] = message
        _watchdog.arm(time.monotonic() + grace, message, item.config)
        raise TestTimedOut(message)

    def cancel() -> None:
        """Nothing: pytest-timeout cancels when a test fails (``pytest_exception_interact``) and after its
        teardown; the limit holds until the teardown ends (`pytest_runtest_protocol` below ends it)."""

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limits.timeout)
    item.cancel_timeout = cancel  # type: ignore[attr-defined]  # where pytest-timeout looks for it
    return True


def _stop() -> None:
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    _watchdog.disarm()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    try:
        return (yield)
    finally:
        if threading.current_thread() is threading.main_thread():
            _stop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """The first report after the limit struck fails with its message, whatever the test did with it."""
    report = yield
    message = item.stash.get(_TIMED_OUT, None)
    if message is None:
        return report
    if not item.stash.get(_REPORTED, False):
        item.stash[_REPORTED] = True
        before = "" if report.passed or report.longrepr is None else str(report.longrepr)
        if before and not (call.excinfo and isinstance(call.excinfo.value, TestTimedOut)):
            # the test caught the timeout and went on to fail otherwise: that failure follows the message
            message += f"\n\nThen:\n{before[-3000:]}"
        report.outcome = "failed"
        report.longrepr = message
    elif report.when == "teardown" and call.excinfo and isinstance(call.excinfo.value, TestTimedOut):
        # the same timeout again: a task that kept it (Textual's app task) is awaited while tearing down
        report.outcome = "passed"
        report.longrepr = None
    return report
