from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from pi_tui.tools import mutation_queue
from pi_tui.tools._common import finish_in_thread
from pi_tui.tools.mutation_queue import file_mutation, mutation_key, with_file_mutation


async def _yield_a_few_times() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


async def test_second_holder_of_the_same_file_waits_for_the_first(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    order: list[str] = []
    first_in = asyncio.Event()
    release = asyncio.Event()

    async def first() -> None:
        async with file_mutation(target):
            order.append("first in")
            first_in.set()
            await release.wait()
            order.append("first out")

    async def second() -> None:
        async with file_mutation(target):
            order.append("second in")

    first_task = asyncio.create_task(first())
    await first_in.wait()
    second_task = asyncio.create_task(second())
    await _yield_a_few_times()
    assert order == ["first in"]
    release.set()
    await asyncio.gather(first_task, second_task)
    assert order == ["first in", "first out", "second in"]


async def test_different_files_do_not_wait_for_each_other(tmp_path: Path) -> None:
    release = asyncio.Event()
    held = asyncio.Event()

    async def hold() -> None:
        async with file_mutation(tmp_path / "a.txt"):
            held.set()
            await release.wait()

    holder = asyncio.create_task(hold())
    await held.wait()
    result = await asyncio.wait_for(with_file_mutation(tmp_path / "b.txt", _answer), timeout=5)
    assert result == 42
    release.set()
    await holder


async def _answer() -> int:
    return 42


def test_a_symlink_and_its_target_share_one_lock(tmp_path: Path) -> None:
    target = tmp_path / "real.txt"
    target.write_text("x")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    assert mutation_key(link) == mutation_key(target)
    assert mutation_key(tmp_path / "sub" / ".." / "real.txt") == mutation_key(target)


async def test_lock_slots_are_released_after_use(tmp_path: Path) -> None:
    async with file_mutation(tmp_path / "x.txt"):
        assert mutation_queue._slots
    assert not mutation_queue._slots


async def test_an_exception_inside_releases_the_lock(tmp_path: Path) -> None:
    target = tmp_path / "x.txt"
    try:
        async with file_mutation(target):
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert await asyncio.wait_for(with_file_mutation(target, _answer), timeout=5) == 42


async def test_a_cancelled_file_operation_keeps_the_lock_until_the_thread_is_done(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    started, release = threading.Event(), threading.Event()

    def slow_write() -> None:
        started.set()
        release.wait(5)

    async def holder() -> None:
        async with file_mutation(target):
            await finish_in_thread(slow_write)

    entered: list[str] = []

    async def second() -> None:
        async with file_mutation(target):
            entered.append("second")

    first = asyncio.create_task(holder())
    await asyncio.to_thread(started.wait, 5)
    first.cancel()
    waiting = asyncio.create_task(second())
    await _yield_a_few_times()
    assert entered == []
    release.set()
    await asyncio.gather(first, waiting, return_exceptions=True)
    assert first.cancelled()
    assert entered == ["second"]
