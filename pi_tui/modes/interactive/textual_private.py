"""The Textual internals the app relies on besides the terminal driver's, in one place.

Textual 8.2 has no public API for these, so each is a small function or base class here and
``tests/modes/interactive/test_textual_internals.py`` fails if Textual changes what they rely on
(``pyproject.toml`` pins textual to the 8.2 series; a newer minor must pass that test first):

- `RedrawnScreen`: a screen whose redraw timer is replaced (`pi_tui.modes.interactive.pacing`). Textual's
  screen keeps it in the private ``_update_timer`` and calls only its ``pause()`` and ``resume()``; the
  update itself is ``_on_timer_update``.
- `app_is_exiting` and `report_error`: what Textual's own timers do around a callback (no drawing once the
  app is leaving; an exception goes to the app's handler, which shows it and exits).
- `app_driver`: the running app's terminal driver (``/copy`` writes OSC 52 through it).
- `uncaught_exception`: the exception that ended the app, which Textual keeps after ``run()`` returns (the
  crash report reads it).

The terminal driver's internals (the driver's ``_file``, the key parser's sequence table) stay in
`pi_tui.modes.interactive.terminal_driver`, with their tests in the same test module.
"""

from __future__ import annotations

from typing import Any, Protocol

from textual.app import App
from textual.driver import Driver
from textual.screen import Screen

__all__ = [
    "RedrawnScreen",
    "UpdateTimer",
    "app_driver",
    "app_is_exiting",
    "report_error",
    "uncaught_exception",
]


class UpdateTimer(Protocol):
    """What Textual's screen calls on its update timer."""

    def pause(self) -> None: ...

    def resume(self) -> None: ...


def app_is_exiting(app: App[Any]) -> bool:
    """True once the app has begun to exit (Textual's timers stop drawing then)."""
    return bool(app._exit)


def app_driver(app: App[Any]) -> Driver | None:
    """The app's terminal driver while it runs (None before it starts and after it stops)."""
    return app._driver


def uncaught_exception(app: App[Any]) -> Exception | None:
    """The exception that ended the app (Textual printed it and restored the terminal), or None."""
    return app._exception


def report_error(app: App[Any], error: Exception) -> None:
    """Hand ``error`` to the app's exception handler, as Textual does for a failing timer callback."""
    app._handle_exception(error)


class RedrawnScreen(Screen[Any]):
    """A screen whose redraws go through the timer `make_update_timer` returns (made on first use)."""

    def make_update_timer(self) -> UpdateTimer:
        """The object standing in for Textual's update timer."""
        raise NotImplementedError

    @property
    def _update_timer(self) -> Any:  # Textual's screen reads this and calls only pause()/resume() on it
        timer = self.__dict__.get("_pi_update_timer")
        if timer is None:
            timer = self.__dict__["_pi_update_timer"] = self.make_update_timer()
        return timer

    def update_now(self) -> None:
        """Lay out, compose and write the screen now (what Textual's update timer runs)."""
        self._on_timer_update()
