"""A per-file async lock so parallel tool calls never lose each other's writes.

Tool calls from one assistant message run concurrently. Two edits to the same file would each read
the original, and the second write would silently drop the first change. Every tool that changes a
file wraps its whole read-modify-write in ``async with file_mutation(path):``; calls on different
files still run in parallel.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

__all__ = ["file_mutation", "with_file_mutation", "mutation_key"]

T = TypeVar("T")


@dataclass(slots=True)
class _Slot:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


# Keyed by (event loop, file): an asyncio.Lock belongs to one loop, and tests run many loops.
_slots: dict[tuple[int, str], _Slot] = {}


def mutation_key(path: Path | str) -> str:
    """The identity two paths must share to be serialised: the real path (symlinks followed).

    ``os.path.realpath`` also works for files that do not exist yet, so a write that creates a file
    and an edit racing it agree on the key.
    """
    return os.path.realpath(os.path.abspath(os.fspath(path)))


@asynccontextmanager
async def file_mutation(path: Path | str) -> AsyncIterator[None]:
    """Hold the mutation lock of ``path`` for the duration of the ``async with`` block.

    Waiters are served in arrival order (asyncio.Lock is FIFO). The slot is dropped once nobody
    holds or waits for it, so the table does not grow with every file ever touched.
    """
    key = (id(asyncio.get_running_loop()), mutation_key(path))
    slot = _slots.get(key)
    if slot is None:
        slot = _slots[key] = _Slot()
    slot.users += 1
    try:
        async with slot.lock:
            yield
    finally:
        slot.users -= 1
        if slot.users == 0 and _slots.get(key) is slot:
            del _slots[key]


async def with_file_mutation(path: Path | str, fn: Callable[[], Awaitable[T]]) -> T:
    """Run ``fn()`` while holding the mutation lock of ``path`` and return its result."""
    async with file_mutation(path):
        return await fn()
