"""Links in markdown, written as pi 0.87.1 writes them: clickable OSC 8 links where the terminal takes
them (`pi_tui.modes.interactive.terminal_caps`), else the address after the text, in parentheses.

- Answers (Textual's markdown widget): with links on, each block's content carries the link's address
  in its style (`linked_block`), which Textual writes as OSC 8 around the text; with links off, the
  parser writes the address after the text (`show_link_urls`). Clicking a link in the app opens it
  either way.
- Thinking (Rich's markdown): Rich writes OSC 8 for a link; with links off, the parser writes the
  address after the text and drops the link itself (`drop_links`).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from textual.content import Content, Span
from textual.style import Style

if TYPE_CHECKING:
    from textual.widgets.markdown import MarkdownBlock

__all__ = ["drop_links", "link_spans", "linked_block", "show_link_urls"]


def show_link_urls(state: StateCore) -> None:
    """Write each link's address after its text, in parentheses, as pi does where the terminal cannot
    take a clickable link: ``[docs](https://example.com)`` reads ``docs (https://example.com)``. A link
    that is its own address (``<https://…>``, a bare URL, an e-mail address) is left as it is."""
    for block in state.tokens:
        children = block.children
        if not children:
            continue
        shown: list[Token] = []
        open_link: Token | None = None
        words: list[str] = []
        for token in children:
            shown.append(token)
            if token.type == "link_open":
                open_link, words = token, []
            elif open_link is not None and token.type in ("text", "code_inline"):
                words.append(token.content)
            elif token.type == "link_close" and open_link is not None:
                href = str(open_link.attrs.get("href", ""))
                text = "".join(words)
                bare = href.removeprefix("mailto:")
                if href and open_link.markup not in ("autolink", "linkify") and text not in (href, bare):
                    address = Token("text", "", 0)
                    address.content = f" ({href})"
                    shown.append(address)
                open_link = None
        block.children = shown


def drop_links(state: StateCore) -> None:
    """Remove the link tokens themselves (their text stays): nothing is written as an OSC 8 link."""
    for block in state.tokens:
        if block.children:
            block.children = [t for t in block.children if t.type not in ("link_open", "link_close")]


def _href(style: Style) -> str | None:
    """The address of a link Textual's markdown styled (its click action is ``link('<href>')``)."""
    action = style.meta.get("@click")
    if not isinstance(action, str) or not action.startswith("link(") or not action.endswith(")"):
        return None
    try:
        href = ast.literal_eval(action[5:-1])
    except (ValueError, SyntaxError):
        return None
    return href if isinstance(href, str) and href else None


def link_spans(content: Content) -> Content:
    """``content`` with each markdown link's text also styled with its address (written as OSC 8)."""
    added = [
        Span(span.start, span.end, Style(link=href))
        for span in content.spans
        if isinstance(span.style, Style) and (href := _href(span.style)) is not None
    ]
    return Content(content.plain, spans=[*content.spans, *added]) if added else content


_linked: dict[type[MarkdownBlock], type[MarkdownBlock]] = {}


def linked_block(base: type[MarkdownBlock]) -> type[MarkdownBlock]:
    """``base`` whose links are written as OSC 8 links (one class per base, made once)."""
    made = _linked.get(base)
    if made is not None:
        return made

    def build_from_token(self: MarkdownBlock, token: Token) -> None:
        base.build_from_token(self, token)
        if any(child.type == "link_open" for child in token.children or ()) and isinstance(
            self.content, Content
        ):
            self.set_content(link_spans(self.content))

    made = _linked[base] = type(f"Linked{base.__name__}", (base,), {"build_from_token": build_from_token})
    return made
