"""`AssistantText`: an answer's text as markdown, streamed. Apart from `blocks` because Textual's
Markdown widget (markdown-it, pygments) takes ~35 ms to import: a new session is ready without it."""

from __future__ import annotations

import asyncio
import time
import weakref
from contextlib import suppress
from functools import partial

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.content import Content
from textual.css.query import NoMatches
from textual.widgets import Label, Markdown
from textual.widgets.markdown import MarkdownBlock, MarkdownFence

from . import blocks
from .blocks_base import Block
from .markdown_links import linked_block, show_link_urls
from .mermaid import diagram, draws_now, is_mermaid
from .pacing import PacedScreen
from .search_marks import Highlighted

__all__ = ["AssistantText", "markdown_parser"]


def markdown_parser(*, linked: bool = False) -> MarkdownIt:
    """The parser of every answer's markdown: GitHub-like, with raw HTML read as text.

    A model writes ``List<String>``, ``<div>`` or JSX in prose as often as in code; with HTML enabled
    the parser turns such text into HTML tokens, which a terminal cannot draw, and the words vanish.
    Read as text they are shown as written (pi shows them too). Autolinks (``<https://…>``) are a rule
    of their own and still work. A single line break inside a paragraph stays a line break, as pi draws
    the lines a model wrote; markdown would join them with a space. ``linked``: links are written as
    OSC 8 links (`pi_tui.modes.interactive.markdown_links`); else each address follows its text.

    Made once and shared: Textual asks for a parser at every write of an answer and every answer
    mounted (a long chat read up mounts several a key press), and making one costs ~0.5 ms, more than
    parsing a short answer; a parse keeps its state apart from the parser's.
    """
    parser = _PARSERS.get(linked)
    if parser is None:
        parser = MarkdownIt("gfm-like", {"html": False})
        if not linked:  # OSC 8 links are not written: the address follows the text
            parser.core.ruler.push("link_urls", show_link_urls)
        parser.core.ruler.push("keep_line_breaks", _keep_line_breaks)
        _PARSERS[linked] = parser
    return parser


_PARSERS: dict[bool, MarkdownIt] = {}


def _parser_for(block: weakref.ref[AssistantText]) -> MarkdownIt:
    """The parser for ``block``'s next write: with OSC 8 links when its app writes them."""
    answer = block()
    return markdown_parser(linked=answer is not None and blocks.links_on(answer.app))


def _keep_line_breaks(state: StateCore) -> None:
    """Every soft line break (a newline inside a paragraph) becomes a hard one."""
    for block in state.tokens:
        for child in block.children or ():
            if child.type == "softbreak":
                child.type = "hardbreak"


_HEADING_MARKS = {f"h{level}": "#" * level + " " for level in range(3, 7)}
_marked_headings: dict[str, type[MarkdownBlock]] = {}


def _marked_heading(base: type[MarkdownBlock], marks: str) -> type[MarkdownBlock]:
    """``base`` (Textual's heading block) drawn with ``marks`` before its text."""

    def build_from_token(self: MarkdownBlock, token: Token) -> None:
        base.build_from_token(self, token)
        if isinstance(self.content, Content):
            self.set_content(Content(marks) + self.content)

    return type(f"Marked{base.__name__}", (base,), {"build_from_token": build_from_token})


_searchable_blocks: dict[type[MarkdownBlock], type[MarkdownBlock]] = {}
_SEARCHED_BLOCKS = frozenset({"paragraph_open", "h1", "h2", "h3", "h4", "h5", "h6"})
"""The markdown blocks that draw text themselves (lists, quotes and tables hold paragraphs or cells)."""


def _searchable(base: type[MarkdownBlock]) -> type[MarkdownBlock]:
    """``base`` marking the open transcript search's matches in its lines (`search_marks`)."""
    made = _searchable_blocks.get(base)
    if made is None:
        made = _searchable_blocks[base] = type(base.__name__, (base, Highlighted), {})
    return made


class FenceLine(Label, Highlighted):
    """A line of a code block (a fence line or the code), marking search matches in what it draws."""


