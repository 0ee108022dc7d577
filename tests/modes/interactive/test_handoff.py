"""Background threads beside the UI thread run with a short switch interval, so a key waits for the
interpreter ~1 ms at a time instead of 5 (`pi_tui.modes.interactive.handoff`)."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator

from pi_tui.modes.interactive.handoff import SWITCH_S, quick_handoff
from pi_tui.modes.interactive.screens.prepare import ScreenPreparation


def test_the_interval_is_short_while_any_background_work_runs_and_comes_back_after_the_last() -> None:
    before = sys.getswitchinterval()
    assert before > SWITCH_S
    with quick_handoff():
        assert sys.getswitchinterval() == SWITCH_S
        with quick_handoff():  # a second thread's work at the same time
            assert sys.getswitchinterval() == SWITCH_S
        assert sys.getswitchinterval() == SWITCH_S  # the first is still running
    assert sys.getswitchinterval() == before


async def test_the_work_ahead_of_the_screens_runs_with_the_short_interval() -> None:
    seen: list[float] = []

    def step() -> Iterator[object]:
        seen.append(sys.getswitchinterval())
        yield None

    before = sys.getswitchinterval()
    preparation = ScreenPreparation({"a": step})
    await preparation.need("a")
    assert seen == [SWITCH_S]
    assert sys.getswitchinterval() == before


async def test_the_work_ahead_runs_with_the_collector_off_and_leaves_it_on() -> None:
    """A step makes tens of thousands of objects that live with the session: full collections set off
    meanwhile walked them all again, on the UI thread's keys too (50-100 ms)."""
    seen: list[bool] = []

    def step() -> Iterator[object]:
        seen.append(gc.isenabled())
        yield None
        seen.append(gc.isenabled())

    assert gc.isenabled()
    preparation = ScreenPreparation({"a": step})
    await preparation.need("a")
    assert seen == [False, False]
    assert gc.isenabled()
