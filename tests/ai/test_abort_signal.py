from __future__ import annotations

import asyncio

import pytest

from pi_tui.ai.stream import AbortedError, AbortSignal


async def test_cancelled_waits_do_not_accumulate_on_the_signal() -> None:
    signal = AbortSignal()
    for _ in range(50):
        task = asyncio.ensure_future(signal.wait())
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert signal._waiters == []


async def test_wait_returns_when_aborted_and_sleep_raises() -> None:
    signal = AbortSignal()
    waiter = asyncio.ensure_future(signal.wait())
    await asyncio.sleep(0)
    signal.abort("stop")
    await asyncio.wait_for(waiter, 1)
    with pytest.raises(AbortedError):
        await signal.sleep(10)


async def test_listener_added_after_abort_runs_at_once() -> None:
    signal = AbortSignal()
    signal.abort()
    seen = []
    signal.add_listener(lambda: seen.append(1))
    assert seen == [1]
