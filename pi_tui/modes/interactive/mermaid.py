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
    lines = list(art.styled_lines)
    while lines and not "".join(span.content for span in lines[0].spans).strip():
        lines.pop(0)  # pi's renderer starts at the diagram's first row
    text_parts: list[str] = []
    spans: list[Span] = []
    offset = 0
    width = 0
    for index, line in enumerate(lines):
        if index:
            text_parts.append("\n")
            offset += 1
        row = ""
        for span in line.spans:
            style = next((_THEME_STYLES[code] for code in span.style.sgr if code in _THEME_STYLES), None)
            if style is not None and span.content:
                spans.append(Span(offset + len(row), offset + len(row) + len(span.content), style))
            row += span.content
        text_parts.append(row)
        offset += len(row)
        width = max(width, cell_len(row))
    return Content("".join(text_parts), spans=spans), width


def diagram(source: str, available: int) -> Content | None:
    """``source`` drawn as a diagram no wider than ``available`` columns; None to keep the code block."""
    drawn = _art(source)
    if drawn is None or drawn[1] > available:
        return None
    return drawn[0]
