"""`SignalWakeup`: a signal handled on another thread still runs its Python handler at once."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Iterator
from types import FrameType

import pytest

from pi_tui.modes.interactive.signal_wakeup import SignalWakeup


class Usr1:
    """When the Python handler for SIGUSR1 ran, and a future the handler completes (so the wait for it ends
    as soon as the handler has run, and only then)."""

    def __init__(self) -> None:
        self.ran: list[float] = []
        self.done: asyncio.Future[None] | None = None

    def handler(self, _signum: int, _frame: FrameType | None) -> None:
        self.ran.append(time.monotonic())
        done = self.done
        if done is not None:
            # the handler runs on the loop's thread once the loop is awake: wake the waiting test through
            # the loop, as any other callback would
            done.get_loop().call_soon_threadsafe(lambda: done.done() or done.set_result(None))


@pytest.fixture
def usr1_handler() -> Iterator[Usr1]:
    """A Python handler for SIGUSR1 that notes when it ran; the previous handler is put back after."""
    usr1 = Usr1()
    previous = signal.signal(signal.SIGUSR1, usr1.handler)
    try:
        yield usr1
    finally:
        signal.signal(signal.SIGUSR1, previous)


async def _signal_from_another_thread(usr1: Usr1, wait: float) -> float | None:
    """A helper thread sends SIGUSR1 to itself while the loop's thread sleeps in its wait; seconds until the
    Python handler ran (None: not within ``wait``).

    The helper signals itself, not the loop's thread: ``signal.pthread_kill`` called on the loop's thread
    would run the pending handler itself on its way out, whether or not anything wakes the loop."""
    go = threading.Event()
    release = threading.Event()

    def signal_self() -> None:
        if go.wait(wait):
            signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)
        release.wait(wait)

    helper = threading.Thread(target=signal_self, name="signal-target")
    helper.start()
    loop = asyncio.get_running_loop()
    usr1.done = loop.create_future()
    sent = time.monotonic()
    # the loop's thread is asleep in the selector by the time the helper signals
    loop.call_later(0.05, go.set)
    try:
        # One wait, no timers in between: only the wakeup descriptor can wake the loop's thread before
        # ``wait`` ends, and only the handler (which needs that thread) ends the wait early.
        await asyncio.wait([usr1.done], timeout=wait)
    finally:
        go.set()
        release.set()
        helper.join()
    return usr1.ran[0] - sent if usr1.ran else None


async def test_a_signal_handled_on_another_thread_runs_its_handler_at_once(usr1_handler: Usr1) -> None:
    wakeup = SignalWakeup()
    assert wakeup.install()
    try:
        took = await _signal_from_another_thread(usr1_handler, wait=5.0)
    finally:
        wakeup.uninstall()
    assert took is not None and took < 2.0


async def test_uninstall_gives_the_descriptor_back() -> None:
    wakeup = SignalWakeup()
    assert wakeup.install()
    assert not SignalWakeup().install()  # one is set already: a second leaves it alone
    wakeup.uninstall()
    assert signal.set_wakeup_fd(-1) == -1
    wakeup.uninstall()  # twice is harmless


async def test_it_leaves_a_descriptor_someone_else_set(usr1_handler: Usr1) -> None:
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR2, lambda: None)  # asyncio sets its own wakeup descriptor
    try:
        assert not SignalWakeup().install()
        took = await _signal_from_another_thread(usr1_handler, wait=5.0)  # asyncio's wakes the loop too
        assert took is not None and took < 2.0
    finally:
        loop.remove_signal_handler(signal.SIGUSR2)


def test_off_the_main_thread_it_does_nothing() -> None:
    results: list[bool] = []

    def run() -> None:
        async def attempt() -> bool:
            return SignalWakeup().install()

        results.append(asyncio.run(attempt()))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert results == [False]
