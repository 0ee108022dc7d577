"""Output cut to its last screen rows, as pi's collapsed bash preview cuts it.

pi wraps a command's output at the card's width and keeps the last rows of the result, so a very long
line shows as its last few rows instead of filling the card, and the hint above counts the rows left out
(not the output lines). Counting visits every line once: a line short enough to fit takes one row
without being measured, only longer ones are wrapped; a `RowCounter` kept with a card counts only what
was added since it last counted (a command's output grows at its end while it streams).
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

__all__ = ["RowCounter", "row_count", "tail_rows"]

_console: Console | None = None


def _wrapping_console() -> Console:
    # Text.wrap takes a console for justification only; one, made when first needed, serves every card.
    global _console
    if _console is None:
        _console = Console(width=80, color_system=None, file=None, legacy_windows=False)
    return _console


def _fits(line: str, width: int) -> bool:
    return 2 * len(line) <= width or cell_len(line) <= width


def row_count(line: str, width: int) -> int:
    """How many screen rows ``line`` (no newline) takes, word-wrapped at ``width`` columns."""
    if _fits(line, width):
        return 1
    return len(Text(line).wrap(_wrapping_console(), width))


def _rows(line: Text, width: int) -> list[Text]:
    if _fits(line.plain, width):
        return [line]
    return list(line.wrap(_wrapping_console(), width))


class RowCounter:
    """Counts the screen rows of a text that grows at its end, remembering the complete lines counted."""

    def __init__(self) -> None:
        self._width = 0
        self._counted = ""
        """The text up to and with its last newline, as last counted."""
        self._rows = 0

    def count(self, plain: str, width: int) -> int:
        """The rows ``plain`` takes at ``width`` columns (all of it counted again when it is not the last
        text with more at its end, or the width changed)."""
        if width != self._width or not plain.startswith(self._counted):
            self._width, self._counted, self._rows = width, "", 0
        start = len(self._counted)
        end = plain.rfind("\n") + 1
        if end > start:
            self._rows += sum(row_count(line, width) for line in plain[start : end - 1].split("\n"))
            self._counted = plain[:end]
        return self._rows + row_count(plain[max(start, end) :], width)


def tail_rows(
    content: Text, rows: int, width: int, counter: RowCounter | None = None
) -> tuple[Text, int]:
    """The last ``rows`` screen rows of ``content`` wrapped at ``width`` columns (one row to a line of the
    result), and how many rows come before them (counted by ``counter`` when given)."""
    plain = content.plain
    total = (counter or RowCounter()).count(plain, width)
    if total <= rows:
        return content, 0
    if content.spans:
        lines: list[Text] = list(content.split("\n", allow_blank=True))
    else:
        lines = [Text(line, style=content.style) for line in plain.rsplit("\n", rows)[-rows:]]
    kept: list[Text] = []
    for line in reversed(lines):
        kept[:0] = _rows(line, width)
        if len(kept) >= rows:
            break
    return Text("\n").join(kept[-rows:]), total - rows
