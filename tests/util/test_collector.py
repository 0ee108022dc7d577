"""`collector_paused`: no cyclic collection inside the block, the collector restored after it, and a
block that leaves many new objects has them frozen."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from pi_tui.util.collector import collector_paused


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The generations of the cyclic collections that run while the test does."""
    seen: list[int] = []

    def record(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.unfreeze()  # objects another test in this process froze would count here
    gc.callbacks.append(record)
    try:
        yield seen
    finally:
        gc.callbacks.remove(record)
        gc.unfreeze()


def _many_lists(count: int) -> list[list[int]]:
    return [[n] for n in range(count)]


def test_no_collection_runs_inside_the_block(collections: list[int]) -> None:
    assert gc.isenabled()
    with collector_paused():
        kept = _many_lists(50_000)  # ~70 young collections with the collector on
        during = list(collections)
        assert not gc.isenabled()
    assert during == [] and gc.isenabled()
    assert len(kept) == 50_000


def test_a_collector_held_off_by_the_caller_stays_off(collections: list[int]) -> None:
    gc.disable()
    try:
        with collector_paused(freeze_above=0):
            _many_lists(1_000)
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    finally:
        gc.enable()


def test_a_big_block_is_frozen_and_a_small_one_is_not(collections: list[int]) -> None:
    gc.collect()
    with collector_paused(freeze_above=10_000):
        small = _many_lists(100)
    assert gc.get_freeze_count() == 0
    with collector_paused(freeze_above=10_000):
        big = _many_lists(20_000)
    assert gc.get_freeze_count() >= 20_000  # frozen: no later collection walks them
    assert gc.isenabled() and len(small) + len(big) == 20_100


def test_the_collector_is_restored_when_the_block_raises() -> None:
    with pytest.raises(ValueError, match="boom"), collector_paused():
        raise ValueError("boom")
    assert gc.isenabled()
