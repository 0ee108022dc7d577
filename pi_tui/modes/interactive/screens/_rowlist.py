"""`RowList`: a one-line-per-row, cursor-driven list that renders only the rows in view.

The pickers show hundreds or thousands of rows (a session tree, every session on disk); `OptionList`
measures and wraps every option when it is filled, which costs ~0.2 ms a row. This list asks its owner
for a row's text only when that row is drawn, so opening a picker costs the same for 50 rows or 5,000.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..keys import list_binding

__all__ = ["RowList"]


class RowList(ScrollView, can_focus=True):
    """Rows drawn by ``render_row(index) -> Text``; ↑/↓, PgUp/PgDn, Home/End move, Enter selects.

    With a ``mark`` (pi's "› " or "→ "), every row starts with a gutter as wide as the mark, which shows
    it on the highlighted row only: the row is told apart by more than its background, as in pi.
    """

    DEFAULT_CSS = """
    RowList { height: 1fr; overflow-x: hidden; }
    RowList > .rowlist--cursor { background: $accent 30%; text-style: bold; }
    RowList > .rowlist--mark { color: $accent; text-style: bold; }
    """
    COMPONENT_CLASSES = {"rowlist--cursor", "rowlist--mark"}
    BINDINGS = [
        # pi's list keys (``tui.select.*``): keybindings.json rebinds them through the app's keymap
        list_binding("tui.select.up", "move(-1)", priority=False),
        list_binding("tui.select.down", "move(1)", priority=False),
        list_binding("tui.select.pageUp", "page(-1)", priority=False),
        list_binding("tui.select.pageDown", "page(1)", priority=False),
        Binding("home", "jump(0)", "First", show=False),
        Binding("end", "jump(-1)", "Last", show=False),
        list_binding("tui.select.confirm", "select", priority=False),
    ]

    cursor: reactive[int] = reactive(0, always_update=True)
    """The highlighted row."""

    @dataclass
    class Selected(Message):
        """Enter was pressed on ``index``."""

        row_list: RowList
        index: int

    @dataclass
    class Highlighted(Message):
        """The cursor moved to ``index``."""

        row_list: RowList
        index: int

    def __init__(
        self,
        render_row: Callable[[int], Text],
        count: int = 0,
        *,
        row_key: Callable[[int], Hashable] | None = None,
        mark: str = "",
        id: str | None = None,  # noqa: A002 - Textual's own keyword
    ) -> None:
        super().__init__(id=id)
        self._mark = mark
        self._render_row = render_row
        self._row_key = row_key
        self._count = count
        # Drawn rows (without the cursor's highlight). With ``row_key`` they are kept across `reset`, so
        # narrowing a search redraws only rows not seen before.
        self._cache: dict[Hashable, tuple[int, Strip]] = {}
        # The list's style, the cursor row's and the mark's, looked up once per drawing pass
        # (`render_lines`), not per line: Textual computes a widget's style from all its ancestors on
        # every lookup.
        self._styles: tuple[Style, Style, Style] | None = None

    @property
    def count(self) -> int:
        return self._count

    @property
    def row_width(self) -> int:
        """The columns a row's own text has: the list's width less the mark's gutter."""
        return max(0, self.scrollable_content_region.width - len(self._mark))

    def reset(
        self, count: int, cursor: int = 0, *, top: int | None = None, height_hint: int | None = None
    ) -> None:
        """New rows (``count`` of them); the cursor goes to ``cursor`` (clamped). ``top``: the row to
        show first in the view (the cursor's row stays in view whatever it is). ``height_hint``: the
        rows the view will have, for a list not laid out yet: its first frame then shows the cursor's
        row already (else the first rows, and the cursor's one frame later)."""
        self._count = count
        if self._row_key is None or len(self._cache) > 5000:
            self._cache.clear()
        self.virtual_size = Size(self.size.width, count)
        if top is None and height_hint is not None and not self.size.height:
            top = cursor - height_hint + 1
        if top is not None:  # forced: a list not laid out yet has no scrollbar, so "cannot" scroll
            self.scroll_to(y=max(0, top), animate=False, immediate=True, force=True)
        self.cursor = max(0, min(cursor, count - 1)) if count else 0
        self.refresh()
        if top is not None:
            self.call_after_refresh(self.scroll_to, y=max(0, top), animate=False, immediate=True)
        self.call_after_refresh(self._scroll_to_cursor)  # before the first layout the size is unknown

    def refresh_rows(self) -> None:
        """Redraw every row (their text changed, not their number)."""
        self._cache.clear()
        self.refresh()

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, self._count)

    def watch_cursor(self, old: int, new: int) -> None:
        self._scroll_to_cursor()
        self.refresh()
        self.post_message(self.Highlighted(self, new))

    def _scroll_to_cursor(self) -> None:
        height = max(1, self.scrollable_content_region.height)
        top = int(self.scroll_offset.y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    def _current_styles(self) -> tuple[Style, Style, Style]:
        base = self.rich_style
        return (
            base,
            base + self.get_component_rich_style("rowlist--cursor"),
            self.get_component_rich_style("rowlist--mark", partial=True),
        )

    def render_lines(self, crop: Region) -> list[Strip]:
        self._styles = self._current_styles()
        try:
            return super().render_lines(crop)
        finally:
            self._styles = None

    def render_line(self, y: int) -> Strip:
        index = int(self.scroll_offset.y) + y
        if index >= self._count:
            return Strip.blank(self.scrollable_content_region.width, self.rich_style)
        width = self.row_width
        key = self._row_key(index) if self._row_key is not None else index
        cached = self._cache.get(key)
        if cached is not None and cached[0] == width:
            strip = cached[1]
        else:
            line = self._render_row(index)
            line.no_wrap = True
            line.overflow = "ellipsis"
            line.truncate(width, overflow="ellipsis", pad=True)
            segments = list(line.render(self.app.console))
            strip = Strip(segments, width).crop(0, width) if segments else Strip.blank(width)
            self._cache[key] = (width, strip)
        base, cursor, mark = self._styles or self._current_styles()
        if self._mark:
            gutter = self._mark if index == self.cursor else " " * len(self._mark)
            strip = Strip.join([Strip([Segment(gutter, mark)], len(gutter)), strip])
        return strip.apply_style(cursor if index == self.cursor else base)

    def action_move(self, step: int) -> None:
        if self._count:
            self.cursor = max(0, min(self._count - 1, self.cursor + step))

    def action_page(self, direction: int) -> None:
        height = max(1, self.scrollable_content_region.height)
        self.action_move(direction * height)

    def action_jump(self, where: int) -> None:
        if self._count:
            self.cursor = where if where >= 0 else self._count - 1

    def action_select(self) -> None:
        if self._count:
            self.post_message(self.Selected(self, self.cursor))
