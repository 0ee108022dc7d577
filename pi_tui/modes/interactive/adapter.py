"""Session events → chat blocks. One `ChatAdapter` per app; it is the only listener that draws.

Per token the work is O(1): a delta is appended to the live block's buffer, which a timer flushes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from pi_tui.agent.events import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    AutoCompactionEnd,
    AutoCompactionStart,
    AutoRetryEnd,
    AutoRetryStart,
    ErrorEvent,
    ExtensionError,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    RuntimeEvent,
    SessionSwitched,
    SessionTreeMoved,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnStart,
)
from pi_tui.agent.run import RETRY_CANCELLED_TEXT
from pi_tui.agent.tool import result_text
from pi_tui.ai.stream import (
    TextDelta,
    TextEnd,
    TextStart,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingStart,
    ToolCallEnd,
)
from pi_tui.ai.types import AssistantMessage, Message, TextContent, ThinkingContent, ToolResultMessage
from pi_tui.modes.interactive.error_text import gave_up_text, shown_error
from pi_tui.runtime.events import EntryAppended
from pi_tui.session.entries import UsageEntry

from .blocks import NoticeBlock, ThinkingBlock, ToolBlock

if TYPE_CHECKING:
    from textual.timer import Timer
    from textual.widget import Widget

    from pi_tui.runtime.agent_session import AgentSession

    from .chat import ChatLog
    from .markdown_block import AssistantText
    from .terminal_progress import TerminalProgress

_FILE_WRITERS = frozenset({"write", "edit"})
"""The tools that write a file at their ``path`` argument (which `@` completion then offers at once)."""

__all__ = ["ChatAdapter", "ChatSurface"]


class ChatSurface(Protocol):
    """What the adapter may do to the app (`PiApp` provides it): draw into the chat log, post notices,
    and tell the footer, the working line and the queue display that something changed."""

    chat: ChatLog
    session: AgentSession | None
    working_message: str
    terminal_progress: TerminalProgress

    def chat_notice(self, text: str, level: str = "info") -> NoticeBlock: ...

    def key_text(self, pi_id: str) -> str: ...

    def draw_soon(self, *, pending: bool = True) -> None: ...

    def set_busy(self, busy: bool) -> None: ...

    def pending_changed(self) -> None: ...

    def reload_chat(self) -> None: ...

    def session_switched(self) -> None: ...

    def note_untrusted_project(self, said: list[str]) -> None: ...

    def file_written(self, path: str) -> None: ...

    def files_changed(self) -> None: ...

    def refresh_footer(self, *, compacted: bool = False) -> None: ...

    def context_measured(self) -> None: ...

    def set_interval(
        self, interval: float, callback: Callable[[], object], *, name: str | None = None, repeat: int = 0
    ) -> Timer: ...


class ChatAdapter:
    """Turns one session's event stream into blocks in the app's chat log."""

    def __init__(self, app: ChatSurface) -> None:
        self.app = app
        self.texts: dict[int, AssistantText] = {}
        self.finished_texts: list[AssistantText] = []
        """Earlier parts of a long streamed answer (split for speed), finished with the message."""
        self._earlier_chars: dict[int, int] = {}
        """Per text block of the message, how many of its characters the `finished_texts` hold."""
        self.thinking: dict[int, ThinkingBlock] = {}
        self.retry_notice: NoticeBlock | None = None
        self._writing: dict[str, str] = {}
        """The path each running write or edit tool call was given, by tool call id."""
        self._retry_left = 0
        self._retry_attempt = 0
        """The retry under way (pi's retryAttempt): an answer aborted during it says after how many."""
        self._retry_text = ""
        self._retry_max = 0
        self._retry_timer: Timer | None = None
        self._invalidations_seen = 0
        self._last_warm: UsageEntry | None = None  # a cache refresh since the last answer
        self._live: AssistantMessage | None = None
        self._live_blocks: list[Widget] = []
        """The streaming answer's blocks in the order they came (text, thinking, tool calls)."""
        self._shell_ran = False
        """A bash call ended in the running turn: the project is listed again when the turn ends (a
        command reports no paths; one walk a turn, not one a command)."""

    @property
    def chat(self) -> ChatLog:
        return self.app.chat

    async def on_event(self, event: AgentEvent | RuntimeEvent) -> None:
        match event:
            case MessageUpdate():
                self._on_update(event)
                return  # queues change between messages, not within one
            case MessageStart():
                self._on_message_start(event.message)
            case MessageEnd():
                await self._on_message_end(event.message)
            case ToolExecutionStart():
                block = self._tool(event.tool_call_id, event.tool_name, event.args)
                block.set_args(event.args)
                block.mark_started()
                path = event.args.get("path")
                if event.tool_name in _FILE_WRITERS and isinstance(path, str):
                    self._writing[event.tool_call_id] = path
            case ToolExecutionUpdate():
                self._tool(event.tool_call_id, event.tool_name, event.args).set_partial(
                    result_text(event.partial_result)
                )
            case ToolExecutionEnd():
                self._tool(event.tool_call_id, event.tool_name, {})
                written = self._writing.pop(event.tool_call_id, None)
                if written is not None and not event.is_error:
                    self.app.file_written(written)
                if event.tool_name == "bash":
                    self._shell_ran = True
                self.chat.record_result(
                    event.tool_call_id, result_text(event.result), event.is_error, event.result.details
                )
            case AutoRetryStart():
                self._retry_started(event)
            case AutoRetryEnd():
                self._retry_ended(event)
            case AgentStart():
                self._retry_attempt = 0
                self.app.set_busy(True)
            case TurnStart():
                self.app.terminal_progress.show()
            case AgentEnd():
                self.app.terminal_progress.hide()
                self.app.set_busy(False)
                if self._shell_ran:  # what the commands made is offered by the next `@`
                    self._shell_ran = False
                    self.app.files_changed()
            case ErrorEvent():
                self.app.chat_notice(event.message, "error")
            case ExtensionError():
                self.app.chat_notice(
                    f'Extension "{event.extension}" failed in {event.event}: {event.error}', "error"
                )
            case AutoCompactionStart():
                self.app.terminal_progress.show()
                self.app.working_message = (
                    f"Compacting context… ({self.app.key_text('app.interrupt')} to cancel)"
                )
            case AutoCompactionEnd():
                self.app.terminal_progress.hide()
                self.app.working_message = "Working"
                self._compaction_ended(event.data)
            case SessionSwitched():
                self.app.reload_chat()
                self._report_load_problems()
                self.app.session_switched()
            case SessionTreeMoved():
                self.app.reload_chat()
                self.app.note_untrusted_project([])
            case EntryAppended():
                self._note_cache_warm(event)
        self.app.pending_changed()

    def _report_load_problems(self) -> None:
        """A session switched to (resume) with lines the loader skipped or repaired says so, as a start-up
        with ``-c`` does: the user learns that part of the file is not shown."""
        session = self.app.session
        summary = session.session_manager.load_report.summary() if session is not None else ""
        if summary:
            self.app.chat_notice(f"Warning: {summary}", "warning")

    # --- messages -----------------------------------------------------------------------------------

    def _on_message_start(self, message: Message) -> None:
        if isinstance(message, AssistantMessage):
            self.texts.clear()
            self.thinking.clear()
            self._earlier_chars.clear()
            # The request this answer comes from is built and recorded by now: a change to the cached
            # context it carries is told above the answer, not after it.
            self._note_invalidations()
            self._live_blocks = []
            self.chat.start_live(message, self._rebuild_live)
            self._live = message
        elif not isinstance(message, ToolResultMessage):
            self.chat.add(message)

    def _on_update(self, event: MessageUpdate) -> None:
        inner = event.assistant_message_event
        if isinstance(inner, TextDelta):
            index = inner.content_index
            block = self.texts.get(index)
            if self._resync_text(index, block, inner.partial, inner.delta):
                return
            if block is None:
                block = self._new_text(index)
            cut = block.split_point(inner.delta)
            if cut is None:
                block.append_delta(inner.delta)
            else:  # a long answer goes on in a fresh widget (cheaper appends)
                block.append_delta(inner.delta[:cut])
                self.finished_texts.append(block)
                self._earlier_chars[index] = self._earlier_chars.get(index, 0) + len(block.text)
                continuation = self._new_text(index)
                continuation.eager_first_write = False  # mid-answer: batched like any other write
                continuation.append_delta(inner.delta[cut:])
        elif isinstance(inner, TextStart):
            self._new_text(inner.content_index)
        elif isinstance(inner, TextEnd):
            # The block's whole text: what streamed, unless some reached the message without a delta.
            index = inner.content_index
            block = self.texts.get(index)
            rest = inner.content[self._earlier_chars.get(index, 0) :]
            if block is None and rest.strip():
                block = self._new_text(index)
            if block is not None and block.text != rest:
                block.set_text(rest)
        elif isinstance(inner, ThinkingDelta):
            thinking = self.thinking.get(inner.content_index)
            if thinking is None:
                thinking = self._new_thinking(inner.content_index)
            part = inner.partial.content[inner.content_index : inner.content_index + 1]
            whole = part[0].thinking if part and isinstance(part[0], ThinkingContent) else None
            delta = inner.delta
            if (
                whole is not None
                and not whole.startswith(delta, len(thinking.text))
                and whole.endswith(delta)
            ):
                # thought the message holds that no delta brought (a stream that opened the block with
                # it): shown with the delta, as the text's is (`_resync_text`)
                thinking.text = whole[: len(whole) - len(delta)]
            thinking.append_delta(delta)
        elif isinstance(inner, ThinkingEnd):
            thinking = self.thinking.get(inner.content_index)
            if thinking is not None and thinking.text != inner.content:
                thinking.set_final_text(inner.content)
        elif isinstance(inner, ThinkingStart):
            self._new_thinking(inner.content_index)
        elif isinstance(inner, ToolCallEnd):
            call = inner.tool_call
            known = call.id in self.chat.tools
            tool = self._tool(call.id, call.name, dict(call.arguments or {}))
            if not known and self._live is not None:
                self._live_blocks.append(tool)

    def _resync_text(
        self, index: int, block: AssistantText | None, partial: AssistantMessage, delta: str
    ) -> bool:
        """Show the message's text of block ``index`` when it holds more than the deltas brought (a
        stream that opened the block with text, then streamed deltas after it); True when it did.

        The check is O(len(delta)): the delta must sit in the message's text right after what streamed
        before it. A provider's own stream always passes it (its message may already hold deltas still
        to come, which is why only the delta's place is checked)."""
        part = partial.content[index] if index < len(partial.content) else None
        if not isinstance(part, TextContent):
            return False
        whole = part.text
        earlier = self._earlier_chars.get(index, 0)
        streamed = earlier + (len(block.text) if block is not None else 0)
        if whole.startswith(delta, streamed) or not whole.endswith(delta):
            return False
        if block is None:
            block = self._new_text(index)
        block.set_text(whole[earlier:])
        return True

    def _new_text(self, index: int) -> AssistantText:
        from .markdown_block import AssistantText  # loaded by the warm-up, long before an answer

        block = AssistantText()
        block.content_index = index
        self.texts[index] = block
        self.chat.attach(block)
        if self._live is not None:
            self._live_blocks.append(block)
        return block

    def _new_thinking(self, index: int) -> ThinkingBlock:
        block = ThinkingBlock()  # one "Thinking..." line while thinking is hidden
        self.thinking[index] = block
        self.chat.attach(block)
        if self._live is not None:
            self._live_blocks.append(block)
        return block

    def _rebuild_live(self) -> list[Widget]:
        """New blocks for the streaming answer, showing what has streamed into its blocks so far; the
        stream goes on in them. The chat asks for them when it builds its window again over the answer
        (the old blocks are unmounted by then, and text streamed into them would never be seen)."""
        from .markdown_block import AssistantText

        fresh: list[Widget] = []
        for old in self._live_blocks:
            new: Widget
            if isinstance(old, AssistantText):
                text = AssistantText(old.text)
                text.content_index = old.content_index
                text.streaming = old.streaming
                text.eager_first_write = False
                self.texts = {i: text if b is old else b for i, b in self.texts.items()}
                self.finished_texts = [text if b is old else b for b in self.finished_texts]
                new = text
            elif isinstance(old, ThinkingBlock):
                thinking = ThinkingBlock(old.text)
                self.thinking = {i: thinking if b is old else b for i, b in self.thinking.items()}
                new = thinking
            elif isinstance(old, ToolBlock):
                new = self.chat.build_tool(old.tool_call_id, old.tool_name, old.args)
            else:
                continue
            fresh.append(new)
        self._live_blocks = fresh
        return list(fresh)

    def _tool(self, call_id: str, name: str, args: dict[str, Any]) -> ToolBlock:
        return self.chat.ensure_tool(call_id, name, args)

    async def _on_message_end(self, message: Message) -> None:
        if not isinstance(message, AssistantMessage):
            # a prompt sent or a tool's result is part of the context now: the footer's share counts
            # it at once (estimated until the next answer measures it), as pi's does
            self.app.refresh_footer()
            return
        self._keep_final(message)
        # A part no event brought (a stream that sent the answer whole) is drawn now, from the message.
        for index, content in enumerate(message.content):
            if isinstance(content, TextContent) and content.text.strip() and index not in self.texts:
                self._new_text(index)
            elif (
                isinstance(content, ThinkingContent)
                and content.thinking.strip()
                and index not in self.thinking
            ):
                self._new_thinking(index)
        for earlier in self.finished_texts:
            await earlier.finish()
        for index, block in list(self.texts.items()):
            part = message.content[index] if index < len(message.content) else None
            final = part.text if isinstance(part, TextContent) else None
            before = "".join(b.text for b in self.finished_texts if b.content_index == index)
            await block.finish(
                final[len(before) :] if isinstance(final, str) and final.startswith(before) else None
            )
        self.texts.clear()
        self.finished_texts.clear()
        self._earlier_chars.clear()
        for index, thinking in self.thinking.items():
            part = message.content[index] if index < len(message.content) else None
            if isinstance(part, ThinkingContent):
                thinking.set_final_text(part.thinking)
        self.thinking.clear()
        if message.stop_reason == "error":
            self.app.chat_notice(f"Error: {shown_error(message.error_message or 'unknown error')}", "error")
        elif message.stop_reason == "aborted":
            # pi's words (as the resumed chat shows it), not the provider's internal "Request was aborted"
            attempts = self._retry_attempt
            self.app.chat_notice(
                f"Aborted after {attempts} retry attempt{'s' if attempts > 1 else ''}"
                if attempts
                else "Operation aborted",
                "warning",
            )
        self.chat.prune()
        self._note_cache_miss(message)
        self.app.context_measured()
        self.app.refresh_footer()
        # The end of an answer is what the user waits for: drawn at once, not a frame period after the
        # last streamed write. Not after a tool call (its tool runs next): a fast tool loop keeps the
        # frame rate limit.
        if message.stop_reason != "toolUse":
            self.app.draw_soon()

    def _keep_final(self, message: AssistantMessage) -> None:
        """The chat's items hold the message as it started (the stream's first partial); the ended
        one replaces it, so blocks built again from the items (after pruning) show the whole answer."""
        live, self._live = self._live, None
        self._live_blocks = []
        self.chat.replace_item(live, message)

    def _note_invalidations(self) -> None:
        session = self.app.session
        found = list(session.engine.ledger.invalidations) if session is not None else []
        from .cache_notices import invalidation_text

        if len(found) < self._invalidations_seen:
            self._invalidations_seen = 0  # the session was switched: its ledger started afresh
        for inv in found[self._invalidations_seen :]:
            self.app.chat_notice(invalidation_text(inv), "warning")
        self._invalidations_seen = len(found)

    def _note_cache_miss(self, message: AssistantMessage) -> None:
        """``showCacheMissNotices``: an answer that paid again for context the provider had cached."""
        session = self.app.session
        settings = session.settings if session is not None else None
        if session is None or settings is None or not settings.show_cache_miss_notices:
            return
        from .cache_notices import cache_miss_text

        warmed, self._last_warm = self._last_warm, None
        text = cache_miss_text(session.messages, message, session.model.cost.cache_read, warmed)
        if text:
            self.app.chat_notice(text, "warning")

    def _note_cache_warm(self, event: EntryAppended) -> None:
        """``showCacheMissNotices``: a prompt cache refresh and what it cost (pi's "Cache warmed: $…")."""
        session = self.app.session
        settings = session.settings if session is not None else None
        if settings is None or not settings.show_cache_miss_notices:
            return
        from .cache_notices import cache_warm_text

        if isinstance(event.entry, UsageEntry):
            self._last_warm = event.entry  # the next answer is compared with this refresh
        text = cache_warm_text(event.entry)
        if text is not None:
            self.app.chat_notice(text)
            self.app.refresh_footer()  # the refresh's cost is in the totals

    def reset(self) -> None:
        """A new or switched session: forget live blocks and what the ledger already reported."""
        self._live_blocks = []
        self.texts.clear()
        self.finished_texts.clear()
        self._earlier_chars.clear()
        self.thinking.clear()
        self.retry_notice = None
        session = self.app.session
        self._invalidations_seen = len(session.engine.ledger.invalidations) if session is not None else 0
        self._last_warm = None

    # --- banners ------------------------------------------------------------------------------------

    def _retry_started(self, event: AutoRetryStart) -> None:
        # Whole seconds rounded up, as pi counts them: a retry due in 300 ms reads "in 1s", not "in 0s".
        # The error itself is not repeated: the failed answer above already shows it.
        self._spend_retry_notice()
        self._retry_attempt = event.attempt
        self._retry_max = event.max_attempts
        self._retry_left = max(0, -(-event.delay_ms // 1000))
        self._retry_text = (
            f"Retrying ({event.attempt}/{event.max_attempts}) in {{s}}s… "
            f"({self.app.key_text('app.interrupt')} to cancel)"
        )
        self.retry_notice = self.app.chat_notice(self._retry_text.format(s=self._retry_left), "warning")
        self._retry_timer = self.app.set_interval(
            1, self._tick_retry, repeat=self._retry_left or 1, name="retry-countdown"
        )

    def _tick_retry(self) -> None:
        self._retry_left = max(0, self._retry_left - 1)
        if self.retry_notice is not None:
            self.retry_notice.set_text(self._retry_text.format(s=self._retry_left))

    def _spend_retry_notice(self) -> None:
        """The retry the banner counted down to has run (and failed): it says so, without a countdown."""
        if self._retry_timer is not None:
            self._retry_timer.stop()
            self._retry_timer = None
        if self.retry_notice is not None:
            self.retry_notice.set_text(f"Retried ({self._retry_attempt}/{self._retry_max})")
        self.retry_notice = None

    def _retry_ended(self, event: AutoRetryEnd) -> None:
        self._retry_attempt = event.attempt
        if event.success and self.retry_notice is not None:
            self.retry_notice.set_text(f"Retry {event.attempt} succeeded")
        elif not event.success:
            gave_up = gave_up_text(event.attempt, event.final_error or "")
            if event.final_error == RETRY_CANCELLED_TEXT and self.retry_notice is not None:
                # Escape stopped the countdown (the newest line): it says so, and no more; nothing
                # "gave up" (pi words it "Retry failed after 1 attempts: Retry cancelled")
                self.retry_notice.set_text(RETRY_CANCELLED_TEXT)
            else:
                # The last attempt's error is already in the chat: giving up is told after it, as pi does.
                self._spend_retry_notice()
                self.app.chat_notice(gave_up, "error")
        if self._retry_timer is not None:
            self._retry_timer.stop()
            self._retry_timer = None
        self.retry_notice = None
        self._retry_attempt = 0

    def _compaction_ended(self, data: dict[str, Any]) -> None:
        result = data.get("result")
        if isinstance(result, dict) and result.get("summary"):
            from pi_tui.ai.types import CompactionSummaryMessage

            self.chat.add(
                CompactionSummaryMessage(
                    summary=str(result["summary"]), tokens_before=int(result.get("tokensBefore") or 0)
                )
            )
            self.app.refresh_footer(compacted=True)  # "?" until the next answer measures the context
            return
        if data.get("errorMessage") or data.get("error"):
            self.app.chat_notice(
                f"Compaction failed: {data.get('errorMessage') or data.get('error')}", "error"
            )
        self.app.refresh_footer()  # failed or cancelled: the context is what it was