class LabelledFence(MarkdownFence):
    """A code block drawn as pi draws it: a line with the opening fence and its language (```python),
    the code indented by two, and a closing ``` line."""

    def compose(self) -> ComposeResult:
        yield FenceLine(self._opening(), id="fence-open", classes="fence-line")
        # Textual's own code label, as a searchable one (`set_content` finds it by its id)
        yield FenceLine(self._highlighted_code, id="code-content", expand=True)
        yield FenceLine("```", classes="fence-line")

    def _opening(self) -> str:
        return f"```{self.lexer or ''}"

    def set_content(self, content: Content) -> None:
        # A streamed fence is updated in place: its language may have grown (```pyt, then ```python).
        super().set_content(content)
        with suppress(NoMatches):
            self.query_one("#fence-open", Label).update(self._opening())
        self.show_diagram()

    def on_mount(self) -> None:
        self.show_diagram()

    def on_resize(self) -> None:
        if is_mermaid(self.lexer or ""):
            self.show_diagram()  # a diagram drawn or not by the width at hand

    def show_diagram(self) -> None:
        """A Mermaid block is drawn as its diagram when ``markdown.mermaid`` says so and it fits
        (`pi_tui.modes.interactive.mermaid`); otherwise, and for any other language, as code."""
        if not is_mermaid(self.lexer or ""):
            return
        drawn = self._diagram()
        self.set_class(drawn is not None, "-diagram")
        with suppress(NoMatches):
            self.query_one("#code-content", Label).update(drawn if drawn is not None else self._highlighted_code)

    def _diagram(self) -> Content | None:
        answer = next((node for node in self.ancestors if isinstance(node, AssistantText)), None)
        if answer is None or not draws_now(blocks.mermaid_mode(self.app), streaming=answer.streaming):
            return None
        available = answer.content_size.width or self.app.size.width
        return diagram(self.code, available)


