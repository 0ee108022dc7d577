"""Transcript search (pi's ``tui.altScreen.search``): a box at the chat's top right that finds text in
the whole conversation, mounted or not.

Typing a query selects the first match at or after where the reader is (the selected match, or the
top of the view when the search opened), wrapping to the first; the next / previous keys move through
the matches, wrapping at the ends; the box counts them (``3/17``, or "No matches"). The selected match
is brought into view, a third of the way down the chat, mounting the chat's window there first when
it is far from what is mounted. Matches are counted and found in the items' text (`search_corpus`), so
a key costs a scan of the conversation's text however long it is; on screen the widgets mark what
they draw (`search_marks`). Closing the box (Escape, or the search key again) leaves the chat where it
is and gives the keys back to the editor.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Input, Static

from .blocks_base import Block
from .keys import key_display
from .search_corpus import SearchCorpus, TextSettings, fold
from .search_marks import Highlighted, highlights_for

if TYPE_CHECKING:
    from .app import PiApp

__all__ = ["SearchBar", "TranscriptSearch"]

LOCATE_TRIES = 60
"""Frames to wait for a mounted item's blocks to be laid out (an answer's markdown is parsed after its
block mounts) before the selected match is looked for in them; a bound, not a delay."""


class SearchBar(Horizontal):
    """The search box: the query and the count, the next / previous keys in its bottom border."""

    DEFAULT_CSS = """
    SearchBar {
        position: absolute;
        width: 40%;
        min-width: 32;
        height: 3;
        border: round $pi-border-muted;
        border-subtitle-color: $pi-dim;
        background: $pi-background;
    }
    SearchBar > Input {
        width: 1fr;
        height: 1;
        border: none;
        padding: 0 1;
        background: $pi-background;
    }
    SearchBar > Input:focus { border: none; background-tint: transparent; }
    SearchBar > #search-count { width: auto; color: $pi-dim; padding: 0 1 0 0; }
    """

    def __init__(self, previous_key: str, next_key: str, changed: Callable[[str], None]) -> None:
        super().__init__(id="transcript-search")
        self.changed = changed
        self.input = Input(placeholder="Find in transcript", id="search-query")
        self.count = Static("", id="search-count")
        self.border_subtitle = f"↑ {previous_key or 'Unbound'} · ↓ {next_key or 'Unbound'}"

    def compose(self) -> ComposeResult:
        yield self.input
        yield self.count

    def on_mount(self) -> None:
        self.input.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.changed(event.value)

    def place(self, width: int) -> None:
        """Put the box at the top right of a screen ``width`` cells wide."""
        box = max(32, width * 2 // 5)
        self.styles.offset = (max(0, width - box - 1), 1)


class TranscriptSearch:
    """The open search of one app: its query, the selected match, and the box."""

    def __init__(self, app: PiApp) -> None:
        self._app = weakref.ref(app)
        self.corpus = SearchCorpus()
        self.bar: SearchBar | None = None
        self.query = ""
        """The folded query."""
        self.selected = -1
        """Where the selected match starts in the corpus text (-1: none)."""
        self.number = -1
        """The selected match's number among all (0-based)."""
        self.total = 0
        self.anchor = 0
        """Where typing looks for the first match from: the selected match, or the top of the view."""
        self.view_item = 0
        self.view_top = 0
        """The first item in view and the chat's scroll when the box opened (the first match is the
        first drawn from there down)."""
        self.located = False
        """The selected match has been brought into view (or there is none): what a test waits for."""
        self._reveal = 0

    @property
    def app(self) -> PiApp:
        app = self._app()
        assert app is not None, "the search outlived its app"
        return app

    @property
    def selections(self) -> int:
        """How many times a match (or none) was selected since the app started: one per search key."""
        return self._reveal

    @property
    def is_open(self) -> bool:
        return self.bar is not None

    @property
    def has_focus(self) -> bool:
        """Whether the box is open and takes the keys (the search keys act only then)."""
        return self.bar is not None and self.bar.input.has_focus

    def toggle(self) -> None:
        if self.bar is not None:
            self.close()
        else:
            self.open()

    def open(self) -> None:
        """Show the box and give it the keys; matches start from the top of the view."""
        app = self.app
        if self.bar is not None:
            self.bar.input.focus()
            return
        self.query, self.selected, self.number, self.total = "", -1, -1, 0
        self.located = True
        self._refresh_corpus()
        self.view_item = self._first_item_in_view()
        self.view_top = round(app.chat.scroll_y)
        self.anchor = self.corpus.item_start(self.view_item)
        bar = SearchBar(
            _first_key(app, "tui.altScreen.searchPrevious"),
            _first_key(app, "tui.altScreen.searchNext"),
            self.set_query,
        )
        bar.place(app.size.width)
        self.bar = bar
        app.screen_stack[0].mount(bar)  # it takes the keys once mounted

    def close(self) -> None:
        """Hide the box and its marks; the chat stays where it is, the editor takes the keys again."""
        bar = self.bar
        if bar is None:
            return
        self.bar = None
        self._reveal += 1
        self.located = True
        highlights_for(self.app).set_query("")
        self._repaint()
        bar.remove()
        self.app.editor.focus()

    def resized(self, width: int) -> None:
        if self.bar is not None:
            self.bar.place(width)

    def set_query(self, text: str) -> None:
        """The query typed: select the first match from the reader's place on."""
        query = fold(text)
        if query == self.query:
            return
        if self.selected >= 0:
            self.anchor = self.selected
        self.query = query
        highlights_for(self.app).set_query(query)
        self._refresh_corpus()
        corpus = self.corpus
        self.total = corpus.count(query)
        self.selected = corpus.find(query, self._start_from(query)) if self.total else -1
        self.number = corpus.count(query, 0, self.selected) if self.selected >= 0 else -1
        self._show()

    def _start_from(self, query: str) -> int:
        """Where the first match is looked for: the selected match's start, or, before any was
        selected, past the matches the first item in view draws above the top of the view."""
        if self.anchor != self.corpus.item_start(self.view_item):
            return self.anchor
        above = self._drawn_above(self.view_item, self.view_top)
        at = self.anchor
        end = self.corpus.item_start(self.view_item + 1)
        for _ in range(above):
            found = self.corpus.text.find(query, at, end)
            if found < 0:
                break
            at = found + len(query)
        return at

    def _drawn_above(self, item: int, top: int) -> int:
        """How many matches item ``item``'s mounted widgets draw above chat line ``top``."""
        highlights = highlights_for(self.app)
        above = 0
        for block in self.app.chat.mounted_blocks():
            if not isinstance(block, Block) or block.source_index != item:
                continue
            for leaf in _drawing(block):
                offset = block.virtual_region.y + leaf.region.y - block.region.y
                above += sum(1 for match in highlights.matches_of(leaf) if offset + match[0][0] < top)
        return above

    def step(self, direction: int) -> None:
        """Select the next (``direction`` 1) or previous (-1) match, wrapping at the ends."""
        if not self.query:
            return
        self._refresh_corpus()
        corpus = self.corpus
        self.total = corpus.count(self.query)
        if not self.total:
            self.selected = self.number = -1
        elif direction > 0:
            start = self.selected + len(self.query) if self.selected >= 0 else 0
            found = corpus.text.find(self.query, start)
            self.selected, self.number = (
                (found, self.number + 1) if found >= 0 else (corpus.find(self.query), 0)
            )
        else:
            self.selected = corpus.rfind(
                self.query, self.selected if self.selected >= 0 else len(corpus.text)
            )
            self.number = corpus.count(self.query, 0, self.selected)
        self._show()

    # --- drawing -----------------------------------------------------------------------------------

    def _refresh_corpus(self) -> None:
        app = self.app
        settings = TextSettings(app.tools_expanded, app.hide_thinking, app.hidden_thinking_label)
        self.corpus.refresh(app.chat.items, app.chat.result_of, settings)

    def _first_item_in_view(self) -> int:
        chat = self.app.chat
        top = chat.scroll_y
        for block in chat.mounted_blocks():
            if isinstance(block, Block) and block.virtual_region.bottom > top:
                return block.source_index
        return chat.first_mounted

    def _show(self) -> None:
        bar = self.bar
        if bar is not None:
            if not self.query:
                bar.count.update("")
            elif self.total == 0:
                bar.count.update("No matches")
            else:
                bar.count.update(f"{self.number + 1}/{self.total}")
        highlights_for(self.app).current = None
        self._reveal += 1
        self._repaint()
        if self.selected < 0:
            self.located = True
            return
        self.located = False
        item = self.corpus.item_at(self.selected)
        nth = self.corpus.count(self.query, self.corpus.item_start(item), self.selected)
        chat = self.app.chat
        chat.reading()
        chat.show_item(item)
        token = self._reveal
        self.app.call_after_refresh(lambda: self._locate(token, item, nth, LOCATE_TRIES))

    def _locate(self, token: int, item: int, nth: int, tries: int) -> None:
        """Select the ``nth`` match drawn by item ``item``'s widgets and scroll it into view, once they
        are laid out and placed (the item's top when its widgets draw fewer matches than its text
        holds). Looked at again after each scroll, from the places the next layout gives: blocks
        mounted above the view meanwhile (reading ahead) move everything."""
        if token != self._reveal or self.bar is None:
            return
        app = self.app
        chat = app.chat

        def again() -> None:
            chat.when_placed(
                lambda: app.call_after_refresh(lambda: self._locate(token, item, nth, tries - 1))
            )

        if chat.reading_ahead and tries > 0:
            chat.after_reading_ahead(again)  # blocks going in above the view move the lines below
            return
        blocks: list[Widget] = [
            b for b in chat.mounted_blocks() if isinstance(b, Block) and b.source_index == item
        ]
        waiting = not blocks or any(not b.region.height for b in blocks) or any(_unparsed(b) for b in blocks)
        if waiting and tries > 0:
            again()
            return
        target = self._select_drawn(blocks, nth)
        if target is not None and tries > 0:
            height = max(1, chat.scrollable_content_region.height)
            top = round(chat.scroll_y)
            if not top <= target < top + height:
                chat.scroll_to(y=max(0, target - height // 3), animate=False, immediate=True)
                again()
                return
        self._repaint()
        self.located = True

    def _select_drawn(self, blocks: list[Widget], nth: int) -> int | None:
        """Make the ``nth`` match ``blocks`` draw the selected one; the chat line it is drawn on (the
        first block's top when they draw fewer)."""
        highlights = highlights_for(self.app)
        seen = 0
        for block in blocks:
            for leaf in _drawing(block):
                matches = highlights.matches_of(leaf)
                if seen + len(matches) > nth:
                    highlights.current = (weakref.ref(leaf), nth - seen)
                    row = matches[nth - seen][0][0]
                    return block.virtual_region.y + (leaf.region.y - block.region.y) + row
                seen += len(matches)
        return blocks[0].virtual_region.y if blocks else None

    def _repaint(self) -> None:
        """Draw the marks again where they show: the widgets in view. A widget out of view marks
        what it draws when it comes into view (the marks are laid over its cached lines each time
        they are drawn), so it is not made to render its content again."""
        chat = self.app.chat
        view = chat.region
        for widget in _drawing(chat):
            if widget.region.overlaps(view):
                widget.refresh()
        self.app.draw_soon()


def _first_key(app: PiApp, pi_id: str) -> str:
    """The first key of action ``pi_id`` as pi's search box names it (``Shift+Enter``)."""
    keys = app.keymap.get(pi_id) or []
    return key_display(keys[:1], capitalize=True)


def _drawing(root: Widget) -> list[Highlighted]:
    """The widgets under ``root`` (and itself) that mark matches, in the order they are drawn. By type,
    not by a query: Textual's queries go by CSS type names, which a markdown block that is also
    `Highlighted` does not carry."""
    return [w for w in root.walk_children(with_self=True) if isinstance(w, Highlighted)]


def _unparsed(block: Widget) -> bool:
    """An answer's block whose markdown has not made its paragraphs yet."""
    from .markdown_block import AssistantText

    return isinstance(block, AssistantText) and bool(block.text.strip()) and not block.children
