"""`collector_paused`: no cyclic collection inside the block, the collector restored after it, and a
block that leaves many new objects has them frozen."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from pi_tui.util.collector import FullCollectionsDeferred, collector_paused


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


def test_overlapping_blocks_keep_the_collector_off_until_the_last_one_ends() -> None:
    """Two threads' blocks (the screens' work ahead and the cache projection) overlap: the first to end
    must not turn the collector on under the other, which still builds its objects."""
    first_in = threading.Event()
    first_out = threading.Event()
    second_in = threading.Event()
    seen: dict[str, bool] = {}

    def first() -> None:
        with collector_paused():
            first_in.set()
            second_in.wait(10)
        first_out.set()

    thread = threading.Thread(target=first)
    thread.start()
    try:
        assert first_in.wait(10)
        with collector_paused():
            second_in.set()
            assert first_out.wait(10)
            seen["after the first ended"] = gc.isenabled()
    finally:
        second_in.set()
        thread.join(10)
    assert seen == {"after the first ended": False}
    assert gc.isenabled()


def test_the_collector_is_restored_when_the_block_raises() -> None:
    with pytest.raises(ValueError, match="boom"), collector_paused():
        raise ValueError("boom")
    assert gc.isenabled()


def test_full_collections_are_held_off_and_made_once_on_release() -> None:
    normal = gc.get_threshold()
    deferred = FullCollectionsDeferred(held_threshold=500)
    full = gc.get_stats()[2]["collections"]
    deferred.hold()
    try:
        assert deferred.holding and gc.get_threshold() == (normal[0], normal[1], 500)
        deferred.hold()  # held already: what is restored stays the normal threshold
    finally:
        deferred.release()
    assert not deferred.holding and gc.get_threshold() == normal
    assert gc.get_stats()[2]["collections"] > full  # the one held off, made on release
    gc.set_threshold(normal[0], normal[1], 25)
    try:
        deferred.release()  # not holding: the threshold is left as it is
        assert gc.get_threshold()[2] == 25
    finally:
        gc.set_threshold(*normal)


def test_nothing_is_held_while_the_collector_is_off() -> None:
    deferred = FullCollectionsDeferred()
    gc.disable()
    try:
        deferred.hold()
        assert not deferred.holding and gc.get_threshold()[2] != deferred.held_threshold
    finally:
        gc.enable()
