"""Rich's markdown drawn as pi draws it, for text drawn as one Rich renderable (thinking).

Rich draws a bullet item as `` • `` and a numbered one as `` 1 ``; pi draws ``- `` and ``1. ``, flush with
the text around them, and a wrapped item continues under its first word. pi keeps a paragraph's single
line breaks, which markdown reads as spaces.
"""

from __future__ import annotations

from typing import ClassVar

from markdown_it import MarkdownIt
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import ListItem, Markdown, MarkdownElement
from rich.segment import Segment

__all__ = ["PiMarkdown"]


class _PiListItem(ListItem):
    def render_bullet(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self._with_marker(console, options, "- ", "markdown.item.bullet")

    def render_number(
        self, console: Console, options: ConsoleOptions, number: int, last_number: int
    ) -> RenderResult:
        marker = f"{number}. ".ljust(len(str(last_number)) + 2)  # the texts of 9. and 10. line up
        yield from self._with_marker(console, options, marker, "markdown.item.number")

    def _with_marker(
        self, console: Console, options: ConsoleOptions, marker: str, style_name: str
    ) -> RenderResult:
        marker_style = console.get_style(style_name, default="none")
        lines = console.render_lines(
            self.elements, options.update(width=options.max_width - len(marker)), style=self.style
        )
        first, rest = Segment(marker, marker_style), Segment(" " * len(marker), marker_style)
        for index, line in enumerate(lines):
            yield first if index == 0 else rest
            yield from line
            yield Segment("\n")


_PARSERS: dict[bool, MarkdownIt] = {}


def _parser(linked: bool) -> MarkdownIt:
    """The markdown-it parser Rich's `Markdown` makes for itself (CommonMark with strikethrough and
    tables), made once: a parse keeps its state apart from the parser's. Not ``linked``: each link's
    address follows its text and the link itself is dropped (no OSC 8), as pi writes links then."""
    parser = _PARSERS.get(linked)
    if parser is None:
        parser = MarkdownIt().enable("strikethrough").enable("table")
        if not linked:
            from .markdown_links import drop_links, show_link_urls

            parser.core.ruler.push("link_urls", show_link_urls)
            parser.core.ruler.push("drop_links", drop_links)
        _PARSERS[linked] = parser
    return parser


class PiMarkdown(Markdown):
    """`rich.markdown.Markdown` whose list items start with ``- `` and ``1. `` as pi's, and whose lines
    stay lines: a single line break inside a paragraph is drawn as one, as pi draws it (markdown reads it
    as a space)."""

    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements,
        "list_item_open": _PiListItem,
    }

    def __init__(
        self, markup: str, *, style: str = "none", code_theme: str = "monokai", hyperlinks: bool = True
    ) -> None:
        # Rich's own __init__ builds a new markdown-it parser for every Markdown (~0.5 ms, ten times the
        # parse of a short thought, and a long chat read up draws several thoughts a key press): the
        # fields it sets are set here, the text parsed by one shared parser of the same rules.
        self.markup = markup
        self.parsed = _parser(hyperlinks).parse(markup)
        self.code_theme = code_theme
        self.justify = None
        self.style = style
        self.hyperlinks = True
        self.inline_code_lexer = None
        self.inline_code_theme = code_theme
        for token in self.parsed:
            for child in token.children or ():
                if child.type == "softbreak":
                    child.type = "hardbreak"
