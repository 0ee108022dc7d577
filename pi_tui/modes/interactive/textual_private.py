"""The Textual internals the app relies on besides the terminal driver's, in one place.

Textual 8.2 has no public API for these, so each is a small function or base class here and
``tests/modes/interactive/test_textual_internals.py`` fails if Textual changes what they rely on
(``pyproject.toml`` pins textual to the 8.2 series; a newer minor must pass that test first):

- `RedrawnScreen`: a screen whose redraw timer is replaced (`pi_tui.modes.interactive.pacing`). Textual's
  screen keeps it in the private ``_update_timer`` and calls only its ``pause()`` and ``resume()``; the
  update itself is ``_on_timer_update``.
- `app_is_exiting` and `report_error`: what Textual's own timers do around a callback (no drawing once the
  app is leaving; an exception goes to the app's handler, which shows it and exits).
- `uncaught_exception`: the exception that ended the app, which Textual keeps after ``run()`` returns (the
  crash report reads it).
- `release_removed`, `with_component_nodes` and `free_layout_maps_promptly`: what lets a widget removed
  from the chat be freed as soon as nothing refers to it instead of by the cycle collector's full
  collections: each node's CSS and inline ``Styles`` refer back to it (``_css_styles``,
  ``_inline_styles``), so do those of the virtual nodes its component classes are styled through
  (``_component_styles``, emptied by Textual on removal), and the compositor's ``_arrange_root`` leaves
  a reference cycle (a recursive inner function) holding its map and set of widgets after every layout.
- `full_map_kept_after_reflow`: the compositor's ``reflow`` arranges every widget (its ``_full_map``)
  but leaves the map flagged out of date when something had flagged it before (``_full_map_invalidated``).
- `strips_never_cache_themselves`: Textual's ``Strip.crop_extend`` and ``Strip.divide`` store their
  result in the strip's own cache even when it is the strip itself (a crop of the whole line), a
  reference cycle per line drawn.
- `own_vertical_scrollbar`: a scroll view's vertical scroll bar of a class of the app's own (the chat's
  `pi_tui.modes.interactive.scrollbar.ChatScrollBar`); Textual makes its ``ScrollBar`` on first use into
  the private ``_vertical_scrollbar`` and starts it with the app's private ``_start_widget``.
- `note_changed_children`: a fix-up of the screen's record of which widgets asked for a layout (its private
  ``_layout_widgets``, which ``layout: stream`` reads to decide which children to measure again), from
  the count of layout requests Textual keeps on each widget (``_layout_updates``).

The terminal driver's internals (the driver's ``_file``, the key parser's sequence table) stay in
`pi_tui.modes.interactive.terminal_driver`, with their tests in the same test module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from rich.style import Style
from textual._compositor import Compositor, CompositorMap, ReflowResult
from textual.app import App
from textual.dom import DOMNode
from textual.geometry import Size
from textual.screen import Screen
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

__all__ = [
    "RedrawnScreen",
    "UpdateTimer",
    "app_is_exiting",
    "free_layout_maps_promptly",
    "full_map_kept_after_reflow",
    "note_changed_children",
    "own_vertical_scrollbar",
    "release_removed",
    "report_error",
    "strips_never_cache_themselves",
    "uncaught_exception",
    "with_component_nodes",
]


class UpdateTimer(Protocol):
    """What Textual's screen calls on its update timer."""

    def pause(self) -> None: ...

    def resume(self) -> None: ...


def app_is_exiting(app: App[Any]) -> bool:
    """True once the app has begun to exit (Textual's timers stop drawing then)."""
    return bool(app._exit)


def uncaught_exception(app: App[Any]) -> Exception | None:
    """The exception that ended the app (Textual printed it and restored the terminal), or None."""
    return app._exception


def report_error(app: App[Any], error: Exception) -> None:
    """Hand ``error`` to the app's exception handler, as Textual does for a failing timer callback."""
    app._handle_exception(error)


def own_vertical_scrollbar(widget: Widget, make: Callable[[], ScrollBar]) -> ScrollBar:
    """``widget``'s vertical scroll bar, made by ``make`` the first time it is needed (where Textual would
    make its own ``ScrollBar``), hidden and started as Textual starts its own.

    Call it from an override of ``vertical_scrollbar``.
    """
    bar = widget._vertical_scrollbar
    if bar is None:
        bar = widget._vertical_scrollbar = make()
        bar.display = False
        widget.app._start_widget(widget, bar)
    return bar


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


