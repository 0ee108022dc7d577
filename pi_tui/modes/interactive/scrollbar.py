"""The chat's vertical scroll bar: its lines are reused as the thumb moves instead of drawn again.

Every scroll of the chat moves the thumb, and Textual then draws the whole bar anew: a Rich renderable
turned into one segment per row, each row styled, filtered and made into a `Strip` (~0.7 ms for a
40-row bar here, every frame of a held key, pure scrolls included). Yet a bar has few kinds of row:
the track above the thumb, the track below it (they differ in what a click does), the thumb, and the
thumb's two ends drawn with a partial block. `ChatScrollBar` keeps the finished line of each kind of row
it has drawn and, when every row of the bar is of a kind it knows, puts the bar together from those
lines; otherwise it draws as Textual does and remembers the rows' lines. What a row looks like depends
on nothing but its kind and the bar's look (colours, size, filters), which is the key of that memory.

``fullscreenScrollbar`` (pi 0.87.1) decides when the bar shows: ``always``, ``hidden`` (the chat then has
no bar column at all, `ChatLog.set_scrollbar_mode`), or ``auto`` (the default): drawn while the reader
scrolls and for `ChatScrollBar.SHOWN_AFTER_SCROLL` seconds after, and while the mouse is over it or drags
it; otherwise its column is drawn blank in the chat's background.
"""

from __future__ import annotations

import time
from math import ceil

from rich.style import Style
from textual.geometry import Region
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.widget import Widget

__all__ = ["ChatScrollBar", "row_kinds"]

RowKind = tuple[str, str]


def row_kinds(
    size: int, virtual_size: int, window_size: int, position: float, glyphs: list[str]
) -> list[RowKind]:
    """What each of a vertical bar's ``size`` rows shows, worked out as Textual's `ScrollBarRender`
    places the thumb: ``("upper", "")`` / ``("lower", "")`` for the track above / below the thumb,
    ``("thumb", "")``, ``("start", glyph)`` / ``("end", glyph)`` for the thumb's partial ends, and
    ``("plain", "")`` for a bar with no thumb.

    Args:
        size: The bar's height in rows.
        virtual_size: The scrolled content's height (rounded up).
        window_size: The view's height (rounded up; 0 when everything fits).
        position: The scroll offset, in rows.
        glyphs: The renderer's glyphs for the thumb's ends (`ScrollBarRender.VERTICAL_BARS`).
    """
    if not (window_size and size and virtual_size and size != virtual_size):
        return [("plain", "")] * size
    steps = len(glyphs)
    thumb_size = max(1, window_size / (virtual_size / size))
    offset = (size - thumb_size) * (position / (virtual_size - window_size))
    start = int(offset * steps)
    end = start + ceil(thumb_size * steps)
    start_index, start_step = divmod(max(0, start), steps)
    end_index, end_step = divmod(max(0, end), steps)
    # The same list operations as Textual's renderer, so a thumb running past the end grows the list as
    # its segments do (the rows past the bar's height are cut off there as here).
    rows: list[RowKind] = [("upper", "")] * size
    rows[end_index:] = [("lower", "")] * (size - end_index)
    rows[start_index:end_index] = [("thumb", "")] * (end_index - start_index)
    if start_index < len(rows):
        glyph = glyphs[steps - 1 - start_step]
        if glyph != " ":
            rows[start_index] = ("start", glyph)
    if end_index < len(rows):
        glyph = glyphs[steps - 1 - end_step]
        if glyph != " ":
            rows[end_index] = ("end", glyph)
    return rows[:size]


