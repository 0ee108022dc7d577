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
- `note_changed_children`: a fix-up of the screen's record of which widgets asked for a layout (its private
  ``_layout_widgets``, which ``layout: stream`` reads to decide which children to measure again), from
  the count of layout requests Textual keeps on each widget (``_layout_updates``).

The terminal driver's internals (the driver's ``_file``, the key parser's sequence table) stay in
`pi_tui.modes.interactive.terminal_driver`, with their tests in the same test module.
"""

from __future__ import annotations

from typing import Any, Protocol

from textual.app import App
from textual.driver import Driver
from textual.screen import Screen
from textual.widget import Widget

__all__ = [
    "RedrawnScreen",
    "UpdateTimer",
    "app_driver",
    "app_is_exiting",
    "note_changed_children",
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


def note_changed_children(container: Widget, seen: dict[Widget, int]) -> None:
    """Make ``container``'s next ``layout: stream`` arrangement measure again every child that changed
    size since the last one, whatever the screen recorded (call it from ``pre_layout``).

    A stream layout measures again only the children the screen recorded as having asked for a layout
    (``_layout_widgets``) and keeps its cached place for the others. That record misses children: a
    layout request still queued is replaced by the next one (only the last reaches the record), and a
    child already recorded as a container of its own (something inside it asked first) is left out of
    its parent's entry. A child grown from inside (an answer's markdown given new paragraphs) then kept
    its old height while another child's request made the layout reuse the cache, and the blocks after
    it were drawn over its new lines. Textual counts every layout request on the widget and on its
    ancestors up to the first of fixed size (``_layout_updates``); a child whose count moved since the
    last arrangement is added to the record here.

    Args:
        container: The widget with ``layout: stream``.
        seen: Each child's count at the last arrangement, kept by the caller between calls.
    """
    counts = {child: child._layout_updates for child in container.children}
    asked = container.screen._layout_widgets.get(container)
    if asked:  # empty or absent: the stream layout measures every child anyway
        asked.update(child for child, count in counts.items() if seen.get(child) != count)
    seen.clear()
    seen.update(counts)


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