def release_removed(nodes: Iterable[DOMNode]) -> None:
    """Unlink widgets removed for good from their own style sheets, so that each is freed as soon as
    nothing refers to it rather than by a full cyclic garbage collection.

    Every DOM node's CSS and inline ``Styles`` keep a strong reference back to the node (``node``), and so
    does the visual a widget made of a Rich renderable (a markdown thought); the other links Textual
    keeps back to a widget (its parent, its render styles) are weak. Those cycles
    left each block the chat unmounts (~90 objects with its caches, ~19 widgets per PageUp
    on a long session) for the collector, whose full collections then freed tens of thousands of
    objects at a time in the middle of a held key. Call it only on widgets that will not be mounted
    again (their style changes no longer reach them).
    """
    for node in nodes:
        node._css_styles.node = None
        node._inline_styles.node = None
        if isinstance(node, Widget):
            # What a widget draws from a Rich renderable (a `RichVisual`) refers back to the widget; the
            # widget keeps it as its content (a `Static`) and in its cache of layout measurements.
            if isinstance(node, Static):
                node._Static__visual = None  # type: ignore[attr-defined]
            node._layout_cache.clear()


def with_component_nodes(nodes: Iterable[DOMNode]) -> list[DOMNode]:
    """``nodes`` and the virtual nodes their component classes are styled through, to pass to
    `release_removed` once they are removed (Textual forgets the virtual nodes on removal).

    A widget with component classes (Markdown's ``em``, ``strong``, ...) gets one virtual node per class
    each time its styles are applied; each keeps itself alive through its own styles as a widget does.
    """
    found: list[DOMNode] = []
    for node in nodes:
        found.append(node)
        for styles in node._component_styles.values():
            virtual = styles.node
            if virtual is not None:
                found.append(virtual)
    return found


_strips_patched = False


def strips_never_cache_themselves() -> None:
    """Make a strip's crop or division that is the strip itself skip the strip's own cache
    (idempotent; process-wide).

    Textual stores every ``crop_extend`` and ``divide`` result in the strip's caches, the whole line
    included (the strip itself, or a list holding it): a reference cycle per line drawn, so lines
    scrolled away are freed only by the cycle collector. While a long chat is read up, those lines were
    most of what each full collection had to free. Returning the strip uncached gives the same result
    without the cycle (no work is saved by caching it).
    """
    global _strips_patched
    if _strips_patched:
        return
    _strips_patched = True
    crop_extend = Strip.crop_extend
    divide = Strip.divide

    def crop_extend_uncycled(self: Strip, start: int, end: int, style: Style | None) -> Strip:
        # What the original returns for these arguments is `self` (no padding, nothing cut off).
        if start <= 0 and end == self.cell_length:
            return self
        return crop_extend(self, start, end, style)

    def divide_uncycled(self: Strip, cuts: Iterable[int]) -> Sequence[Strip]:
        cuts = list(cuts)
        length = self.cell_length
        if [cut for cut in cuts if cut <= length] == [length]:  # the original's one-piece case
            return [self]
        return divide(self, cuts)

    Strip.crop_extend = crop_extend_uncycled  # type: ignore[method-assign]
    Strip.divide = divide_uncycled  # type: ignore[method-assign]


_reflow_patched = False


def full_map_kept_after_reflow() -> None:
    """Make the compositor use the map of every widget its full layout just made (idempotent;
    process-wide).

    A frame in which a widget off screen asked to be repainted (a block mounted ahead of the reader, a
    block being removed) flags the compositor's map of all widgets out of date; the layout of that
    frame makes the map again, but the flag stays, so the next question about an off-screen widget's
    place or size (the chat's read-ahead looking where its blocks are, a repaint of a block off screen)
    laid out every widget of the screen a second time, a few milliseconds on a long chat. The map
    ``reflow`` leaves is the one that question would make (the same root, size and widgets).
    """
    global _reflow_patched
    if _reflow_patched:
        return
    _reflow_patched = True
    reflow = Compositor.reflow

    def reflow_keeping_full_map(self: Compositor, parent: Widget, size: Size) -> ReflowResult:
        result = reflow(self, parent, size)
        self._full_map_invalidated = False
        return result

    Compositor.reflow = reflow_keeping_full_map  # type: ignore[method-assign]


_maps_released = False


def free_layout_maps_promptly() -> None:
    """Make every layout's compositor map free the previous one at once (idempotent; process-wide).

    Textual's ``Compositor._arrange_root`` places widgets with a recursive inner function, which is a
    reference cycle holding the new map and set of widgets. A young collection during the layout (it
    allocates a few objects per widget) moves that cycle to an older generation, where it keeps the
    map and every widget in it, removed ones included, alive until a full collection. The wrapper hands
    the compositor copies and empties the originals, so the cycle left behind holds nothing.
    """
    global _maps_released
    if _maps_released:
        return
    _maps_released = True
    arrange = Compositor._arrange_root

    def arrange_root(
        self: Compositor, root: Widget, size: Size, visible_only: bool = True
    ) -> tuple[CompositorMap, set[Widget]]:
        placed, widgets = arrange(self, root, size, visible_only)
        kept = dict(placed), set(widgets)
        placed.clear()
        widgets.clear()
        return kept

    Compositor._arrange_root = arrange_root  # type: ignore[method-assign]


class RedrawnScreen(Screen[None]):
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
