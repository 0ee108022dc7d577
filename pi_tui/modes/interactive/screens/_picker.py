"""`SearchListScreen`: the frame the full-screen pickers (``/resume``, ``/model``, ``/settings``) share.

Each is a title line, a search box, a `RowList` of what matches the search and a help line; typing
narrows the list, ↑/↓ move the cursor, Esc closes. The screens add their own rows, keys and what Enter
does; they give their title, search box and help line the ``picker-title``, ``picker-search`` and
``picker-help`` classes for the shared layout (the list fills the rest, as a `RowList` does).
"""

from __future__ import annotations

from typing import Generic, TypeVar

from textual.screen import Screen
from textual.widgets import Input

from ..keys import list_binding
from ._rowlist import RowList

__all__ = ["SearchListScreen"]

RowT = TypeVar("RowT")


class SearchListScreen(Screen[None], Generic[RowT]):
    """A picker: ``shown`` are the rows that match the search, drawn by the screen's `RowList`."""

    DEFAULT_CSS = """
    SearchListScreen { layout: vertical; }
    SearchListScreen .picker-title { height: 1; padding: 0 1; text-style: bold; color: $accent; }
    SearchListScreen .picker-search { height: 3; }
    SearchListScreen .picker-help { height: auto; padding: 0 1; color: $text-muted; }
    """
    BINDINGS = [
        list_binding("tui.select.cancel", "close", show=True),
        list_binding("tui.select.up", "move(-1)"),
        list_binding("tui.select.down", "move(1)"),
        list_binding("tui.select.pageUp", "page(-1)"),
        list_binding("tui.select.pageDown", "page(1)"),
    ]

    shown: list[RowT]
    """The rows that match the search, in the order listed."""

    def _apply(self) -> None:
        """Fill ``shown`` from the search box and reset the list (each picker filters its own way)."""
        raise NotImplementedError

    def _list(self) -> RowList:
        return self.query_one(RowList)

    def _selected(self) -> RowT | None:
        index = self._list().cursor
        return self.shown[index] if 0 <= index < len(self.shown) else None

    # Textual runs a message handler of every class along the MRO, so a picker does not define this one
    # again (it would filter twice per keystroke); it filters in `_apply`.
    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._apply()

    def action_move(self, step: int) -> None:
        self._list().action_move(step)

    def action_page(self, direction: int) -> None:
        self._list().action_page(direction)

    def action_close(self) -> None:
        self.app.pop_screen()
