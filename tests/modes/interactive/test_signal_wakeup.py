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


@pytest.fixture
def usr1_handler() -> Iterator[list[float]]:
    """A Python handler for SIGUSR1 that notes when it ran; the previous handler is put back after."""
    ran: list[float] = []

    def handler(_signum: int, _frame: FrameType | None) -> None:
        ran.append(time.monotonic())

    previous = signal.signal(signal.SIGUSR1, handler)
    try:
        yield ran
    finally:
        signal.signal(signal.SIGUSR1, previous)


async def _signal_from_another_thread(ran: list[float], wait: float) -> float | None:
    """Deliver SIGUSR1 to a helper thread while the loop's thread sleeps in its wait; seconds until the
    Python handler ran (None: not within ``wait``)."""
    release = threading.Event()
    helper = threading.Thread(target=release.wait, name="signal-target")
    helper.start()
    assert helper.ident is not None
    loop = asyncio.get_running_loop()
    sent = time.monotonic()
    # the loop's thread is asleep in the selector by the time the helper is signalled
    loop.call_later(0.05, signal.pthread_kill, helper.ident, signal.SIGUSR1)
    try:
        deadline = time.monotonic() + wait
        while not ran and time.monotonic() < deadline:
            # one long sleep, no timers in between: only the wakeup descriptor can end it early
            await asyncio.sleep(deadline - time.monotonic())
    finally:
        release.set()
        helper.join()
    return ran[0] - sent if ran else None


async def test_a_signal_handled_on_another_thread_runs_its_handler_at_once(usr1_handler: list[float]) -> None:
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


async def test_it_leaves_a_descriptor_someone_else_set(usr1_handler: list[float]) -> None:
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
