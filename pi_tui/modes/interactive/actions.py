"""The app's key actions (pi's app keybindings): models, thinking, tool output, sidebar, editor, copy.

A mixin of `PiApp`, kept apart so the app module stays about layout, start-up and sending.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Coroutine

    from textual.geometry import Size
    from textual.screen import Screen

    from pi_tui.ai.types import Model, ThinkingLevel
    from pi_tui.runtime.agent_session import AgentSession

    from .blocks import NoticeBlock
    from .chat import ChatLog
    from .commands import CommandRouter
    from .editor import PromptEditor
    from .sidebar import PanelSidebar
    from .transcript_search import TranscriptSearch

__all__ = ["KeyActions"]

NARROW_COLUMNS = 100
"""Below this width the sidebar folds away."""


class KeyActions:
    """``action_*`` methods bound to pi's app keys (see `pi_tui.modes.interactive.keys`)."""

    if TYPE_CHECKING:  # what the mixin uses of `PiApp` (and Textual's App)
        session: AgentSession | None
        router: CommandRouter
        chat: ChatLog
        editor: PromptEditor
        sidebar: PanelSidebar
        hide_thinking: bool
        tools_expanded: bool
        transcript_search: TranscriptSearch | None

        def transcript_search_box(self) -> TranscriptSearch: ...

        @property
        def size(self) -> Size: ...

        def chat_notice(self, text: str, level: str = "info") -> NoticeBlock: ...
        def chat_status(self, text: str) -> NoticeBlock: ...
        def refresh_footer(self, *, compacted: bool = False) -> None: ...
        def run_command(self, text: str) -> asyncio.Task[None]: ...
        def require_session(self) -> AgentSession: ...
        @contextmanager
        def suspend(self) -> Iterator[None]: ...
        @property
        def screen(self) -> Screen[object]: ...
        def copy_selection(self, text: str) -> Coroutine[None, None, None]: ...

    def action_select_model(self) -> None:
        self.run_command("/model")

    def action_command(self, text: str) -> None:
        self.run_command(text)

    def switch_model(self, model: Model, thinking: ThinkingLevel | None, *, announce: bool = True) -> None:
        """Switch the session to ``model`` (at ``thinking``, or the current level clamped to it).

        Args:
            model: The model to use from now on.
            thinking: The thinking level to set, or None to keep the current one (clamped).
            announce: Add the "Model: <id>" status line pi shows after ``/model`` to the chat; a caller
                that says so in its own line (Ctrl+P, a login, saving a default) passes False.
        """
        from pi_tui.ai.thinking import clamp_thinking_level

        session = self.require_session()
        session.set_model(model, source="set")
        if thinking is not None:
            session.set_thinking_level(clamp_thinking_level(model, thinking))
        else:
            session.set_thinking_level(clamp_thinking_level(model, session.thinking))
        if announce:
            self.chat_status(f"Model: {model.id}")
        self.router.note_subscription(model)
        self.refresh_footer()

    def pick_model(self, model: Model, thinking: ThinkingLevel, saved: bool) -> None:
        """The model picker's choice: switch to it and say so, as pi does ("Default model: provider/id"
        when the user saved it as the default, else "Model: id")."""
        self.switch_model(model, thinking, announce=not saved)
        if saved:
            self.chat_status(f"Default model: {model.label}")

    def action_cycle_model(self, step: int) -> None:
        from pi_tui.runtime.model_cycle import model_cycle

        session = self.session
        if session is None or session.registry is None:
            return
        # pi cycles the scope (``--models``, else ``enabledModels``) when there is one, with its levels
        cycle = model_cycle(session)
        models = cycle.models
        if len(models) < 2 and (not models or models[0].label == session.model.label):
            self.chat_status("Only one model in scope" if cycle.scoped else "Only one model available")
            return
        target = cycle.next_index(session.model, step)
        chosen = models[target]
        self.switch_model(chosen, cycle.levels[target], announce=False)
        # As pi words it: the model's display name, and its level only when it thinks at all.
        level = f" (thinking: {session.thinking})" if chosen.reasoning and session.thinking != "off" else ""
        self.chat_status(f"Switched to {chosen.name or chosen.id}{level}")

    def action_cycle_thinking(self) -> None:
        from pi_tui.ai.thinking import available_thinking_levels

        session = self.session
        if session is None:
            return
        if not session.model.reasoning:
            self.chat_status("Current model does not support thinking")
            return
        levels = list(available_thinking_levels(session.model))
        index = levels.index(session.thinking) if session.thinking in levels else 0
        session.set_thinking_level(levels[(index + 1) % len(levels)])
        self.chat_status(f"Thinking level: {session.thinking}")
        self.refresh_footer()

    def action_toggle_thinking(self) -> None:
        """Ctrl+T: hide or show all thinking, and remember it (``hideThinkingBlock``), as pi does."""
        from .ui_settings import set_hide_thinking

        hidden = not self.hide_thinking
        set_hide_thinking(self, hidden)  # type: ignore[arg-type]  # the mixin is only ever a PiApp
        settings = self.session.settings if self.session is not None else None
        if settings is not None:
            settings.set("hideThinkingBlock", hidden)
            for problem in settings.drain_errors():
                self.chat_notice(problem, "warning")
        self.chat_status(f"Thinking blocks: {'hidden' if hidden else 'visible'}")

    def action_expand_tools(self) -> None:
        """Ctrl+O: tool output, summaries and the start-up header, all expanded or all folded, as pi's
        key does (thinking is shown whole already; Ctrl+T hides it)."""
        from .blocks import NoticeBlock, SummaryBlock, ToolBlock

        self.tools_expanded = not self.tools_expanded
        for tool in self.chat.query(ToolBlock):
            tool.refresh_expansion()
        for summary in self.chat.query(SummaryBlock):
            summary.refresh_expansion()
        for notice in self.chat.query(NoticeBlock):
            notice.refresh_expansion()  # the start-up header: its full key list, as pi's Ctrl+O shows it
        self.chat_status(f"Tool output: {'expanded' if self.tools_expanded else 'collapsed'}")

    def action_toggle_sidebar(self) -> None:
        if self.size.width < NARROW_COLUMNS and "-open" not in self.sidebar.classes:
            self.chat_notice("The sidebar needs at least 100 columns", "warning")
            return
        self.sidebar.toggle_class("-open")
        self.sidebar.refresh_from(self.session)

    def action_external_editor(self) -> None:
        """Ctrl+G: edit the prompt in ``$VISUAL`` / ``$EDITOR`` (default ``nano``); exit code 0 keeps it."""
        import os
        import shlex
        import subprocess
        import tempfile

        command = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "nano"
        with tempfile.NamedTemporaryFile("w", suffix=".pi.md", prefix="pi-editor-", delete=False) as fh:
            fh.write(self.editor.text)
            path = Path(fh.name)
        failure: Exception | None = None
        code = 0
        try:
            with self.suspend():
                # Caught inside the block: Textual's suspend resumes the app only when the block ends
                # normally, so an editor that cannot start would leave the screen blank and keys unread.
                try:
                    code = subprocess.call([*shlex.split(command), str(path)])
                except (
                    OSError,
                    ValueError,
                    subprocess.SubprocessError,
                ) as exc:  # no such editor, bad quoting
                    failure = exc
            if failure is None and code == 0:
                self.editor.set_text(path.read_text(encoding="utf-8").removesuffix("\n"))
            elif failure is None:
                self.chat_notice(f"{command} exited with code {code}; the prompt is unchanged", "warning")
        except Exception as exc:  # no terminal to hand over (tests, headless)
            failure = exc
        finally:
            path.unlink(missing_ok=True)
        if failure is not None:
            hint = " (set $VISUAL or $EDITOR)" if isinstance(failure, FileNotFoundError) else ""
            self.chat_notice(f"Cannot run the external editor {command!r}: {failure}{hint}", "error")

    def action_paste_image(self) -> None:
        """Ctrl+V: save the clipboard's image to a temp file and insert its path, as pi does."""
        from .clipboard import read_clipboard_image, save_clipboard_image

        found = read_clipboard_image()
        if found is None:
            self.chat_notice(
                "No image in the clipboard (read with wl-paste or xclip); text pastes with the terminal's paste key",
                "warning",
            )
            return
        path = save_clipboard_image(*found)
        row, column = self.editor.cursor_location
        previous = self.editor.document.get_line(row)[column - 1 : column] if column else ""
        lead = " " if previous and (previous.isalnum() or previous == "_") else ""  # pi: a path after a word
        self.editor.insert(f"{lead}{path}")

    def action_toggle_search(self) -> None:
        """pi's ``tui.altScreen.search``: open the transcript search box, or close it when open."""
        self.transcript_search_box().toggle()

    def action_search_step(self, direction: int) -> None:
        """While searching: the next (1) or previous (-1) match (``searchNext`` / ``searchPrevious``)."""
        if self.transcript_search is not None:
            self.transcript_search.step(direction)

    def action_close_search(self) -> None:
        if self.transcript_search is not None:
            self.transcript_search.close()

    async def action_copy_last(self) -> None:
        """Ctrl+X: the last answer; with ``fullscreenCopyOnSelect`` off, text selected with the mouse
        first (as pi: the selection is then copied by this key instead of when the button is let go)."""
        settings = self.session.settings if self.session is not None else None
        selected = self.screen.get_selected_text()
        if settings is not None and not settings.fullscreen_copy_on_select and selected:
            await self.copy_selection(selected)
            return
        self.run_command("/copy")

    def action_scroll_chat(self, how: str) -> None:
        """Scroll the chat from the editor (pi's full-screen keys): ``page_up``/``page_down`` (a page
        less two lines, so some context stays), ``half_up``/``half_down``, ``line_up``/``line_down``,
        ``prompt_up``/``prompt_down`` (to your previous / next message), ``top`` (the conversation's start)
        and ``bottom``.

        Scrolling up stops the chat following new output; ``bottom`` (or scrolling back down to the
        end) follows it again.
        """
        chat = self.chat
        chat.reading()
        height = max(1, chat.scrollable_content_region.height)
        steps = {
            "page_up": -max(1, height - 2),
            "page_down": max(1, height - 2),
            "half_up": -max(1, height // 2),
            "half_down": max(1, height // 2),
            "line_up": -1,
            "line_down": 1,
        }
        if how in steps:
            at_bottom = steps[how] > 0 and chat.scroll_y >= chat.max_scroll_y
            chat.scroll_relative(y=steps[how], animate=False, immediate=True)
            if at_bottom:
                chat.scrolled_down()  # the bottom of a window far up: what is below comes next
        elif how == "top":
            chat.show_start()  # the conversation's first items, however long it is
        elif how == "bottom":
            chat.show_end()
            chat.scroll_end(animate=False)
        elif how in ("prompt_up", "prompt_down"):
            self._prompt_key(-1 if how == "prompt_up" else 1)

    def _prompt_key(self, direction: int) -> None:
        # By the prompts' places: once the blocks reading ahead just showed are placed too.
        self.chat.when_placed(lambda: self._scroll_to_prompt(direction))

    def _scroll_to_prompt(self, direction: int) -> None:
        """Put the previous (next) user message at the top of the chat; past the last one: the end."""
        from .blocks import UserBlock

        chat = self.chat
        top = round(chat.scroll_y)
        # The chat's own blocks, not a query of every widget under it (paragraphs, tool output, ...).
        tops = [
            (block.virtual_region.y, block)
            for block in chat.mounted_blocks()
            if isinstance(block, UserBlock) and block.display
        ]
        if direction < 0:
            above = [(y, block) for y, block in tops if y < top]
            if above:
                chat.scroll_to(y=max(above, key=lambda pair: pair[0])[0], animate=False, immediate=True)
            elif chat.first_mounted > 0 and chat.read_further_ahead():
                # Pressed faster than earlier items are mounted (a key held down, presses read at once),
                # or in a window with no prompt above the view (a session just shown, its last items
                # answers and tool calls): the previous prompt comes with the earlier items, so the press
                # goes on once they are mounted.
                chat.after_reading_ahead(lambda: self._prompt_key(direction))
            else:
                chat.scroll_home(animate=False)  # older prompts load as the top is reached
            return
        below = [(y, block) for y, block in tops if y > top]
        if below:
            chat.scroll_to(y=min(below, key=lambda pair: pair[0])[0], animate=False, immediate=True)
        else:
            chat.show_end()
            chat.scroll_end(animate=False)
