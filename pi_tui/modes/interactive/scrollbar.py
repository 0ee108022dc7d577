"""The chat's vertical scroll bar: its lines are reused as the thumb moves instead of drawn again.

Every scroll of the chat moves the thumb, and Textual then draws the whole bar anew: a Rich renderable
turned into one segment per row, each row styled, filtered and made into a `Strip` (~0.7 ms for a
40-row bar here, every frame of a held key, pure scrolls included). Yet a bar has few kinds of row:
the track above the thumb, the track below it (they differ in what a click does), the thumb, and the
thumb's two ends drawn with a partial block. `ChatScrollBar` keeps the finished line of each kind of row
it has drawn and, when every row of the bar is of a kind it knows, puts the bar together from those
lines; otherwise it draws as Textual does and remembers the rows' lines. What a row looks like depends
on nothing but its kind and the bar's look (colours, size, filters), which is the key of that memory.
"""

from __future__ import annotations

from math import ceil

from textual.geometry import Region
from textual.scrollbar import ScrollBar
from textual.strip import Strip

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

    def __init__(self, *, thickness: int = 1) -> None:
        super().__init__(vertical=True, name="vertical", thickness=thickness)
        self._rows: dict[RowKind, Strip] = {}
        self._look: tuple[object, ...] | None = None
        self.reused = 0
        """How many times the bar was put together from remembered rows (not drawn)."""

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
