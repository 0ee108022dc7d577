"""The prompt editor: multi-line text, pi's keys, history, paste markers, ``/`` and ``@`` completion."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from pi_tui.modes.prompt_history import PromptHistory

from .blocks_base import TypingClock
from .completion import Candidate, CompletionMenu, FileIndex, complete
from .keys import editor_key_actions

__all__ = ["PromptEditor", "expand_pastes"]

PASTE_LINES = 10
PASTE_CHARS = 1000
"""A paste longer than this (lines or characters) shows as a ``[paste #N …]`` marker, as in pi."""

_MARKER = re.compile(r"\[paste #(\d+) (?:\+\d+ lines|\d+ chars)\]")


def expand_pastes(text: str, pastes: dict[int, str]) -> str:
    """Replace ``[paste #N …]`` markers by the text they stand for."""
    return _MARKER.sub(lambda m: pastes.get(int(m.group(1)), m.group(0)), text)


class PromptEditor(TextArea):
    """Enter sends; Shift+Enter / Ctrl+J insert a newline; Alt+Enter sends as a follow-up.

    Up on the first line (Down on the last) walks the project's prompt history. Ctrl+C and Ctrl+D post
    messages the app decides on (clear / quit). The editor grows with its text up to a bounded height.
    """

    DEFAULT_CSS = """
    PromptEditor {
        width: 100%;
        height: auto;
        min-height: 3;
        max-height: 12;
        border: round $pi-thinking-off;
        background: $pi-background;
        color: $pi-text;
        padding: 0 1;
    }
    PromptEditor:focus { border: round $pi-thinking-off; }
    PromptEditor.-thinking-minimal, PromptEditor.-thinking-minimal:focus { border: round $pi-thinking-minimal; }
    PromptEditor.-thinking-low, PromptEditor.-thinking-low:focus { border: round $pi-thinking-low; }
    PromptEditor.-thinking-medium, PromptEditor.-thinking-medium:focus { border: round $pi-thinking-medium; }
    PromptEditor.-thinking-high, PromptEditor.-thinking-high:focus { border: round $pi-thinking-high; }
    PromptEditor.-thinking-xhigh, PromptEditor.-thinking-xhigh:focus { border: round $pi-thinking-xhigh; }
    PromptEditor.-bash, PromptEditor.-bash:focus { border: round $pi-bash-mode; }
    PromptEditor .text-area--cursor-line { background: transparent; }
    """

    @dataclass
    class Submitted(Message):
        """The user sent the editor's text (markers expanded); ``follow_up`` for Alt+Enter."""

        text: str
        follow_up: bool = False

    class ClearPressed(Message):
        """Ctrl+C in the editor."""

    class ExitPressed(Message):
        """Ctrl+D on an empty editor."""

    class DequeuePressed(Message):
        """Alt+Up: bring queued messages back."""

    def __init__(self, history: PromptHistory, *, id: str | None = None) -> None:
        super().__init__("", id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus")
        self.cursor_blink = False  # a blinking cursor repaints twice a second: idle CPU stays near zero
        self.prompt_history = history
        self.pastes: dict[int, str] = {}
        self._paste_counter = 0
        self._history_index: int | None = None
        self._draft = ""
        self.menu: CompletionMenu | None = None
        self.files: FileIndex | None = None
        self.commands: Callable[[], list[Candidate]] = list
        self.arguments: Callable[[str, str], list[Candidate]] | None = None
        self.key_actions: dict[str, str] = editor_key_actions(None)[0]
        """Textual key → editor action (``submit``, ``newLine``, ``followUp``, ``clear``, ``exit``,
        ``dequeue``), from pi's defaults and ``keybindings.json``."""

    # --- text --------------------------------------------------------------------------------------

    def set_text(self, text: str) -> None:
        """Replace the text and put the cursor at its end."""
        self.load_text(text)
        self.move_cursor(self.document.end)
        self._history_index = None

    def _caret_index(self) -> int:
        row, column = self.cursor_location
        lines = self.text.split("\n")
        return sum(len(line) + 1 for line in lines[:row]) + column

    def _location(self, index: int) -> tuple[int, int]:
        before = self.text[:index].split("\n")
        return len(before) - 1, len(before[-1])

    # --- keys --------------------------------------------------------------------------------------

    async def _on_key(self, event: events.Key) -> None:
        TypingClock.last_key = time.monotonic()
        key = event.key
        handled = True
        menu = self.menu
        if menu is not None and menu.is_shown and key in ("up", "down", "tab", "enter", "escape"):
            if key == "up":
                menu.move(-1)
            elif key == "down":
                menu.move(1)
            elif key == "escape":
                menu.hide()
            else:
                self._accept_completion(submit_after=key == "enter")
        elif (action := self.key_actions.get(key)) is not None and self._run_key_action(action):
            pass
        elif key == "up" and self.cursor_location[0] == 0 and self._history_step(-1):
            pass
        elif (
            key == "down"
            and self.cursor_location[0] == self.document.line_count - 1
            and self._history_step(1)
        ):
            pass
        else:
            handled = False
        if handled:
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

    def _run_key_action(self, action: str) -> bool:
        """Do an editor action bound in the keymap; False when it does not apply (the key goes on)."""
        if action == "submit":
            self._submit(follow_up=False)
        elif action == "followUp":
            self._submit(follow_up=True)
        elif action == "newLine":
            self.insert("\n")
        elif action == "clear":
            self.post_message(self.ClearPressed())
        elif action == "exit":
            if self.text:
                return False  # Ctrl+D deletes forward in a non-empty editor
            self.post_message(self.ExitPressed())
        elif action == "dequeue":
            self.post_message(self.DequeuePressed())
        else:
            return False
        return True

    def _submit(self, *, follow_up: bool) -> None:
        raw = self.text
        if not raw.strip():
            return
        text = expand_pastes(raw, self.pastes)
        self.prompt_history.add(raw if len(raw) < 4000 else text[:4000])
        self.load_text("")
        self.pastes.clear()
        self._history_index = None
        if self.menu is not None:
            self.menu.hide()
        self.post_message(self.Submitted(text, follow_up))

    def _history_step(self, step: int) -> bool:
        entries = self.prompt_history.entries
        if not entries:
            return False
        if self._history_index is None:
            if step > 0:
                return False
            self._draft = self.text
            index = len(entries) - 1
        else:
            index = self._history_index + step
        if index >= len(entries):
            self._history_index = None
            self.load_text(self._draft)
            self.move_cursor(self.document.end)
            return True
        index = max(0, index)
        self._history_index = index
        self.load_text(entries[index])
        self.move_cursor((0, 0) if step < 0 else self.document.end)
        return True

    # --- paste -------------------------------------------------------------------------------------

    async def _on_paste(self, event: events.Paste) -> None:
        text = event.text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.count("\n") + 1
        if lines > PASTE_LINES or len(text) > PASTE_CHARS:
            self._paste_counter += 1
            number = self._paste_counter
            self.pastes[number] = text
            marker = (
                f"[paste #{number} +{lines} lines]"
                if lines > PASTE_LINES
                else f"[paste #{number} {len(text)} chars]"
            )
            event.stop()
            event.prevent_default()
            self.insert(marker)
            return
        await super()._on_paste(event)

    # --- completion --------------------------------------------------------------------------------

    def on_text_area_changed(self, _event: TextArea.Changed) -> None:
        self.set_class(self.text.startswith("!"), "-bash")
        self.refresh_completion()

    def refresh_completion(self) -> None:
        if self.menu is None:
            return
        start, candidates = complete(
            self.text, self._caret_index(), self.commands, self.files, arguments=self.arguments
        )
        if start < 0 or not candidates:
            self.menu.hide()
            return
        self.menu.show(start, candidates)

    def _accept_completion(self, *, submit_after: bool) -> None:
        menu = self.menu
        chosen = menu.chosen() if menu is not None else None
        if menu is None or chosen is None:
            return
        offset = self._caret_index()
        start = self._location(menu.token_start)
        end = self._location(offset)
        is_command = menu.token_start == 0 and not chosen.value.startswith("@")
        replacement = ("/" + chosen.value if is_command else chosen.value) + " "
        self.replace(replacement, start, end)
        menu.hide()
        if submit_after and is_command and self.text.strip() == replacement.strip():
            self._submit(follow_up=False)
