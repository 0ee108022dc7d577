"""Frame pacing for the main screen: a change is drawn one frame period after the previous frame, not later.

Textual's screen redraws through an interval timer that is paused while nothing changes. After a pause
its next tick falls on the timer's fixed grid, and when that grid point has passed it skips ahead one
point too many: a change that follows a frame (the answer after the Enter that cleared the editor) waits
17–33 ms at 60 fps. `PacedScreen` replaces that timer with `FramePacer` (through `textual_private.RedrawnScreen`), which keeps the same rate limit
(at most one frame per period) but measures it from the last frame: an idle screen draws at once, a
busy one exactly one period after its last frame.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from textual.screen import UPDATE_PERIOD

from .textual_private import RedrawnScreen, app_is_exiting, report_error

__all__ = ["FramePacer", "PacedScreen", "frame_delay"]


def frame_delay(now: float, last_frame: float, period: float) -> float:
    """Seconds to wait before the next frame: none when the last one is a period old, else the rest."""
    return max(0.0, last_frame + period - now)


class FramePacer:
    """Stands in for the screen's update timer; the screen only ever calls `pause` and `resume`.

    Args:
        callback: The screen's update (layout, compositor, write to the terminal).
        period: The shortest time between two frames.
        on_error: Receives an exception the callback raised (the app's handler, as for timers).
    """

    def __init__(
        self, callback: Callable[[], object], period: float, on_error: Callable[[Exception], None]
    ) -> None:
        self._callback = callback
        self._period = period
        self._on_error = on_error
        self._handle: asyncio.TimerHandle | asyncio.Handle | None = None
        self._waiting = False
        self._urgent = False
        self._due = 0.0
        self.last_frame = float("-inf")
        """Loop time of the last update (``-inf``: none yet)."""

    @property
    def due(self) -> float | None:
        """Loop time at which the pending update runs (None: none pending)."""
        return self._due if self._handle is not None else None

    def resume(self) -> None:
        """Something changed: update at once, or one period after the last update."""
        if self._handle is not None and not (self._urgent and self._waiting):
            return
        loop = asyncio.get_running_loop()
        delay = 0.0 if self._urgent else frame_delay(loop.time(), self.last_frame, self._period)
        self.pause()
        self._waiting = delay > 0
        self._due = loop.time() + delay
        if delay <= 0:
            self._handle = loop.call_soon(self._fire)
        else:
            self._handle = loop.call_later(delay, self._fire)

    def hurry(self, *, pending: bool = True) -> None:
        """The next update runs at once, whatever the rate limit says: for a change the user waits for
        (the first text of an answer, the echo of a key); at most one frame early.

        Args:
            pending: Also move a frame already waiting for the period to now (the change is made);
                False: only the next `resume` is immediate (the change is still to come).
        """
        self._urgent = True
        if pending and self._handle is not None and self._waiting:
            self.resume()

    def pause(self) -> None:
        """The update ran (or is no longer needed): forget the pending one."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _fire(self) -> None:
        self._handle = None
        self._urgent = False
        self.last_frame = asyncio.get_running_loop().time()
        try:
            self._callback()
        except Exception as error:  # as Textual's timer does: the app reports it and exits
            self._on_error(error)


class PacedScreen(RedrawnScreen):
    """The app's default screen, redrawn through `FramePacer` (dialogs keep Textual's own timer)."""

    FRAME_PERIOD = UPDATE_PERIOD
    """Textual's 60 frames a second. (120 was tried: the extra frame right after Enter, ~8 ms of layout
    and painting, then delays the request itself.)"""

    def __init__(self, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name, id, classes)
        self._pacer: FramePacer | None = None

    def make_update_timer(self) -> FramePacer:
        if self._pacer is None:
            self._pacer = FramePacer(self._update_now, self.FRAME_PERIOD, self._report_error)
        return self._pacer

    def draw_soon(self, *, pending: bool = True) -> None:
        """Draw the next change without waiting for the frame period (`FramePacer.hurry`)."""
        self.make_update_timer().hurry(pending=pending)

    def _update_now(self) -> None:
        if not app_is_exiting(self.app):  # as Textual's timer: no drawing once the app is leaving
            self.update_now()

    def _report_error(self, error: Exception) -> None:
        report_error(self.app, error)

    def on_unmount(self) -> None:
        if self._pacer is not None:
            self._pacer.pause()
