"""Transcript search on screen: the matches in a chat widget's drawn lines, marked as they are drawn.

Every chat widget that draws text (a user message, an answer's paragraphs and code, a thought, a tool
card, a notice) is a `Highlighted` widget: while a search is open, it finds the query in its own drawn
lines (the words of all its lines joined by single spaces, so a match may run over a wrapped line, as
in pi) and draws each match underlined, the current one bold and reversed, as pi does. The lines are
Textual's own (cached) rendering; only the marked cells are restyled, in the strips handed to the
screen. A widget finds its matches once per query and size and keeps them until either changes.
"""

from __future__ import annotations

import re
import weakref
from bisect import bisect_right
from dataclasses import dataclass, field

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.dom import DOMNode
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

__all__ = ["Highlighted", "Highlights", "LineMatch", "find_in_lines", "highlights_for"]

MATCH_STYLE = Style(underline=True)
"""Every match in view: underlined (pi's look)."""
CURRENT_STYLE = Style(bold=True, reverse=True)
"""The selected match: bold and reversed (pi's look)."""

_WORD = re.compile(r"\S+")

LineMatch = list[tuple[int, int, int]]
"""One match as drawn: (row, first cell, cell after the last) for each line it covers."""


def find_in_lines(lines: list[str], query: str) -> list[LineMatch]:
    """Where folded ``query`` appears in drawn ``lines``: each line's words joined by single spaces
    (and the lines too), compared lower-case; each match as the cells it covers, line by line."""
    if not query:
        return []
    chunks: list[str] = []
    # (text start, length, row, first cell, each character's cells; None: one cell each)
    spans: list[tuple[int, int, int, int, list[int] | None]] = []
    length = 0
    for row, line in enumerate(lines):
        ascii_line = line.isascii()
        for word in _WORD.finditer(line):
            text = word.group()
            lowered = text.lower()
            if len(lowered) != len(text):
                lowered = text  # a character whose lower case is longer: keep it as drawn
            if length:
                chunks.append(" ")
                length += 1
            start_col = word.start() if ascii_line else cell_len(line[: word.start()])
            widths = None if ascii_line else [cell_len(ch) for ch in text]
            spans.append((length, len(lowered), row, start_col, widths))
            chunks.append(lowered)
            length += len(lowered)
    text = "".join(chunks)
    starts = [span[0] for span in spans]
    matches: list[LineMatch] = []
    at = text.find(query)
    while at >= 0:
        end = at + len(query)
        segments: LineMatch = []
        index = max(0, bisect_right(starts, at) - 1)
        while index < len(spans) and spans[index][0] < end:
            span_start, span_len, row, col, widths = spans[index]
            lo, hi = max(at, span_start) - span_start, min(end, span_start + span_len) - span_start
            if hi > lo:
                first = col + (sum(widths[:lo]) if widths is not None else lo)
                last = col + (sum(widths[:hi]) if widths is not None else hi)
                if segments and segments[-1][0] == row and first <= segments[-1][2] + 1:
                    segments[-1] = (row, segments[-1][1], last)
                else:
                    segments.append((row, first, last))
            index += 1
        if segments:
            matches.append(segments)
        at = text.find(query, end)
    return matches


@dataclass
class Highlights:
    """An app's open search as the widgets draw it: the folded query and the selected match."""

    query: str = ""
    generation: int = 0
    """Bumped whenever the query changes: widgets find their matches again."""
    current: tuple[weakref.ref[Widget], int] | None = None
    """The selected match: the widget that draws it and its number among that widget's matches."""
    _found: weakref.WeakKeyDictionary[Widget, tuple[tuple[int, int, int], list[LineMatch]]] = field(
        default_factory=weakref.WeakKeyDictionary
    )

    def set_query(self, query: str) -> None:
        if query != self.query:
            self.query = query
            self.generation += 1
            self.current = None
            self._found.clear()

    def matches_of(self, widget: Highlighted) -> list[LineMatch]:
        """The matches ``widget`` draws (found from its lines once per query and size)."""
        if not self.query:
            return []
        width, height = widget.size
        key = (self.generation, width, height)
        known = self._found.get(widget)
        if known is not None and known[0] == key:
            return known[1]
        lines = [strip.text for strip in widget.plain_lines(Region(0, 0, width, height))] if width else []
        found = find_in_lines(lines, self.query)
        self._found[widget] = (key, found)
        return found

    def current_in(self, widget: Widget) -> int | None:
        current = self.current
        if current is None or current[0]() is not widget:
            return None
        return current[1]


_BY_APP: weakref.WeakKeyDictionary[DOMNode, Highlights] = weakref.WeakKeyDictionary()


def highlights_for(app: DOMNode) -> Highlights:
    """The search highlights of ``app`` (one per app, made on first use)."""
    found = _BY_APP.get(app)
    if found is None:
        found = _BY_APP[app] = Highlights()
    return found


def _restyle(strip: Strip, first: int, last: int, style: Style) -> Strip:
    """``strip`` with cells ``first``..``last`` drawn in ``style`` on top of their own."""
    before, middle, after = strip.divide([first, last, strip.cell_length])
    marked = Strip(list(Segment.apply_style(iter(middle), post_style=style)), middle.cell_length)
    return Strip.join([before, marked, after])


class Highlighted(Widget):
    """A chat widget whose drawn lines show the open search's matches (see the module's text).

    Put it after the Textual widget class in the bases (``class UserBlock(Static, Highlighted)``):
    Textual takes a class's CSS type names along the first base only, and none of those bases draws
    its lines itself, so this `render_lines` still comes before `Widget`'s.
    """

    def plain_lines(self, crop: Region) -> list[Strip]:
        """The widget's lines in ``crop`` without search marks."""
        return super().render_lines(crop)

    def render_lines(self, crop: Region) -> list[Strip]:
        strips = super().render_lines(crop)
        highlights = _BY_APP.get(self.app)
        if highlights is None or not highlights.query:
            return strips
        matches = highlights.matches_of(self)
        if not matches:
            return strips
        current = highlights.current_in(self)
        by_row: dict[int, list[tuple[int, int, bool]]] = {}
        for number, match in enumerate(matches):
            for row, first, last in match:
                by_row.setdefault(row, []).append((first, last, number == current))
        marked = list(strips)
        for offset in range(len(marked)):
            row_marks = by_row.get(crop.y + offset)
            if not row_marks:
                continue
            strip = marked[offset]
            for first, last, is_current in row_marks:
                lo, hi = max(first, crop.x) - crop.x, min(last, crop.right) - crop.x
                if hi > lo:
                    strip = _restyle(strip, lo, hi, CURRENT_STYLE if is_current else MATCH_STYLE)
            marked[offset] = strip
        return marked
