"""Output cut to its last screen rows, as pi's collapsed bash preview cuts it.

pi wraps a command's output at the card's width and keeps the last rows of the result, so a very long
line shows as its last few rows instead of filling the card, and the hint above counts the rows left out
(not the output lines). Counting visits every line once: a line short enough to fit takes one row
without being measured, only longer ones are wrapped.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

__all__ = ["row_count", "tail_rows"]

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


def tail_rows(content: Text, rows: int, width: int) -> tuple[Text, int]:
    """The last ``rows`` screen rows of ``content`` wrapped at ``width`` columns (one row to a line of the
    result), and how many rows come before them."""
    plain = content.plain
    total = sum(row_count(line, width) for line in plain.split("\n"))
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
