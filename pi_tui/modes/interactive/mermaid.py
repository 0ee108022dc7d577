"""``markdown.mermaid``: a Mermaid code block in an answer drawn as a Unicode diagram, as pi 0.87.1 draws it.

pi draws with grok-mermaid; pi-tui with mermaid-term, a Python port of the same renderer (grok-build's),
which draws the diagrams pi draws line for line (flowcharts, state, class, ER and sequence diagrams).
As in pi: ``off`` never draws, ``final`` draws once the answer is complete, ``streaming`` (the default)
also while it streams; thinking is never drawn; a diagram wider than the space at hand, one that does
not parse, or a kind the renderer does not draw stays the code block it was. The diagram is coloured
from the theme as pi colours it (borders ``borderMuted``, node text ``text``, edges ``accent``, edge
labels ``muted``, titles ``accent`` in bold).

The renderer is imported with the first Mermaid block, never at start-up.
"""

from __future__ import annotations

from functools import lru_cache

from textual.content import Content, Span

__all__ = ["diagram", "draws_now", "is_mermaid"]

# Marker SGR codes handed to the renderer for each part of a diagram, read back as theme styles.
_BORDER, _TEXT, _EDGE, _EDGE_LABEL, _TITLE = 201, 202, 203, 204, 205
_THEME_STYLES = {
    _BORDER: "$pi-border-muted",
    _TEXT: "$pi-text",
    _EDGE: "$pi-accent",
    _EDGE_LABEL: "$pi-muted",
    _TITLE: "bold $pi-accent",
}
_FALLBACK_FRAME = "╭ mermaid: "
"""How the renderer starts the framed source it draws for what it cannot lay out (pi leaves that code)."""


def is_mermaid(info: str) -> bool:
    """Whether a code block's info string (```mermaid, ```Mermaid title) names Mermaid, as pi reads it."""
    words = info.split()
    return bool(words) and words[0].lower() == "mermaid"


def draws_now(mode: str, *, streaming: bool) -> bool:
    """Whether a Mermaid block is drawn as a diagram in ``mode`` while the answer is (not) streaming."""
    return mode == "streaming" or (mode == "final" and not streaming)


@lru_cache(maxsize=64)
def _art(source: str) -> tuple[Content, int] | None:
    """The diagram for ``source`` and its width in columns; None when it does not draw (memoised: a
    streamed answer builds its blocks again at every write)."""
    from rich.cells import cell_len

    try:
        from mermaid_term import MermaidStyles, Style, render
    except ImportError:  # an install without it (an old environment): the block stays code
        return None
    styles = MermaidStyles(
        border=Style((_BORDER,)),
        node_text=Style((_TEXT,)),
        edge=Style((_EDGE,)),
        edge_label=Style((_EDGE_LABEL,)),
        title=Style((_TITLE,)),
    )
    try:
        art = render(source, styles)
    except Exception:  # a third-party parser on model-written text: a failure leaves the code as it is
        return None
    if art is None or not art.plain_lines or art.plain_lines[0].startswith(_FALLBACK_FRAME):
        return None
    rows: list[list[tuple[str, int]]] = []  # per row, each character with its part's marker code
    for line in art.styled_lines:
        row: list[tuple[str, int]] = []
        for span in line.spans:
            code = next((c for c in span.style.sgr if c in _THEME_STYLES), 0)
            row.extend((char, code) for char in span.content)
        rows.append(row)
    while rows and not "".join(char for char, _ in rows[0]).strip():
        rows.pop(0)  # pi's renderer starts at the diagram's first row
    _box_sides_are_borders(rows)
    text_parts: list[str] = []
    spans: list[Span] = []
    offset = 0
    width = 0
    for index, row in enumerate(rows):
        if index:
            text_parts.append("\n")
            offset += 1
        start = 0
        while start < len(row):
            code = row[start][1]
            stop = start
            while stop < len(row) and row[stop][1] == code:
                stop += 1
            if code:
                spans.append(Span(offset + start, offset + stop, _THEME_STYLES[code]))
            start = stop
        plain = "".join(char for char, _ in row)
        text_parts.append(plain)
        offset += len(plain)
        width = max(width, cell_len(plain))
    return Content("".join(text_parts), spans=spans), width


_TOP_LEFT, _TOP_RIGHT, _BOTTOM_LEFT = "┌╭", "┐╮", "└╰"


def _box_sides_are_borders(rows: list[list[tuple[str, int]]]) -> None:
    """The renderer marks a node's corners as border and its sides as edge lines; pi's renderer draws the
    whole box as border (dim) and only the connections as edges (accent): each box found from its corners
    gets its sides marked border too."""
    for y, row in enumerate(rows):
        for x, (char, code) in enumerate(row):
            if char not in _TOP_LEFT or code != _BORDER:
                continue
            right = next((i for i in range(x + 1, len(row)) if row[i][0] in _TOP_RIGHT), None)
            bottom = next(
                (j for j in range(y + 1, len(rows)) if x < len(rows[j]) and rows[j][x][0] in _BOTTOM_LEFT), None
            )
            if right is None or bottom is None:
                continue
            for j in range(y, bottom + 1):
                for i in (x, right) if y < j < bottom else range(x, right + 1):
                    if i < len(rows[j]) and rows[j][i][1] == _EDGE:
                        rows[j][i] = (rows[j][i][0], _BORDER)


def diagram(source: str, available: int) -> Content | None:
    """``source`` drawn as a diagram no wider than ``available`` columns; None to keep the code block."""
    drawn = _art(source)
    if drawn is None or drawn[1] > available:
        return None
    return drawn[0]
