"""`AssistantText`: an answer's text as markdown, streamed. Apart from `blocks` because Textual's
Markdown widget (markdown-it, pygments) takes ~35 ms to import: a new session is ready without it."""

from __future__ import annotations

import time
from typing import Any

from textual.widgets import Markdown

from . import blocks
from .blocks_base import Block

__all__ = ["AssistantText"]


class AssistantText(Markdown, Block):
    """Assistant text as markdown; streamed through `MarkdownStream` with appends batched per frame."""

    DEFAULT_CSS = """
    AssistantText {
        margin: 1 0 0 0;
        padding: 0 1;
        background: transparent;
    }
    AssistantText MarkdownH1, AssistantText MarkdownH2, AssistantText MarkdownH3 { color: $pi-md-heading; }
    AssistantText MarkdownBlockQuote { border-left: outer $pi-md-quote-border; color: $pi-md-quote; }
    AssistantText MarkdownFence { border-left: wide $pi-md-code-block-border; }
    """

    def __init__(self, text: str = "") -> None:
        super().__init__(text)
        self._pending: list[str] = []
        self._stream: Any = None
        self._flushing = False
        self._last_flush = 0.0
        self._pending_since = 0.0
        self.text = text
        self.content_index = 0
        self._draw_first_now = False
        self.eager_first_write = True
        """The first streamed text is written at once, even right after a key press (the Enter that sent
        the prompt is one): only later writes wait for the batch timer and for a gap in typing. The
        adapter clears it for the continuation blocks of a long answer."""

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
        if not self._pending:
            self._pending_since = time.monotonic()
        self._pending.append(delta)
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
        self._flushing = False
        self._last_flush = time.monotonic()
        if not self._pending:
            return
        chunk = "".join(self._pending)
        self._pending.clear()
        if self._stream is None:
            # The block's first text: appended here (the stream's task would add a hop); an answer's
            # first text, the one the user waits for, is drawn without waiting for the frame period.
            self._stream = Markdown.get_stream(self)
            await self.append(chunk)
            draw_soon = getattr(self.screen, "draw_soon", None)
            if self._draw_first_now and draw_soon is not None:
                draw_soon()
            return
        await self._stream.write(chunk)

    async def finish(self, final: str | None = None) -> None:
        """The message ended: flush, stop the stream, and make sure the final text is what is shown."""
        await self._flush()
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        if final is not None and final != self.text:
            self.text = final
            await self.update(final)
