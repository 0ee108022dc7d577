"""The chat log: a scroll view of blocks with a bounded number mounted.

Every item the conversation shows (a message, a summary, a notice) is kept in ``items``; only a window of
them is mounted as widgets, normally the most recent. When more than ``WINDOW`` blocks are mounted, the
oldest are removed. Scrolling up mounts earlier items again ahead of the reader (``prefetch``: a
``CHUNK`` at a time between frames, shown together with a scroll that keeps the reader's lines in place)
while fewer than ``AHEAD_SCREENS`` screens of them are above the view; clicking the marker at the top
mounts the previous ``BATCH`` at once. Reading further up keeps the window small: the newest blocks are
removed as older ones are mounted (beyond ``WINDOW`` blocks, or more than ``BELOW_SCREENS`` screens below
the view), and scrolling down mounts them again (a marker at the bottom says how many are below).
``show_start`` (Alt+Home) mounts the conversation's first items; anything new, or ``show_end``, brings
the window back to the end. The view follows the bottom (``anchor``) until the user scrolls up to read.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import events
from textual.await_remove import AwaitRemove
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.geometry import Offset, Size
from textual.layout import Layout
from textual.scrollbar import ScrollBar
from textual.widget import AwaitMount, Widget
from textual.widgets import Static

from pi_tui.modes.interactive.error_text import shown_error
from pi_tui.util.collector import FullCollectionsDeferred

from .blocks_base import Block
from .scrollbar import ChatScrollBar
from .textual_private import (
    note_changed_children,
    own_vertical_scrollbar,
    release_removed,
    with_component_nodes,
)
from .workers import run_later

if TYPE_CHECKING:
    from pi_tui.ai.types import CustomMessage

    from .blocks import NoticeBlock, ToolBlock

__all__ = ["INTERRUPTED_TOOL_TEXT", "ChatLog", "EarlierMarker", "LaterMarker", "Notice"]

INTERRUPTED_TOOL_TEXT = "No result: the run was interrupted before this tool finished"
"""What a tool call of the history that never got a result shows (the model is sent pi's "No result
provided" for it)."""


class Notice:
    """A status line kept in the log's items (so it survives windowing like a message)."""

    __slots__ = ("text", "level", "status", "expanded")

    def __init__(
        self, text: str, level: str = "info", *, status: bool = False, expanded: str | None = None
    ) -> None:
        self.text = text
        self.level = level
        self.status = status
        """A status line (`ChatLog.status`): the next status replaces it while nothing came between."""
        self.expanded = expanded
        """What the line shows instead while Ctrl+O expands (the start-up header's full key list)."""


class EarlierMarker(Static):
    """The top line while older items are not mounted: how many, and how to show them."""

    DEFAULT_CSS = """
    EarlierMarker { color: $pi-dim; padding: 0 1; display: none; }
    EarlierMarker.-visible { display: block; }
    """

    def on_click(self) -> None:
        log = self.parent
        if isinstance(log, ChatLog):
            log.load_earlier()


class LaterMarker(Static):
    """The bottom line while newer items are not mounted (the reader went far up): how many."""

    DEFAULT_CSS = """
    LaterMarker { color: $pi-dim; padding: 0 1; display: none; }
    LaterMarker.-visible { display: block; }
    """

    def on_click(self) -> None:
        log = self.parent
        if isinstance(log, ChatLog):
            log.load_later()


class ChatLog(VerticalScroll):
    """The conversation. ``add(item)`` appends; ``load(items)`` replaces everything (resume, /new)."""

    DEFAULT_CSS = """
    ChatLog {
        layout: stream;  /* cached placements: a flush re-measures only what changed, not every block */
        height: 1fr;
        background: $pi-background;
        scrollbar-size-vertical: 1;
        padding: 0 1 1 1;
    }
    /* outputPad 0 (pi 0.87.1): your messages, answers and thinking without their column left and right */
    ChatLog.-output-pad-0 UserBlock, ChatLog.-output-pad-0 ThinkingBlock, ChatLog.-output-pad-0 AssistantText {
        padding: 0 0;
    }
    """

    BLANK = True
    """The log draws nothing of its own (its blocks draw the text, the scroll bar is a widget apart): its
    lines are one blank strip in its background instead of lines rendered, cached and composed again
    after each change of its size (every step of reading ahead, and Textual's second layout after it,
    repainted all of them)."""

    WINDOW = 80
    """Most blocks mounted at once; beyond it the oldest are removed (they stay in ``items``)."""
    BATCH = 24
    """How many earlier items one step of "show earlier" mounts."""
    CHUNK = 8
    """How many earlier items one step of reading ahead mounts (``prefetch``): small, so one step's
    layout fits in a frame or two and a key pressed meanwhile waits little."""
    AHEAD_SCREENS = 2
    """Reading up, earlier items are mounted ahead while fewer than this many screens of them are above
    the view, one ``CHUNK`` at a time between frames, so a press rarely reaches the top of the window."""
    BELOW_SCREENS = 3
    """Reading up, items that start more than this many screens below the view are unmounted (the window
    is sized by what the reader can reach soon, not only by a count of blocks: every layout and every
    garbage collection walks each mounted widget)."""
    QUIET = 0.4
    """Seconds without the reader scrolling (a key, the wheel) before the full garbage collection held
    off meanwhile runs (`reading`)."""
    INITIAL = 6
    """How many items a load mounts: enough to fill a screen; mounting markdown is what costs (~50 ms
    per message here), so a resumed session shows its end quickly and the rest comes on scroll."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[Any] = []
        self.first_mounted = 0
        self.tools: dict[str, ToolBlock] = {}
        self.results: dict[str, tuple[str, bool, Any]] = {}
        """Finished tool calls' results by call id: a call's block built later (a window that
        starts at the result, a block pruned and mounted again) is shown finished from it."""
        self._loaded_results: dict[str, Any] = {}
        self._unanswered: set[str] = set()
        """The loaded history's tool result messages by call id, turned into `results` entries only
        when their call's block is built (most of a long session's are never shown)."""
        self.marker = EarlierMarker()
        self.later = LaterMarker()
        self.last_mounted: int | None = None
        """Where the mounted window ends when it does not reach the end of ``items`` (an index)."""
        self.renderers: dict[str, Any] = {}
        self._live: tuple[object, Callable[[], list[Widget]]] | None = None
        """The message being streamed and what builds its blocks again (`start_live`)."""
        self._prefetching = False
        self._unplaced = False
        """Blocks were shown above the view and the view scrolled by their lines, but no layout has placed
        them yet: until one has, the blocks' regions are those of before while the scroll is already the
        new one (`when_placed`)."""
        self._windows = 0
        """How many mounts of unplaced blocks began (`_place_when_mounted`): an earlier one's end is not
        the end of the mounting."""
        self._window_mounting = False
        """A window built anew (`load`, `show_end`, Alt+Home), or earlier items mounted above one
        (`load_earlier`), is still mounting: its answers' markdown is parsed and mounted after the blocks
        themselves, so their heights and the places of the blocks below them are known only once that is
        done and laid out (`when_placed` waits for it)."""
        self._placed_waiters: list[Callable[[], object]] = []
        self._ahead_waiters: list[Callable[[], object]] = []
        self._layouts = 0
        """The number (`_arranged`) of the last arrangement whose layout callback has run."""
        self._arranged = 0
        """How many times the log has been arranged (`pre_layout`)."""
        self._shown_at = 0
        """`_arranged` when blocks were last shown above the view: a later arrangement places them."""
        self._unplaced_lines = 0
        """The lines of the blocks shown above the view that no arrangement has placed yet: the view may
        already scroll over them (`max_scroll_y`)."""
        self._laid_out: asyncio.Future[None] | None = None
        self._view_height = 0
        self._generation = 0
        """Bumped whenever mounted blocks are replaced or pruned: a read-ahead step in flight gives up."""
        self._layout_counts: dict[Widget, int] = {}
        """Each child's count of layout requests at the last arrangement (`note_changed_children`)."""
        self._widget_items: weakref.WeakSet[Widget] = weakref.WeakSet()
        """Items that are widgets themselves (mounted again as they are, so never released)."""
        self._releasing: set[asyncio.Task[None]] = set()
        self._collections = FullCollectionsDeferred()
        self._last_read = 0.0
        self._quiet_pending = False

    def compose(self) -> Iterable[Widget]:
        yield self.marker
        yield self.later

    def on_mount(self) -> None:
        self.anchor()

    @property
    def scroll_offset(self) -> Offset:
        """Where the view stands, never above the top of the log.

        While anchored, Textual pins the last line to the bottom of the view even when everything is
        shorter than the view (its scroll goes negative), so a new session's header sat just above the
        editor. pi's full-screen view starts at the top and follows the end only once it overflows; the
        log is drawn from its top while it fits (``scroll_y`` itself is left as Textual keeps it)."""
        offset = super().scroll_offset
        return offset if offset.y >= 0 else Offset(offset.x, 0)

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        """The log's scroll bar, which reuses its rows' lines as the thumb moves (`ChatScrollBar`)."""
        return own_vertical_scrollbar(self, lambda: ChatScrollBar(thickness=self.scrollbar_size_vertical))

    def set_output_pad(self, columns: int) -> None:
        """``outputPad``: 1 column (pi's default) or none left and right of messages, answers and thinking."""
        self.set_class(columns == 0, "-output-pad-0")

    def set_scrollbar_mode(self, mode: str) -> None:
        """``fullscreenScrollbar``: ``hidden`` takes the bar's column away, ``always`` shows the bar even
        when everything fits, ``auto`` shows it while the reader scrolls (`ChatScrollBar`)."""
        self.styles.scrollbar_size_vertical = 0 if mode == "hidden" else 1
        self.styles.overflow_y = "scroll" if mode == "always" else "auto"
        bar = self.vertical_scrollbar
        if isinstance(bar, ChatScrollBar):
            bar.set_mode(mode)

    @property
    def max_scroll_y(self) -> int:
        """How far the view can scroll down, counting the lines of blocks just shown above the view that
        no layout has placed yet.

        Showing them scrolls the view down by their lines at once, before the layout that places them.
        Near the bottom that scroll goes past the end of the log as laid out before them; bounded by that
        end, it would stop short, Textual would take a view at the end for one following it again, and
        the layout would move the view to the new end (a first Ctrl+Up from the bottom ending there)."""
        return max(0, super().max_scroll_y + self._unplaced_lines)

    def pre_layout(self, layout: Layout) -> None:
        # A block grown from inside (an answer's new paragraphs) is measured again, not drawn at the
        # height the stream layout cached for it (the next block would cover its new lines).
        note_changed_children(self, self._layout_counts)
        self._arranged += 1
        # This arrangement places the blocks shown: the log's size it gives (set once the whole layout is
        # done) counts their lines.
        self._unplaced_lines = 0
        if self._unplaced or self._laid_out is not None:
            # Called as the log is arranged; the blocks' regions are stored once the whole layout is
            # done, so what waits for them runs after it (a callback queued now runs after the layout).
            self.call_later(self._after_layout, self._arranged)

    def _after_layout(self, arranged: int) -> None:
        # By the number of the arrangement this follows, not by how many callbacks ran: one queued by an
        # arrangement from before blocks were shown can run after they are, and is no layout of them.
        self._layouts = max(self._layouts, arranged)
        laid_out = self._laid_out
        if laid_out is not None and not laid_out.done():
            laid_out.set_result(None)
        mounted = not self._prefetching and not self._window_mounting
        if self._unplaced and mounted and arranged > self._shown_at:
            # Reading ahead places its own blocks, once it has finished its step; a new window is placed
            # by the first layout after its blocks are mounted.
            self._placed()

    def when_placed(self, callback: Callable[[], object]) -> None:
        """Run ``callback`` once every shown block's region is where the view's scroll expects it: now,
        after the layout that places the blocks reading ahead has just shown above the view, or after
        the one that places a window just built anew, once its blocks are mounted.

        What goes by where the blocks are (Ctrl+Up to the previous prompt) waits through this: between
        the scroll and that layout (a frame later, or later still while the app batches its drawing) the
        regions are those of before, and a prompt's old place is some lines above where it now is. The
        blocks of a new window have no place at all until then (a Ctrl+Up right after the session was
        shown went by those and ended at the end, or at the top of the window).
        """
        if self._unplaced:
            self._placed_waiters.append(callback)
        else:
            callback()

    def after_reading_ahead(self, callback: Callable[[], object]) -> None:
        """Run ``callback`` once the reading ahead under way is over (now when none is): keys that need
        earlier items mounted (Ctrl+Up held faster than they are) go on once they are."""
        if self._prefetching:
            self._ahead_waiters.append(callback)
        else:
            callback()

    def _placed(self) -> None:
        self._unplaced = False
        waiting, self._placed_waiters = self._placed_waiters, []
        for callback in waiting:
            callback()

    # --- building blocks --------------------------------------------------------------------------

    def blocks_for(self, item: Any, index: int) -> list[Widget]:
        """The widgets that show one item (tool results update their call's block and make none)."""
        # Imported here, not at the top: the message models and the agent package (~35 ms of CPU) are
        # not needed by the first frame (an empty chat, or a resumed session's preview), which comes
        # before the session exists; by the time blocks are built the session has loaded them.
        from pi_tui.agent.tool import result_text
        from pi_tui.ai.types import (
            AssistantMessage,
            BashExecutionMessage,
            BranchSummaryMessage,
            CompactionSummaryMessage,
            CustomMessage,
            ToolResultMessage,
            UserMessage,
            message_text,
        )

        from .blocks import (
            BashBlock,
            NoticeBlock,
            SummaryBlock,
            ThinkingBlock,
            UserBlock,
        )

        blocks: list[Widget] = []
        live = self._live
        if live is not None and item is live[0]:
            # The answer streaming: its blocks come from what has streamed so far, which the stream goes
            # on filling (the item itself may be the stream's first, empty, snapshot).
            blocks = live[1]()
        elif isinstance(item, UserMessage):
            blocks.append(UserBlock(message_text(item)))
        elif isinstance(item, AssistantMessage):
            from .markdown_block import AssistantText  # only now: a new session's header needs no Markdown

            for part in item.content:
                if part.type == "text" and part.text.strip():
                    blocks.append(AssistantText(part.text))
                elif part.type == "thinking" and part.thinking.strip():
                    blocks.append(ThinkingBlock(part.thinking))
                elif part.type == "toolCall":
                    blocks.append(self.build_tool(part.id, part.name, dict(part.arguments or {})))
            if item.stop_reason == "error":
                blocks.append(
                    NoticeBlock(f"Error: {shown_error(item.error_message or 'unknown error')}", "error")
                )
            elif item.stop_reason == "aborted":
                blocks.append(NoticeBlock("Operation aborted", "warning"))
        elif isinstance(item, ToolResultMessage):
            self.record_result(item.tool_call_id, result_text(item), item.is_error, item.details)
        elif isinstance(item, BashExecutionMessage):
            bash = BashBlock(item.command, bool(item.exclude_from_context))
            bash.set_outcome(item.output, item.exit_code, item.cancelled)
            blocks.append(bash)
        elif isinstance(item, CompactionSummaryMessage):
            blocks.append(SummaryBlock("compaction", item.summary, item.tokens_before))
        elif isinstance(item, BranchSummaryMessage):
            blocks.append(SummaryBlock("branch", item.summary))
        elif isinstance(item, CustomMessage):
            if item.display:
                blocks.append(self._custom_block(item))
        elif isinstance(item, Notice):
            blocks.append(NoticeBlock(item.text, item.level, expanded=item.expanded))
        elif isinstance(item, Widget):
            self._widget_items.add(item)
            blocks.append(item)
        for block in blocks:
            if isinstance(block, Block):
                block.source_index = index
        return blocks

    def build_tool(self, call_id: str, name: str, args: dict[str, object]) -> ToolBlock:
        """A new block for tool call ``call_id`` (not mounted), known by its id from now on, showing its
        result when it has one."""
        from .blocks import ToolBlock

        tool = ToolBlock(call_id, name, args)
        self.tools[call_id] = tool
        result = self.result_of(call_id)
        if result is not None:
            tool.set_result(*result)
        elif call_id in self._unanswered:
            tool.set_result(INTERRUPTED_TOOL_TEXT, True)
        return tool

    def result_of(self, tool_call_id: str) -> tuple[str, bool, Any] | None:
        """The finished result of tool call ``tool_call_id`` (text, is-error, details), if any."""
        result = self.results.get(tool_call_id)
        if result is None:
            message = self._loaded_results.get(tool_call_id)
            if message is not None:
                from pi_tui.agent.tool import result_text
                result = self.results[tool_call_id] = (
                    result_text(message),
                    message.is_error,
                    message.details,
                )
        return result

    def record_result(self, tool_call_id: str, text: str, is_error: bool, details: Any = None) -> None:
        """A tool call finished: show it on its block if mounted, and keep it for a block built later."""
        self.results[tool_call_id] = (text, is_error, details)
        called = self.tools.get(tool_call_id)
        if called is not None:
            called.set_result(text, is_error, details)

    def _custom_block(self, message: CustomMessage) -> Widget:
        from pi_tui.ai.types import message_text

        from .blocks import CustomBlock

        body = message_text(message)
        renderer = self.renderers.get(message.custom_type)
        if renderer is not None:
            try:
                rendered = renderer.render(message, {"expanded": False}, None)
                if isinstance(rendered, list | tuple):
                    body = "\n".join(str(line) for line in rendered)
                elif rendered is not None:
                    body = str(rendered)
            except Exception as exc:  # an extension's renderer must not break the log
                body = f"{body}\n(renderer failed: {exc})"
        return CustomBlock(message.custom_type, body)

    # --- adding and windowing ---------------------------------------------------------------------

    def add(self, item: Any) -> list[Widget]:
        """Append an item and mount its blocks at the bottom; returns them (live streaming fills them)."""
        self.show_end()
        index = len(self.items)
        self.items.append(item)
        blocks = self.blocks_for(item, index)
        if blocks:
            self.mount_all(blocks, before=self.later)
            self.prune()
        return blocks

    def attach(self, widget: Widget) -> Widget:
        """Mount a live block for the newest item (a streamed text, thinking or tool block)."""
        self.show_end()
        if isinstance(widget, Block):
            widget.source_index = max(0, len(self.items) - 1)
        self.mount(widget, before=self.later)
        return widget

    def notice(self, text: str, level: str = "info") -> NoticeBlock:
        from .blocks import NoticeBlock

        (block,) = self.add(Notice(text, level))
        assert isinstance(block, NoticeBlock)
        return block

    def status(self, text: str) -> NoticeBlock:
        """A status line, as pi's: it replaces the previous status when nothing came after it, so a
        key pressed again and again (Ctrl+O, Ctrl+T, Shift+Tab) leaves one line saying how things are."""
        from .blocks import NoticeBlock

        last = self.items[-1] if self.items else None
        children = self.children
        block = children[-2] if len(children) >= 3 else None  # the newest block, before `later`
        if (
            isinstance(last, Notice)
            and last.status
            and self.last_mounted is None
            and isinstance(block, NoticeBlock)
            and block.source_index == len(self.items) - 1
        ):
            last.text = text
            block.set_text(text)
            return block
        (block,) = self.add(Notice(text, status=True))
        assert isinstance(block, NoticeBlock)
        return block

    def load(self, items: list[Any]) -> None:
        """Replace the log with ``items``, mounting only the last ``BATCH`` of them."""
        self._unmount_all()
        from pi_tui.ai.types import AssistantMessage, ToolResultMessage

        self._live = None
        self.items = list(items)
        self.tools = {}
        # A result can come before its call's block exists (the window may start at the result, and
        # earlier items are mounted on scroll): every result is known before any block is built.
        self.results = {}
        self._loaded_results = {
            item.tool_call_id: item for item in self.items if isinstance(item, ToolResultMessage)
        }
        # A call in the history with no result will never get one (the run was stopped while the tool
        # ran or waited, say by closing the terminal): it is shown stopped, not running for ever.
        self._unanswered = {
            part.id
            for item in self.items
            if isinstance(item, AssistantMessage)
            for part in item.content
            if part.type == "toolCall" and part.id not in self._loaded_results
        }
        start = max(0, len(self.items) - self.INITIAL)
        widgets: list[Widget] = []
        for index in range(start, len(self.items)):
            widgets += self.blocks_for(self.items[index], index)
        self.first_mounted = start
        self._mount_window(widgets)
        self._update_marker()
        self.anchor()
        self.call_after_refresh(self.when_placed, self._fill_viewport)

    def _unmount_all(self) -> None:
        self._generation += 1
        self._drop(self.mounted_blocks())
        self.tools = {}
        self.last_mounted = None
        self._update_later()

    def _mount_range(self, start: int, end: int) -> None:
        """Unmount everything and mount ``items[start:end]`` (``end`` at the end: following it)."""
        self._unmount_all()
        widgets: list[Widget] = []
        for index in range(start, end):
            widgets += self.blocks_for(self.items[index], index)
        self.first_mounted = start
        self.last_mounted = end if end < len(self.items) else None
        self._mount_window(widgets)
        self._update_marker()
        self._update_later()

    def _mount_window(self, widgets: list[Widget]) -> None:
        """Mount the blocks of a window built anew (the old one unmounted); until they are mounted and
        laid out, what goes by the blocks' places waits (`when_placed`)."""
        if not widgets:
            return
        self._place_when_mounted(self.mount_all(widgets, before=self.later))

    def _place_when_mounted(self, mounting: AwaitMount) -> None:
        """Blocks are being mounted that no layout has placed (a new window, earlier items above one):
        what goes by the blocks' places waits (`when_placed`) until they are mounted and laid out."""
        if not self.is_attached:
            return
        self._unplaced = True
        self._window_mounting = True
        self._windows += 1
        window = self._windows

        async def mounted() -> None:
            try:
                await mounting
            finally:
                if window == self._windows:  # no newer mount took its place meanwhile
                    self._window_mounting = False
                    self._shown_at = self._arranged  # the next arrangement places them all
                    self.refresh(layout=True)

        run_later(self, mounted, group="chat-window", exit_on_error=False)

    def show_start(self) -> None:
        """The conversation's first items at the top (Alt+Home): the window moves there in one step."""
        if self.first_mounted > 0:
            self._mount_range(0, min(len(self.items), self.BATCH))
        self.scroll_home(animate=False)

    def show_item(self, index: int) -> bool:
        """Have item ``index`` mounted (transcript search): outside the window, the window moves there in
        one step, a `CHUNK` of items before it and a `BATCH` after. True when it moved; the caller scrolls."""
        end = self.last_mounted if self.last_mounted is not None else len(self.items)
        if self.first_mounted <= index < end or not 0 <= index < len(self.items):
            return False
        self._mount_range(max(0, index - self.CHUNK), min(len(self.items), index + self.BATCH))
        return True

    def show_end(self) -> bool:
        """Bring the window back to the end when the reader had gone far up (new output, Enter, End);
        True when it moved. The caller scrolls (or the anchor follows)."""
        if self.last_mounted is None:
            return False
        self._mount_range(max(0, len(self.items) - self.INITIAL), len(self.items))
        self.anchor()
        self.call_after_refresh(self.when_placed, self._fill_viewport)
        return True

    def _fill_viewport(self) -> None:
        """Short messages may not fill the screen: mount earlier ones until they do (or none are left).

        Run once the new window is laid out (`when_placed`): while the app batches its drawing, the
        log's size after a refresh is still that of the window before it."""
        if self.first_mounted > 0 and self.max_scroll_y == 0 and self.size.height > 0:
            self.load_earlier(self.INITIAL)
            self.call_after_refresh(self.when_placed, self._fill_viewport)  # measured once they are placed

    def _drop(self, blocks: list[Widget]) -> None:
        """Unmount blocks, first emptying their widgets' caches of rendered lines (a repaint does), and
        once they are gone unlink them from their style sheets so they are freed at once.

        Textual keeps the line caches of up to 1,024 widgets alive after they are gone (a cache on a
        colour lookup keeps each one in its key): reading a long session up and down went through that
        many within minutes, and their lines (~200,000 objects) were walked by every full garbage
        collection, 150 ms each, every few key presses. The unlinking (`release_removed`) leaves the
        blocks to reference counting: before it, each full collection while PageUp was held also freed
        some 30,000 objects of the blocks unmounted since the last one (40-100 ms)."""
        if not blocks:
            return
        nodes = [node for block in blocks for node in block.walk_children(with_self=True)]
        for node in nodes:
            node.refresh()
        removal = self.remove_children(blocks)
        kept = self._widget_items
        if any(block in kept for block in blocks):
            nodes = [
                node for block in blocks if block not in kept for node in block.walk_children(with_self=True)
            ]
        # The virtual nodes of their component classes are gathered now: Textual forgets them on removal.
        task = asyncio.get_running_loop().create_task(self._release(removal, with_component_nodes(nodes)))
        self._releasing.add(task)
        task.add_done_callback(self._releasing.discard)

    @staticmethod
    async def _release(removal: AwaitRemove, nodes: list[DOMNode]) -> None:
        await removal
        release_removed(nodes)

    def mounted_blocks(self) -> list[Widget]:
        return [c for c in self.children if c is not self.marker and c is not self.later]

    def start_live(self, message: Any, rebuild: Callable[[], list[Widget]]) -> None:
        """Record a streaming message; the live blocks attached after it are tagged with its index.

        While it streams, ``rebuild`` makes its blocks whenever the window is built again over it (the
        reader went far up and came back): new blocks showing what has streamed, which the stream then
        fills instead of the unmounted ones. `replace_item` with the ended message stops that.
        """
        self.show_end()
        self.items.append(message)
        self._live = (message, rebuild)

    def replace_item(self, old: Any, new: Any) -> bool:
        """Put ``new`` where ``old`` is (the latest occurrence), so blocks built again from the items
        show the final message; False when ``old`` is not there."""
        if self._live is not None and self._live[0] is old:
            self._live = None
        items = self.items
        for index in range(len(items) - 1, -1, -1):
            if items[index] is old:
                items[index] = new
                return True
        return False

    def ensure_tool(self, call_id: str, name: str, args: dict[str, Any]) -> ToolBlock:
        """The block of tool call ``call_id``, attached now when it is not there yet."""
        from .blocks import ToolBlock

        block = self.tools.get(call_id)
        if block is None:
            block = ToolBlock(call_id, name, args)
            self.tools[call_id] = block
            self.attach(block)
        return block

    def prune(self) -> None:
        """Unmount the oldest blocks beyond the window (they are built again from the items on scroll)."""
        blocks = self.mounted_blocks()
        excess = len(blocks) - self.WINDOW
        if excess <= 0:
            return
        excess += self.BATCH // 2  # prune in steps, not one block per message
        doomed = blocks[:excess]
        keep_from = blocks[excess] if excess < len(blocks) else None
        self._generation += 1
        from .blocks import ToolBlock

        for widget in doomed:
            if isinstance(widget, ToolBlock):
                self.tools.pop(widget.tool_call_id, None)
        self._drop(doomed)
        if isinstance(keep_from, Block) and keep_from.source_index >= 0:
            self.first_mounted = keep_from.source_index
        self._update_marker()

    def load_earlier(self, count: int | None = None) -> int:
        """Mount up to ``count`` (default ``BATCH``) items before the first mounted one; returns how many."""
        if self.first_mounted <= 0:
            return 0
        start = max(0, self.first_mounted - (count or self.BATCH))
        widgets: list[Widget] = []
        for index in range(start, self.first_mounted):
            widgets += self.blocks_for(self.items[index], index)
        count = self.first_mounted - start
        self.first_mounted = start
        if widgets:
            # Above the blocks on screen: until laid out, the places of those below are the old ones (a
            # Ctrl+Up meanwhile went that many lines too far up).
            self._place_when_mounted(self.mount_all(widgets, after=self.marker))
        self._update_marker()
        self._trim_newest()
        return count

    def _item_of(self, blocks: list[Widget]) -> list[int]:
        """The item index of each mounted block (a widget that is not a `Block` goes with the block
        before it)."""
        indexes: list[int] = []
        current = self.first_mounted
        for widget in blocks:
            if isinstance(widget, Block) and widget.source_index >= 0:
                current = widget.source_index
            indexes.append(current)
        return indexes

    def _trim_newest(self) -> None:
        """Unmount the newest blocks, whole items at a time, beyond the window (reading far up): more than
        ``WINDOW`` blocks, or items that start more than ``BELOW_SCREENS`` screens below the view."""
        blocks = self.mounted_blocks()
        if not blocks:
            return
        indexes = self._item_of(blocks)
        cuts: list[int] = []
        excess = len(blocks) - self.WINDOW
        if excess > 0:
            cuts.append(indexes[len(blocks) - excess - self.BATCH // 2])
        if self._view_height > 0:
            limit = self.scroll_y + (1 + self.BELOW_SCREENS) * self._view_height
            for position in range(1, len(blocks)):
                widget = blocks[position]
                if (
                    widget.display
                    and indexes[position] != indexes[position - 1]
                    and widget.virtual_region.y >= limit
                ):
                    cuts.append(indexes[position])
                    break
        if not cuts:
            return
        cut = min(cuts)
        if cut <= self.first_mounted:
            return
        from .blocks import ToolBlock

        doomed: list[Widget] = []
        for widget, index in zip(blocks, indexes, strict=True):
            if index >= cut:
                if isinstance(widget, ToolBlock):
                    self.tools.pop(widget.tool_call_id, None)
                doomed.append(widget)
        self._drop(doomed)
        self.last_mounted = cut
        self._update_later()

    def load_later(self, count: int | None = None) -> int:
        """Mount up to ``count`` (default ``BATCH``) items after the last mounted one and unmount the
        oldest beyond the window; returns how many were mounted."""
        if self.last_mounted is None:
            return 0
        start = self.last_mounted
        end = min(len(self.items), start + (count or self.BATCH))
        widgets: list[Widget] = []
        for index in range(start, end):
            widgets += self.blocks_for(self.items[index], index)
        self.last_mounted = end if end < len(self.items) else None
        if widgets:
            self.mount_all(widgets, before=self.later)
        self._update_later()
        self.prune()
        return end - start

    def _update_later(self) -> None:
        below = len(self.items) - self.last_mounted if self.last_mounted is not None else 0
        self.later.set_class(below > 0, "-visible")
        if below:
            self.later.update(Text(f"↓ {below} later item{'s' if below != 1 else ''} (scroll down to show)"))

    def _update_marker(self) -> None:
        hidden = self.first_mounted
        self.marker.set_class(hidden > 0, "-visible")
        if hidden:
            self.marker.update(
                Text(f"↑ {hidden} earlier item{'s' if hidden != 1 else ''} (scroll up or click to show)")
            )

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        # Read ahead only for a reader going up: not for a view following the end that moved up because
        # the oldest blocks were pruned above it.
        if new < old and self.first_mounted > 0 and new < min(self._ahead_lines(), self.max_scroll_y):
            self.prefetch()
        elif self.last_mounted is not None and old < new >= self.max_scroll_y:
            self.call_after_refresh(self._load_later_keeping_view)

    def on_mouse_scroll_down(self, _event: events.MouseScrollDown) -> None:
        self.reading()
        self.scrolled_down()

    def on_mouse_scroll_up(self, _event: events.MouseScrollUp) -> None:
        self.reading()

    def reading(self) -> None:
        """The user scrolls the chat (a key, the wheel): full garbage collections wait until they have
        not for ``QUIET`` seconds (`FullCollectionsDeferred`), so none lands on a key held down."""
        bar = self.vertical_scrollbar
        if isinstance(bar, ChatScrollBar):
            bar.scrolled()  # an "auto" scroll bar shows while the reader scrolls
        self._collections.hold()
        if not self._collections.holding:
            return
        self._last_read = time.monotonic()
        if not self._quiet_pending:
            self._quiet_pending = True
            self.set_timer(self.QUIET, self._quiet)

    def _quiet(self) -> None:
        left = self._last_read + self.QUIET - time.monotonic()
        if left > 0.005:
            self.set_timer(left, self._quiet)
            return
        self._quiet_pending = False
        self._collections.release()

    def on_unmount(self) -> None:
        self._collections.release()

    def scrolled_down(self) -> None:
        """A scroll down that found the view already at the bottom: mount what is below, if anything."""
        if self.last_mounted is not None and self.scroll_y >= self.max_scroll_y:
            self.call_after_refresh(self._load_later_keeping_view)

    def _load_later_keeping_view(self) -> None:
        """Mount the next batch below, keeping what the reader sees in place so the wheel goes on."""
        blocks = self.mounted_blocks()
        if not blocks:
            return
        keep = blocks[-1]
        if not self.load_later():
            return
        self.call_after_refresh(lambda: self.scroll_to_widget(keep, animate=False, top=False))

    # --- reading ahead, upwards -------------------------------------------------------------------

    def on_resize(self, event: events.Resize) -> None:
        self._view_height = event.container_size.height

    def _ahead_lines(self) -> int:
        return self.AHEAD_SCREENS * max(1, self._view_height)

    @property
    def reading_ahead(self) -> bool:
        """Whether earlier items are being mounted ahead of the reader (`prefetch`)."""
        return self._prefetching

    def read_further_ahead(self) -> bool:
        """Go on reading ahead when the view is near enough to the top of the window for that to mount
        earlier items; whether reading ahead is under way (`after_reading_ahead` then waits for it)."""
        if self.first_mounted > 0 and self.scroll_y < self._ahead_lines():
            self.prefetch()
        return self._prefetching

    def prefetch(self) -> None:
        """Mount earlier items above the view ahead of the reader, a ``CHUNK`` at a time after each
        frame, until ``AHEAD_SCREENS`` screens of them are above it (or none are left); the lines the
        reader sees stay where they are. Does nothing while a step is under way."""
        if self._prefetching or self.first_mounted <= 0:
            return
        self._prefetching = True
        run_later(self, self._prefetch, group="chat-prefetch", exit_on_error=False)

    async def _prefetch(self) -> None:
        hidden: list[Widget] = []
        try:
            # The scroll that started this is drawn first: building and mounting the first chunk (a few
            # ms, with the drawing held while it mounts) would otherwise run between that key and its
            # frame, and the key would wait for it.
            await self._next_frame()
            while self.is_attached:
                generation = self._generation
                # One layout per step: the chunk mounted hidden in the previous step is shown and the next
                # one mounted hidden in the same frame, and the newest blocks beyond the window go.
                # The newest blocks beyond the window go first, while the last layout still tells where
                # each block is (showing the hidden chunk moves the view before the next layout).
                self._trim_newest()
                shown = bool(hidden)
                if hidden:
                    self._show_hidden(hidden)
                    hidden = []
                if self.first_mounted > 0 and self.scroll_y < self._ahead_lines():
                    hidden, mounting = self._mount_hidden_chunk()
                    if mounting is not None:
                        # No frame while they mount (compose, markdown parsed and mounted: spread over many
                        # turns of the loop, each of which would otherwise lay out the whole window again
                        # for nothing to show): the next frame shows it all at once.
                        with self.app.batch_update():
                            await mounting
                elif not shown:
                    break
                # A step that showed blocks waits for the layout that places them (not merely a refresh:
                # while anything batches the drawing, a refresh comes without one); reading ahead is
                # never over before it, so what reads the blocks' places afterwards reads the new ones.
                await (self._next_layout(self._shown_at) if shown else self._next_frame())
                if generation != self._generation or not all(widget.is_attached for widget in hidden):
                    hidden = []  # the window moved meanwhile (new output, Alt+Home): these are gone
                    if shown:
                        self._placed()  # laid out: what waited goes by the window as it now is
                    break
                if shown:
                    self._placed()
        finally:
            if hidden and self.is_attached:
                self._show_hidden(hidden)  # placed by the next layout (`pre_layout`)
            self._prefetching = False
            waiting, self._ahead_waiters = self._ahead_waiters, []
            if self.is_attached:
                for callback in waiting:
                    callback()

    async def _next_layout(self, since: int) -> None:
        """Wait until the log has been laid out after layout number ``since`` (`pre_layout`)."""
        while self._layouts <= since:
            self._laid_out = asyncio.get_running_loop().create_future()
            try:
                await self._laid_out
            finally:
                self._laid_out = None

    async def _next_frame(self) -> None:
        drawn: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def done() -> None:
            if not drawn.done():
                drawn.set_result(None)

        self.call_after_refresh(done)
        await drawn

    def _mount_hidden_chunk(self) -> tuple[list[Widget], AwaitMount | None]:
        """Mount the ``CHUNK`` items before the first mounted one, hidden (their markdown is parsed and
        mounted meanwhile, with no effect on the layout); `_show_hidden` shows them."""
        end = self.first_mounted
        start = max(0, end - self.CHUNK)
        widgets: list[Widget] = []
        for index in range(start, end):
            widgets += self.blocks_for(self.items[index], index)
        self.first_mounted = start
        for widget in widgets:
            widget.display = False
        if not widgets:
            self._update_marker()
            return widgets, None
        return widgets, self.mount_all(widgets, after=self.marker)

    def _show_hidden(self, widgets: list[Widget]) -> None:
        """Show blocks mounted hidden at the top, scrolling down by the lines they add so what the reader
        sees stays in place in the very frame that lays them out (the scroll may go below the end of the
        log as laid out before them: `max_scroll_y` counts their lines until then)."""
        added = self.stream_height(widgets)
        marker_before = self.marker.outer_size.height if self.marker.display else 0
        for widget in widgets:
            widget.display = True
        self._unplaced = True
        self._shown_at = self._arranged
        self._update_marker()
        if self.first_mounted == 0:
            added -= marker_before  # the marker goes away with the last of the earlier items
        self._unplaced_lines += added
        self.scroll_to(y=self.scroll_y + added, animate=False, immediate=True, release_anchor=False)

    def stream_height(self, widgets: list[Widget]) -> int:
        """The lines ``widgets`` take when laid out one after another in this log (as the log's
        ``layout: stream`` places them: full width, margins collapsed, cell max-heights applied)."""
        region = self.scrollable_content_region
        size = Size(region.width, region.height)
        viewport = self.app.viewport_size
        total = 0
        previous_margin = 0  # the marker above them has none
        for widget in widgets:
            styles = widget.styles
            top, _right, bottom, _left = styles.margin
            total += max(top, previous_margin)
            previous_margin = bottom
            gutter_width, gutter_height = styles.gutter.totals
            height = widget.get_content_height(size, viewport, size.width - gutter_width) + gutter_height
            if styles.max_height is not None and styles.max_height.is_cells:
                height = min(height, int(styles.max_height.value))
            if styles.min_height is not None and styles.min_height.is_cells:
                height = max(height, int(styles.min_height.value))
            total += height
        return total
