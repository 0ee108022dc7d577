"""`MarkedOptionList`: an option list whose highlighted row carries pi's "→ " marker.

pi's select lists (the ``/`` menu, ``/login``'s lists, an extension's ``ctx.ui.select``) show "→ " before
the highlighted row and two spaces before the others, so the row stands out without colour too.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

__all__ = ["MARK", "MarkedOptionList"]

MARK = "→ "


class MarkedOptionList(OptionList):
    """Rows given as text (`set_rows`), each behind a gutter that shows `MARK` on the highlighted one."""

    def __init__(self, rows: Sequence[str | Text] = (), *, id: str | None = None) -> None:  # noqa: A002
        self._rows: list[Text] = [Text(row) if isinstance(row, str) else row for row in rows]
        self._marked: int | None = None
        super().__init__(*[Option(self._prompt(index)) for index in range(len(self._rows))], id=id)

    def set_rows(self, rows: Sequence[str | Text]) -> None:
        """Replace every row (the highlight is cleared; set ``highlighted`` after)."""
        self._rows = [Text(row) if isinstance(row, str) else row for row in rows]
        self._marked = None
        self.clear_options()
        self.add_options([Option(self._prompt(index)) for index in range(len(self._rows))])

    def _prompt(self, index: int) -> Text:
        mark = MARK if index == self._marked else " " * len(MARK)
        return Text.assemble((mark, "bold"), self._rows[index])

    def watch_highlighted(self, highlighted: int | None) -> None:
        super().watch_highlighted(highlighted)
        before, self._marked = self._marked, highlighted
        for index in {before, highlighted}:
            if index is not None and index < len(self._rows) and index < self.option_count:
                self.replace_option_prompt_at_index(index, self._prompt(index))
