"""The prompt editor: multi-line text, pi's keys, history, paste markers, ``/`` and ``@`` completion."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import TextArea
from textual.widgets.text_area import Edit, EditResult

from pi_tui.modes.prompt_history import PromptHistory

from .blocks_base import TypingClock
from .completion import Candidate, CompletionMenu, FileIndex, complete
from .editing import KillRing, Snapshot, UndoStack, word_end, word_start
from .keys import canonical_key, editor_key_actions, list_key_actions

__all__ = ["PromptEditor", "expand_pastes"]

_MOTIONS = frozenset(
    ("cursorLeft", "cursorRight", "cursorWordLeft", "cursorWordRight", "cursorLineStart", "cursorLineEnd")
)
_KILLS = frozenset(("deleteWordBackward", "deleteWordForward", "deleteToLineStart", "deleteToLineEnd"))

_TEXT_AREA_MOVES = frozenset(
    (
        "cursor_up",
        "cursor_down",
        "cursor_left",
        "cursor_right",
        "cursor_word_left",
        "cursor_word_right",
        "cursor_line_start",
        "cursor_line_end",
        "cursor_page_up",
        "cursor_page_down",
    )
)
"""Textual's text-area actions the prompt keeps (they move the cursor or extend a selection). Its editing
keys (cut, copy, paste, undo, redo, delete line, select line / all on F6 / F7, …) are not pi's: pi's own
editing keys are the editor's keymap, so a key the user frees in ``keybindings.json`` does nothing instead
of cutting or replacing the prompt."""


_KEYMAP_MOVES = frozenset(("cursor_up", "cursor_down", "cursor_page_up", "cursor_page_down"))
"""Plain moves the editor's keymap runs itself (pi's ``tui.editor.cursorUp/Down``, ``pageUp/Down``): the
text area's own Up, Down, PageUp and PageDown are left out, so a key the user moves them off is free."""


def _moves_only(bindings: list[BindingType]) -> list[BindingType]:
    return [
        b
        for b in bindings
        if isinstance(b, Binding)
        and b.action.partition("(")[0] in _TEXT_AREA_MOVES
        and b.action not in _KEYMAP_MOVES
    ]


PASTE_LINES = 10
PASTE_CHARS = 1000
"""A paste longer than this (lines or characters) shows as a ``[paste #N …]`` marker, as in pi."""
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
"""Control characters a paste may carry that the editor drops (newlines and tabs stay)."""

HISTORY_ENTRY_MAX_CHARS = 100_000
"""The longest prompt the history remembers (it is kept on disk, one JSON line per prompt)."""

_MARKER = re.compile(r"\[paste #(\d+) (?:\+\d+ lines|\d+ chars)\]")


def expand_pastes(text: str, pastes: dict[int, str]) -> str:
    """Replace ``[paste #N …]`` markers by the text they stand for."""
    return _MARKER.sub(lambda m: pastes.get(int(m.group(1)), m.group(0)), text)