class AssistantText(Markdown, Block):
    """Assistant text as markdown, streamed: deltas are queued in O(1) and written in batches per frame.

    Writes are serialized by the block itself (no `MarkdownStream`): one write at a time, and a write
    that finds another in progress waits for it, then takes everything queued meanwhile. Nothing is
    written before the block is mounted, because Markdown's mount draws the block's initial text and
    would wipe it; the block's own mount writes what came before it.
    """

    DEFAULT_CSS = """
    AssistantText {
        margin: 0;  /* its first block's top margin is the blank line before the answer */
        padding: 0 1;
        background: transparent;
    }
    AssistantText MarkdownHeader {
        color: $pi-md-heading;
        background: transparent;
        text-style: bold;
        content-align: left top;
        width: 1fr;
        margin: 1 0;
    }
    AssistantText MarkdownH1 { text-style: bold underline; }
    AssistantText MarkdownBlockQuote { border-left: solid $pi-md-quote-border; color: $pi-md-quote; }
    /* Textual's own rule for light themes (a half block) outranks the one above without the :light. */
    AssistantText MarkdownBlockQuote:light { border-left: solid $pi-md-quote-border; }
    /* One blank line before each paragraph, list, code block, heading or table and none after: the
       next block's top margin is then the one blank line after an answer, as in pi (a last paragraph's
       bottom margin made it two, and two at each place a long answer goes on in a new block). */
    AssistantText.answer > MarkdownBlock { margin: 1 0 0 0; }  /* the class outranks Textual's rules */
    AssistantText MarkdownTable { width: auto; }  /* as wide as its cells, as in pi; a wider one wraps its cells */
    AssistantText.answer > MarkdownOrderedList { margin: 1 0 0 -1; }  /* "1. " under the text, as pi (not " 1. ") */
    AssistantText MarkdownFence { overflow-x: hidden; }
    AssistantText MarkdownFence > Label { width: 1fr; padding: 0 0 0 2; }
    AssistantText MarkdownFence > .fence-line { padding: 0; color: $pi-md-code-block-border; }
    AssistantText MarkdownFence.-diagram > .fence-line { display: none; }  /* a diagram, not code */
    AssistantText MarkdownFence.-diagram > Label { padding: 0; }
    """

    BULLETS = ["- "]
    """Every unordered list item starts with ``- `` at any depth, as in pi (Textual cycles •, ▪, ‣…)."""

    def __init__(self, text: str = "") -> None:
        # The factory holds the block weakly: a bound method kept by the block itself was a reference
        # cycle, and a block leaving the chat then waited for the cycle collector to be freed.
        super().__init__(text, parser_factory=partial(_parser_for, weakref.ref(self)), classes="answer")
        self._pending: list[str] = []
        self._flushing = False
        self._ready = False  # mounted (Markdown has drawn its initial text): writes may begin
        self._writes = asyncio.Lock()  # one write at a time, in order
        self._last_flush = 0.0
        self._pending_since = 0.0
        self.text = text
        self.content_index = 0
        self._draw_first_now = False
        self._written_whole = False
        """The shown text was last written whole (`update`): the next streamed write draws it all again
        (`_write_streamed`)."""
        self.eager_first_write = True
        self.streaming = False
        """Text is streaming into the block (``finish`` ends it): ``markdown.mermaid: final`` waits."""
        """The first streamed text is written at once, even right after a key press (the Enter that sent
        the prompt is one): only later writes wait for the batch timer and for a gap in typing. The
        adapter clears it for the continuation blocks of a long answer."""

    def get_block_class(self, block_name: str) -> type[MarkdownBlock]:
        """Headings of level 3 and deeper keep their ``###`` marks, as pi draws them (bold alone does
        not tell them apart from a level 2); code blocks are drawn between fence lines (`LabelledFence`);
        with OSC 8 links on, a block's links carry their address (`linked_block`)."""
        if block_name in ("fence", "code_block"):
            return LabelledFence
        block_class = super().get_block_class(block_name)
        marks = _HEADING_MARKS.get(block_name)
        if marks is not None:
            marked = _marked_headings.get(block_name)
            if marked is None:
                marked = _marked_headings[block_name] = _marked_heading(block_class, marks)
            block_class = marked
        if block_name in _SEARCHED_BLOCKS:
            block_class = _searchable(block_class)
        return linked_block(block_class) if blocks.links_on(self.app) else block_class

    def update(self, markdown: str) -> AwaitComplete:
        """Show ``markdown`` in place of the block's text (Markdown's own mount writes its first text so)."""
        self._written_whole = bool(markdown)
        return super().update(markdown)

    async def _write_streamed(self) -> None:
        """Bring what is shown up to ``text``: what was added after the text shown is appended.

        Textual's `append` parses again from where its last append left off; after a whole write that
        is the text's last line, which may be inside a paragraph, list or code block, and the parsed
        rest then took the place of that whole block: the lines before it vanished. So the first write
        after a whole one (and one whose text does not go on from what is shown, after `set_text`) draws
        everything again, from an empty document; later appends resume at the start of the last block.
        """
        self._pending.clear()
        shown, text = self.source, self.text
        if not self._written_whole and text.startswith(shown):
            if len(text) > len(shown):
                await self.append(text[len(shown) :])
            return
        self._written_whole = False
        with self.app.batch_update():
            await super().update("")
            await self.append(text)

    def on_mount(self) -> None:
        # Markdown's own mount handler runs after this one (a subclass's first) and draws the initial
        # text: writing starts once it has, with what was streamed (or even finished) before.
        self.call_next(self._start_writing)

    async def _start_writing(self) -> None:
        self._ready = True
        if self._pending:
            await self._flush()

    def split_point(self, delta: str) -> int | None:
        """Where in ``delta`` this block should end and a new one begin (None: keep appending here)."""
        if len(self.text) < blocks.SPLIT_CHARS:
            return None
        cut = delta.rfind("\n\n")
        if cut < 0 or (self.text + delta[:cut]).count("```") % 2:
            return None
        return cut + 2

    def append_delta(self, delta: str) -> None:
        """Queue a streamed fragment (O(1)). The first one is shown at once; later ones are written in
        batches, at most every ``FLUSH_SECONDS``, in a gap between key presses."""
        self.text += delta
        self.streaming = True
        self._queue(delta)

    def set_text(self, text: str) -> None:
        """Show ``text`` in place of what streamed so far (the message holds text no delta brought), and
        go on streaming after it; written as a delta is."""
        self.text = text
        self.streaming = True
        self._queue(text)

    def _queue(self, piece: str) -> None:
        if not self._pending:
            self._pending_since = time.monotonic()
        self._pending.append(piece)
        if not self._flushing:
            self._flushing = True
            if self.eager_first_write:
                self.eager_first_write = False
                self._draw_first_now = True
                self.call_next(self._flush)
                return
            wait = self._last_flush + blocks.FLUSH_SECONDS - time.monotonic()
            if wait <= 0:
                self.call_next(self._flush_when_quiet)
            else:
                self.set_timer(wait, self._flush_when_quiet)

    async def _flush_when_quiet(self) -> None:
        delay = blocks.typing_delay(time.monotonic(), self._pending_since)
        if delay > 0:
            self.set_timer(delay, self._flush_when_quiet)
            return
        await self._flush()

    async def _flush(self) -> None:
        """Write what is queued (after the write in progress, if any; nothing before the mount)."""
        self._flushing = False
        self._last_flush = time.monotonic()
        if not self._ready:
            return  # on_mount writes it
        async with self._writes:
            if not self._pending:
                return  # a write that waited before this one took it
            await self._write_streamed()
            if self._draw_first_now:
                # An answer's first text, the one the user waits for, is drawn without waiting for the
                # frame period, with what arrived while it was written (from a fast stream, often the rest
                # of a short answer): one round more, not a loop, so the first frame is never held long.
                self._draw_first_now = False
                if self._pending:
                    await self._write_streamed()
                screen = self.screen
                if isinstance(screen, PacedScreen):  # the main screen; a modal does not pace its frames
                    screen.draw_soon()

    async def finish(self, final: str | None = None) -> None:
        """The message ended: write what is queued, and make sure the final text is what is shown.

        Returns once it is written; before the mount, at once (the mount writes it).
        """
        was_streaming, self.streaming = self.streaming, False
        if final is not None and final != self.text:  # the message's text wins over what was streamed
            self.text = final
            if not self._ready:
                self._pending = [final]
                return
            async with self._writes:
                self._pending.clear()
                await self.update(final)
            return
        if self._ready:
            await self._flush()
            if was_streaming:
                for fence in self.query(LabelledFence):
                    fence.show_diagram()  # "final": the answer is complete now