class ChatScrollBar(ScrollBar):
    """A vertical scroll bar that puts its lines together from the rows it has drawn before."""

    SHOWN_AFTER_SCROLL = 1.0
    """Seconds an ``auto`` bar stays after the reader last scrolled (pi's delay)."""

    def __init__(self, *, thickness: int = 1) -> None:
        super().__init__(vertical=True, name="vertical", thickness=thickness)
        self._rows: dict[RowKind, Strip] = {}
        self._look: tuple[object, ...] | None = None
        self.reused = 0
        """How many times the bar was put together from remembered rows (not drawn)."""
        self.mode = "auto"
        """``fullscreenScrollbar``: ``auto``, ``always`` or ``hidden``."""
        self._shown_until = 0.0
        self._hide_pending = False

    @property
    def shown(self) -> bool:
        """Whether the bar is drawn now (else its column is blank)."""
        if self.mode != "auto":
            return self.mode == "always"
        return self.grabbed is not None or self.mouse_over or time.monotonic() < self._shown_until

    def set_mode(self, mode: str) -> None:
        """Follow ``fullscreenScrollbar`` from now on."""
        if mode != self.mode:
            self.mode = mode
            self._shown_until = 0.0
            self.refresh()

    def scrolled(self) -> None:
        """The reader scrolled: an ``auto`` bar shows, until ``SHOWN_AFTER_SCROLL`` seconds after the
        last scroll (one timer at a time, moved on as the reader keeps scrolling)."""
        if self.mode != "auto":
            return
        was_shown = self.shown
        self._shown_until = time.monotonic() + self.SHOWN_AFTER_SCROLL
        if not was_shown:
            self.refresh()
        if not self._hide_pending:
            self._hide_pending = True
            self.set_timer(self.SHOWN_AFTER_SCROLL, self._hide_when_due)

    def _hide_when_due(self) -> None:
        left = self._shown_until - time.monotonic()
        if left > 0.005:
            self.set_timer(left, self._hide_when_due)
            return
        self._hide_pending = False
        self.refresh()

    def _blank(self, crop: Region) -> list[Strip]:
        """The bar's column with nothing on it, in the chat's background."""
        parent = self.parent
        background = parent.background_colors[1] if isinstance(parent, Widget) else self.background_colors[1]
        return [Strip.blank(crop.width, Style(bgcolor=background.rich_color))] * crop.height

    def _current_look(self) -> tuple[object, ...]:
        """Everything besides the thumb's place that what a row looks like depends on."""
        parent = self.parent
        styles = self.styles
        parent_look: tuple[object, ...] = ()
        if parent is not None:
            parent_styles = parent.styles
            parent_look = (
                parent_styles.scrollbar_background,
                parent_styles.scrollbar_color,
                parent_styles.scrollbar_background_hover,
                parent_styles.scrollbar_color_hover,
                parent_styles.scrollbar_background_active,
                parent_styles.scrollbar_color_active,
                parent.background_colors,
            )
        app = self.app
        return (
            self.size,
            self.grabbed is not None,
            self.mouse_over,
            parent_look,
            self.background_colors,
            styles.tint,
            self.opacity,
            app.ansi_theme,
            app.native_ansi_color,
            tuple(id(line_filter) for line_filter in self.get_line_filters()),
            self.renderer,
        )

    def render_lines(self, crop: Region) -> list[Strip]:
        if not self.shown:
            return self._blank(crop)
        width, height = self.size
        if (
            not self.vertical
            or crop != Region(0, 0, width, height)
            or self.screen.styles.scrollbar_color.a == 0
        ):
            return super().render_lines(crop)  # part of the bar, or a screen drawing bars without a thumb
        look = self._current_look()
        if look != self._look:
            self._look = look
            self._rows = {}
        window_size = self.window_size if self.window_size < self.window_virtual_size else 0
        kinds = row_kinds(
            height,
            ceil(self.window_virtual_size),
            ceil(window_size),
            self.position,
            self.renderer.VERTICAL_BARS,
        )
        rows = self._rows
        if len(kinds) == height and all(kind in rows for kind in kinds):
            self.reused += 1
            return [rows[kind] for kind in kinds]
        strips = super().render_lines(crop)
        if len(strips) == len(kinds):
            for kind, strip in zip(kinds, strips, strict=True):
                rows.setdefault(kind, strip)
        return strips