class PromptEditor(TextArea, inherit_bindings=False):
    """Enter sends; Shift+Enter / Ctrl+J insert a newline; Alt+Enter sends as a follow-up.

    Up on the first line (Down on the last) walks the project's prompt history. Ctrl+C and Ctrl+D post
    messages the app decides on (clear / quit). The editor grows with its text up to a bounded height.
    pi's editing keys (kill ring, undo, jump-to-char, word motions) are looked up in :attr:`key_actions`
    before Textual's own bindings, so pi's meaning of a key (Ctrl+Y yank, Ctrl+F right) wins.
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
    PromptEditor.-thinking-max, PromptEditor.-thinking-max:focus { border: round $pi-thinking-xhigh; }
    PromptEditor.-bash, PromptEditor.-bash:focus { border: round $pi-bash-mode; }
    PromptEditor .text-area--cursor-line { background: transparent; }
    """

    BINDINGS = _moves_only(TextArea.BINDINGS)

    @dataclass
    class Submitted(Message):
        """The user sent the editor's text (markers expanded); ``follow_up`` for Alt+Enter."""

        text: str
        follow_up: bool = False

    class ClearPressed(Message):
        """Ctrl+C in the editor: its text is already cleared; the app decides whether this was the
        second press that exits."""

    class CopySelectionPressed(Message):
        """Ctrl+C while text is selected on the screen (dragged over with the mouse): copy it; the
        editor keeps its text and the press does not count toward quitting."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

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
        self._menu_text = ""  # the text the menu's choices were computed for
        self._completed_text: str | None = None  # the text an accepted completion left: no list for it
        self.files: FileIndex | None = None
        self.commands: Callable[[], list[Candidate]] = list
        self.arguments: Callable[[str, str], list[Candidate]] | None = None
        self.mentions: Callable[[str], list[Candidate]] | None = None
        self.hold_key: Callable[[events.Key], bool] = lambda _event: False
        """Takes a key the editor must not handle yet (True): one typed while a command opens its screen
        (`TypeAhead`)."""
        self.before_submit: Callable[[str], None] = lambda _text: None
        """Told the text Enter sends before the keys after that Enter are handled (they may be queued
        behind it already): `TypeAhead.start_for`."""
        """What extensions offer after ``@`` (before the project's files)."""
        self.list_actions: dict[str, str] = list_key_actions({})
        """Textual key → what it does in the completion menu (``up``, ``down``, ``confirm``, ``cancel``):
        pi's ``tui.select.*`` keys, from the app's keymap."""
        self.key_actions: dict[str, tuple[str, ...]] = editor_key_actions(None)[0]
        """Textual key → editor actions tried in order (``submit``, ``newLine``, ``yank``, …), from pi's
        defaults and ``keybindings.json``."""
        self.kill_ring = KillRing()
        self.undo_stack = UndoStack()
        self._last_action: str | None = None
        """``kill`` (the next kill joins the entry), ``yank`` (yank-pop may follow), ``type-word``."""
        self._yank_range: tuple[tuple[int, int], tuple[int, int]] | None = None
        self._jump: str | None = None
        """``forward`` / ``backward`` after Ctrl+] / Ctrl+Alt+]: the next key is the character to find."""
        self._snapshots_off = 0

    # --- text --------------------------------------------------------------------------------------

    def set_text(self, text: str) -> None:
        """Replace the text and put the cursor at its end (undoable, as in pi)."""
        if text != self.text:
            self._snapshot()
        self._last_action = None
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
        if self.hold_key(event):
            return self._stop(event)
        key = canonical_key(event.key)
        actions = self.key_actions.get(key, ())
        previous, self._last_action = self._last_action, None
        if self._jump is not None:
            direction, self._jump = self._jump, None
            if "jumpForward" in actions or "jumpBackward" in actions:
                return self._stop(event)  # the jump key again cancels
            if event.character and event.is_printable:
                self._jump_to(event.character, forward=direction == "forward")
                return self._stop(event)
            # any other key cancels the jump and does what it does
        handled = True
        menu = self.menu
        if menu is not None and key in ("tab", "enter") and self._menu_text != self.text:
            # Keys typed in a burst (a paste-like "/context⏎", a fast typist) are handled before the
            # Changed messages their inserts posted: the menu may still show an older prefix's choices.
            self.refresh_completion()
        # pi's order with the completion menu open: cancel, up / down, Tab (complete), confirm (complete,
        # and a command is sent too)
        menu_action = self.list_actions.get(key) if menu is not None and menu.is_shown else None
        if menu_action is None and menu is not None and menu.is_shown and "tab" in actions:
            menu_action = "tab"
        if menu is not None and menu_action is not None:
            if menu_action == "up":
                menu.move(-1)
            elif menu_action == "down":
                menu.move(1)
            elif menu_action == "cancel":
                menu.hide()
            else:
                with self._undo_unit():
                    self._accept_completion(submit_after=menu_action == "confirm")
        elif any(self._run_key_action(action, previous) for action in actions):
            pass
        elif key == "tab":
            pass  # Tab moved off `tui.input.tab` does nothing: it never takes the focus from the editor
        else:
            handled = False
        if handled:
            return self._stop(event)
        if event.is_printable and event.character:
            # pi's undo grain: a run of word characters is one step; each whitespace starts a new one
            coalesce = previous == "type-word" and not event.character.isspace()
            self._last_action = "type-word"
            if not coalesce:
                self._snapshot()
            with self._undo_unit(snapshot=False):
                await super()._on_key(event)
            return None
        await super()._on_key(event)
        return None

    @staticmethod
    def _stop(event: events.Key) -> None:
        event.stop()
        event.prevent_default()

    def _run_key_action(self, action: str, previous: str | None = None) -> bool:
        """Do an editor action bound in the keymap; False when it does not apply (the key goes on)."""
        if action == "submit":
            self._submit(follow_up=False)
        elif action == "followUp":
            self._submit(follow_up=True)
        elif action == "newLine":
            self.insert("\n")
        elif action == "copy":
            # The app takes the mouse, so the terminal cannot copy a drag over the chat: Textual
            # selects the text, and Ctrl+C copies it, as in most terminal programs.
            selected = self.screen.get_selected_text()
            if not selected:
                return False  # nothing selected: the key goes on (Ctrl+C clears)
            self.post_message(self.CopySelectionPressed(selected))
        elif action == "tab":
            self.refresh_completion()  # Tab completes (pi); it never moves the focus away from the editor
        elif action == "cursorUp":
            if self.navigator.is_first_wrapped_line(self.cursor_location):
                # pi 0.79.5: on text, Up first goes to its start; from there (or on an empty editor) it
                # recalls. Only from the first visual line: in a wrapped line Up moves a visual line up.
                if self.text and self.cursor_location != (0, 0):
                    self.move_cursor((0, 0))
                else:
                    self._history_step(-1)
            else:
                self.action_cursor_up()
        elif action == "cursorDown":
            if not (self.navigator.is_last_wrapped_line(self.cursor_location) and self._history_step(1)):
                self.action_cursor_down()
        elif action in ("historyPrevious", "historyNext"):
            if self.menu is not None:
                self.menu.hide()
            self._history_step(-1 if action == "historyPrevious" else 1)
        elif action == "pageUp":
            self.action_cursor_page_up()
        elif action == "pageDown":
            self.action_cursor_page_down()
        elif action == "clear":
            # Cleared here, before the next key is handled: keys typed right after Ctrl+C (already
            # queued behind it) land in the empty editor instead of being wiped by a later clear.
            self.set_text("")
            self.post_message(self.ClearPressed())
        elif action == "exit":
            if self.text:
                return False  # Ctrl+D deletes forward in a non-empty editor
            self.post_message(self.ExitPressed())
        elif action == "dequeue":
            self.post_message(self.DequeuePressed())
        elif action in _MOTIONS:
            self._move(action)
        elif action == "jumpForward":
            self._jump = "forward"
        elif action == "jumpBackward":
            self._jump = "backward"
        elif action == "deleteCharBackward":
            if (span := self._marker_next_to_cursor(before=True)) is not None:
                self.delete(*span)
            elif (span := self._character_next_to_cursor(before=True)) is not None:
                self.delete(*span)
            else:
                self.action_delete_left()
        elif action == "deleteCharForward":
            if (span := self._marker_next_to_cursor(before=False)) is not None:
                self.delete(*span)
            elif (span := self._character_next_to_cursor(before=False)) is not None:
                self.delete(*span)
            else:
                self.action_delete_right()
        elif action in _KILLS:
            self._kill(action, accumulate=previous == "kill")
        elif action == "yank":
            self._yank()
        elif action == "yankPop":
            if previous == "yank":
                self._yank_pop()
        elif action == "undo":
            self.undo()
        else:
            return False
        return True

    # --- motions, kills, yank, undo (pi's editor) ---------------------------------------------------

    def _word_left(self, row: int, column: int) -> tuple[int, int]:
        if column == 0:
            return (row - 1, len(self.document[row - 1])) if row > 0 else (0, 0)
        return row, word_start(self.document[row], column)

    def _word_right(self, row: int, column: int) -> tuple[int, int]:
        line = self.document[row]
        if column >= len(line):
            return (row + 1, 0) if row < self.document.line_count - 1 else (row, len(line))
        return row, word_end(line, column)

    def _marker_next_to_cursor(self, *, before: bool) -> tuple[tuple[int, int], tuple[int, int]] | None:
        """The paste marker just before (after) the cursor: pi keeps a marker whole for Backspace,
        Delete and the arrows."""
        if not self.selection.is_empty:
            return None
        row, column = self.cursor_location
        line = self.document[row]
        if "[paste #" not in line:
            return None
        for match in _MARKER.finditer(line):
            if (match.end() if before else match.start()) == column:
                return (row, match.start()), (row, match.end())
        return None

    def _character_next_to_cursor(self, *, before: bool) -> tuple[tuple[int, int], tuple[int, int]] | None:
        """The span of the one user-perceived character before (or after) the cursor when it is more
        than one code point (an accent, a skin tone, a ZWJ emoji, a flag); None for the plain case."""
        from .graphemes import next_boundary, previous_boundary

        row, column = self.cursor_location
        line = self.document[row]
        if before:
            start = previous_boundary(line, column) if column > 0 else column
            return ((row, start), (row, column)) if column - start > 1 else None
        end = next_boundary(line, column)
        return ((row, column), (row, end)) if end - column > 1 else None

    def _move(self, action: str) -> None:
        row, column = self.cursor_location
        if action in ("cursorLeft", "cursorRight"):
            before = action == "cursorLeft"
            span = self._marker_next_to_cursor(before=before) or self._character_next_to_cursor(before=before)
            if span is not None:
                self.move_cursor(span[0] if action == "cursorLeft" else span[1])
            elif action == "cursorLeft":
                self.action_cursor_left()
            else:
                self.action_cursor_right()
        elif action == "cursorWordLeft":
            self.move_cursor(self._word_left(row, column))
        elif action == "cursorWordRight":
            self.move_cursor(self._word_right(row, column))
        elif action == "cursorLineStart":
            self.move_cursor((row, 0))
        else:
            self.move_cursor((row, len(self.document[row])))

    def _kill(self, action: str, *, accumulate: bool) -> None:
        """Delete a word or to a line end into the kill ring (a kill right after a kill joins its entry)."""
        row, column = here = self.cursor_location
        backward = action in ("deleteWordBackward", "deleteToLineStart")
        line = self.document[row]
        if backward:
            if column == 0:
                other = (row - 1, len(self.document[row - 1])) if row > 0 else here
            else:
                other = self._word_left(row, column) if action == "deleteWordBackward" else (row, 0)
        elif column >= len(line):
            other = (row + 1, 0) if row < self.document.line_count - 1 else here
        else:
            other = self._word_right(row, column) if action == "deleteWordForward" else (row, len(line))
        start, end = (other, here) if backward else (here, other)
        if start == end:
            self._last_action = "kill" if accumulate else None
            return
        killed = self.get_text_range(start, end)
        self.delete(start, end)
        self.kill_ring.push(killed, prepend=backward, accumulate=accumulate)
        self._last_action = "kill"

    def _yank(self) -> None:
        text = self.kill_ring.peek()
        if text is None:
            return
        start = self.cursor_location
        end = self.insert(text).end_location
        self._yank_range = (start, end)
        self._last_action = "yank"

    def _yank_pop(self) -> None:
        """Replace the text the last yank put in by the ring's previous entry (cycling)."""
        if len(self.kill_ring) < 2 or self._yank_range is None:
            self._last_action = "yank"
            return
        start, end = self._yank_range
        if end != self.cursor_location or self.get_text_range(start, end) != self.kill_ring.peek():
            return  # the yanked text is no longer where the yank left it (a mouse click moved the cursor)
        self.kill_ring.rotate()
        text = self.kill_ring.peek() or ""
        end = self.replace(text, start, end).end_location
        self._yank_range = (start, end)
        self._last_action = "yank"

    def _jump_to(self, char: str, *, forward: bool) -> None:
        """Put the cursor on the next (previous) ``char``, searching on across lines; stay if none."""
        row, column = self.cursor_location
        rows = range(row, self.document.line_count) if forward else range(row, -1, -1)
        for index in rows:
            line = self.document[index]
            if index == row:
                found = line.find(char, column + 1) if forward else line.rfind(char, 0, column)
            else:
                found = line.find(char) if forward else line.rfind(char)
            if found >= 0:
                self.move_cursor((index, found))
                return

    def _snapshot(self) -> None:
        self.undo_stack.push(
            Snapshot(self.text, self.cursor_location, dict(self.pastes), self._paste_counter)
        )

    @contextmanager
    def _undo_unit(self, *, snapshot: bool = True) -> Iterator[None]:
        """The edits inside are one undo step (``snapshot=False``: joined to the step already taken)."""
        if snapshot and not self._snapshots_off:
            self._snapshot()
        self._snapshots_off += 1
        try:
            yield
        finally:
            self._snapshots_off -= 1

    def edit(self, edit: Edit) -> EditResult:
        """Every change goes through here: take an undo snapshot first (unless inside one unit)."""
        if not self._snapshots_off:
            self._snapshot()
        return super().edit(edit)

    def undo(self) -> None:
        """Go back to the state before the last change (pi's Ctrl+-): text, cursor and paste markers."""
        snapshot = self.undo_stack.pop()
        if snapshot is None:
            return
        self.load_text(snapshot.text)
        self.move_cursor(snapshot.cursor)
        self.pastes = dict(snapshot.pastes)
        self._paste_counter = snapshot.paste_counter
        self._history_index = None
        self._last_action = None

    def redo(self) -> None:
        """pi has no redo: Textual's redo would replay edits this undo does not know about."""

    def _submit(self, *, follow_up: bool) -> None:
        raw = self.text
        if not raw.strip():
            return
        text = expand_pastes(raw, self.pastes)
        # History keeps the prompt as sent, pastes expanded (as pi): the markers mean nothing once the
        # pastes are cleared below, so a recalled marker would be sent as its literal text. A prompt too
        # big for the history file is not remembered rather than remembered cut short.
        if len(text) <= HISTORY_ENTRY_MAX_CHARS:
            self.prompt_history.add(text)
        self.load_text("")
        self.undo_stack.clear()
        self.pastes.clear()
        self._history_index = None
        if self.menu is not None:
            self.menu.hide()
        self.before_submit(text)
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
        # Handled here only: Textual would also run TextArea's own paste handler after this one (every
        # class's handler runs unless the default is prevented), which inserted the text a second time.
        event.stop()
        event.prevent_default()
        if self.read_only:
            return
        text = event.text.replace("\r\n", "\n").replace("\r", "\n")
        # Other control characters (a bell, what is left of a colour code) are dropped, as pi does.
        text = _CONTROL.sub("", text)
        lines = text.count("\n") + 1
        if lines > PASTE_LINES or len(text) > PASTE_CHARS:
            self._paste_counter += 1
            number = self._paste_counter
            self.pastes[number] = text
            text = (
                f"[paste #{number} +{lines} lines]"
                if lines > PASTE_LINES
                else f"[paste #{number} {len(text)} chars]"
            )
        with self._undo_unit():
            result = self.replace(text, *self.selection)
            self.move_cursor(result.end_location)

    # --- completion --------------------------------------------------------------------------------

    def on_text_area_changed(self, _event: TextArea.Changed) -> None:
        self.set_class(self.text.startswith("!"), "-bash")
        if self.text == self._completed_text:
            return  # the text a completion just filled in: the list stays closed until the next edit
        self._completed_text = None
        self.refresh_completion()

    def refresh_completion(self) -> None:
        if self.menu is None:
            return
        self._menu_text = self.text
        start, candidates = complete(
            self.text,
            self._caret_index(),
            self.commands,
            self.files,
            arguments=self.arguments,
            mentions=self.mentions,
        )
        if start >= 0:
            # The folder already typed in full is no choice: taking it changes nothing (and Enter, which
            # takes the highlighted choice, would never send the line).
            typed = self.text[start : self._caret_index()]
            candidates = [c for c in candidates if not (c.value.endswith("/") and c.value == typed)]
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
        folder = chosen.value.endswith("/")  # as pi: no space after a folder, whose path goes on
        replacement = ("/" + chosen.value if is_command else chosen.value) + ("" if folder else " ")
        self.replace(replacement, start, end)
        menu.hide()
        if not folder:
            # As pi: an accepted completion closes the list (a folder's keeps it open for its entries).
            # Reopened on the same text, the list offered the same completion again, and Enter, which
            # takes the highlighted one, could never send the line.
            self._completed_text = self._menu_text = self.text
        if submit_after and is_command and self.text.strip() == replacement.strip():
            self._submit(follow_up=False)
