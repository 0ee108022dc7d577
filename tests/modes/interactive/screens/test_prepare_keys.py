"""The work ahead of the big screens gives way to the user's keys: a step nobody waits for stops at its
next piece while keys come and goes on once they pause; a step a screen waits for, or the typed
command's, goes on (`ScreenPreparation.start`'s ``keys_pending``)."""

from __future__ import annotations

import asyncio

from pi_tui.modes.interactive.screens.prepare import ScreenPreparation

from .test_prepare_at_once import HeldFirstPiece, _steps


class Keys:
    """What `keys_pending` reports: seconds until the keys count as paused (set by the test)."""

    def __init__(self) -> None:
        self.left = 0.0

    def pending(self) -> float:
        return self.left


async def test_a_background_step_stops_while_keys_come_and_goes_on_once_they_pause() -> None:
    log: list[str] = []
    keys = Keys()
    held = HeldFirstPiece(log)  # a key comes while "a" is in its first piece
    preparation = ScreenPreparation(held.steps)
    try:
        preparation.start(keys_pending=keys.pending)
        await asyncio.to_thread(held.in_first_piece.wait, 20)
        keys.left = 60.0
        held.go_on.set()
        await asyncio.sleep(0.3)  # time enough for the rest of the steps, were they not stopped
        assert log == ["a0"]
        assert not preparation.all_done()
        await preparation.need("c")  # a screen waits for "c": keys or not, it runs
        assert log == ["a0", "c0", "c1"]
        keys.left = 0.0
        preparation.hold()()  # a hold released wakes the background, which finds the keys paused
        await asyncio.wait_for(preparation.wait(), 20)
        assert log == ["a0", "c0", "c1", "a1", "b0", "b1"]
    finally:
        held.go_on.set()


async def test_the_step_of_the_command_being_typed_goes_on_while_keys_come() -> None:
    log: list[str] = []
    keys = Keys()
    keys.left = 60.0  # the user is typing the command
    preparation = ScreenPreparation(_steps(log, 2))
    preparation.prefer("c")
    preparation.start(keys_pending=keys.pending)
    done = asyncio.ensure_future(preparation.wait())
    try:
        for _ in range(200):  # each turn of the loop lets the worker thread's result in
            if log == ["c0", "c1"] and preparation.done("c"):
                break
            await asyncio.sleep(0.01)
        assert log == ["c0", "c1"] and preparation.done("c")
        keys.left = 0.0
        preparation.hold()()
        await asyncio.wait_for(done, 20)
        assert log == ["c0", "c1", "a0", "a1", "b0", "b1"]
    finally:
        done.cancel()
