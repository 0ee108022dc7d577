"""pi's editing keys in the prompt editor: kill ring, yank / yank-pop, undo, jump-to-char, word motions."""

from __future__ import annotations

import json
from pathlib import Path

from textual import events
from textual.app import App, ComposeResult

from pi_tui.ai.providers.faux import FauxScript, faux_reply
from pi_tui.modes.interactive.editing import word_end, word_start
from pi_tui.modes.interactive.editor import PromptEditor
from pi_tui.modes.interactive.keys import editor_key_actions, hotkey_rows
from pi_tui.modes.interactive.theme import variable_defaults
from pi_tui.modes.prompt_history import PromptHistory

from .helpers import last_user_text, make_app, type_text, until

JUMP = "ctrl+right_square_bracket"
JUMP_BACK = "ctrl+alt+right_square_bracket"
UNDO = "ctrl+minus"


class EditorHost(App[None]):
    """The editor alone (fast): what it sends is collected in ``sent``."""

    def __init__(self, agent_dir: Path | None = None, history: list[str] | None = None) -> None:
        super().__init__()
        prompts = PromptHistory(None)
        for entry in history or []:
            prompts.add(entry)
        self.editor = PromptEditor(prompts)
        self.editor.key_actions = editor_key_actions(agent_dir)[0]
        self.sent: list[tuple[str, bool]] = []
        self.cleared = 0
        self.exited = 0

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return {**super().get_theme_variable_defaults(), **variable_defaults()}

    def compose(self) -> ComposeResult:
        yield self.editor

    def on_mount(self) -> None:
        self.editor.focus()

    def on_prompt_editor_submitted(self, message: PromptEditor.Submitted) -> None:
        self.sent.append((message.text, message.follow_up))

    def on_prompt_editor_clear_pressed(self, _message: PromptEditor.ClearPressed) -> None:
        self.cleared += 1  # the editor clears itself

    def on_prompt_editor_exit_pressed(self, _message: PromptEditor.ExitPressed) -> None:
        self.exited += 1


def _at(editor: PromptEditor, text: str, cursor: tuple[int, int]) -> None:
    editor.set_text(text)
    editor.move_cursor(cursor)
    editor.undo_stack.clear()


async def test_kills_go_to_the_ring_and_ctrl_y_yanks_them_back() -> None:
    app = EditorHost()
    async with app.run_test() as pilot:
        editor = app.editor
        await type_text(pilot, "hello world")
        await pilot.press("ctrl+w")
        assert editor.text == "hello "
        await pilot.press("ctrl+y")
        assert editor.text == "hello world" and editor.cursor_location == (0, 11)
        await pilot.press("home", "alt+f", "ctrl+k")
        assert editor.text == "hello"
        await pilot.press("ctrl+a", "ctrl+y")
        assert editor.text == " worldhello"
        await pilot.press("ctrl+e", "left", "left", "ctrl+u")
        assert editor.text == "lo"
        await pilot.press("ctrl+e", "ctrl+y")
        assert editor.text == "lo worldhel"
        _at(editor, "abc", (0, 1))
        await pilot.press("alt+d")
        assert editor.text == "a" and editor.kill_ring.peek() == "bc"


async def test_consecutive_kills_make_one_entry_a_backward_kill_prepends() -> None:
    app = EditorHost()
    async with app.run_test() as pilot:
        editor = app.editor
        _at(editor, "one two three", (0, 13))
        await pilot.press("ctrl+w", "ctrl+w")
        assert editor.text == "one " and editor.kill_ring.entries == ["two three"]
        _at(editor, "alpha beta gamma", (0, 0))
        await pilot.press("alt+d", "alt+d")
        assert editor.text == " gamma" and editor.kill_ring.peek() == "alpha beta"
        # a motion in between ends the run: the next kill is a new entry
        await pilot.press("ctrl+e", "ctrl+w")
        assert editor.kill_ring.entries == ["two three", "alpha beta", "gamma"]
        # killing across a line break keeps the newline in the entry
        _at(editor, "ab\ncd", (1, 1))
        await pilot.press("ctrl+u", "ctrl+u", "ctrl+u")
        assert editor.text == "d" and editor.kill_ring.peek() == "ab\nc"
        await pilot.press("ctrl+y")
        assert editor.text == "ab\ncd"


async def test_alt_y_after_a_yank_cycles_through_older_kills() -> None:
    app = EditorHost()
    async with app.run_test() as pilot:
        editor = app.editor
        for word in ("one", "two", "three"):
            await type_text(pilot, word)
            await pilot.press("ctrl+u")
        assert editor.text == "" and editor.kill_ring.entries == ["one", "two", "three"]
        await type_text(pilot, "<>")
        await pilot.press("left", "ctrl+y")
        assert editor.text == "<three>"
        await pilot.press("alt+y")
        assert editor.text == "<two>" and editor.cursor_location == (0, 4)
        await pilot.press("alt+y")
        assert editor.text == "<one>"
        await pilot.press("alt+y")
        assert editor.text == "<three>"
        # alt+y only follows a yank
        await pilot.press("x", "alt+y")
        assert editor.text == "<threex>"
        # and only while the yanked text is still where the yank put it (a click moved the cursor)
        await pilot.press("ctrl+y")
        editor.move_cursor((0, 0))
        await pilot.press("alt+y")
        assert editor.text == "<threexthree>"


async def test_ctrl_minus_undoes_typing_word_by_word_and_a_kill() -> None:
    app = EditorHost()
    async with app.run_test() as pilot:
        editor = app.editor
        await type_text(pilot, "hello world")
        await pilot.press(UNDO)
        assert editor.text == "hello"
        await pilot.press("ctrl+underscore")  # what a classic terminal sends for Ctrl+-
        assert editor.text == ""
        _at(editor, "foo bar", (0, 7))
        await pilot.press("ctrl+w")
        assert editor.text == "foo "
        await pilot.press(UNDO)
        assert editor.text == "foo bar" and editor.cursor_location == (0, 7)
        await pilot.press("ctrl+y", UNDO)
        assert editor.text == "foo bar"
        await pilot.press(UNDO)  # nothing left to undo: no change, no error
        assert editor.text == "foo bar"


async def test_undo_brings_back_a_paste_marker_and_what_it_stands_for() -> None:
    app = EditorHost()
    async with app.run_test() as pilot:
        editor = app.editor
        pasted = "\n".join(f"row {i}" for i in range(30))
        editor.post_message(events.Paste(pasted))
        await until(pilot, lambda: editor.text == "[paste #1 +30 lines]")
        await pilot.press("ctrl+w")
        assert editor.text == ""  # the marker is one word
        await pilot.press(UNDO)
        assert editor.text == "[paste #1 +30 lines]"
        await pilot.press("enter")
        assert app.sent == [(pasted, False)]


async def test_a_recalled_paste_sends_what_was_pasted_not_its_marker() -> None:
    """History keeps the prompt as sent (pi's too): Up brings back the pasted text itself, so Enter
    sends it again. With the marker kept, the recall sent the literal ``[paste #1 +30 lines]``."""
    app = EditorHost()
    async with app.run_test() as pilot:
        editor = app.editor
        pasted = "\n".join(f"row {i}" for i in range(30))
        editor.post_message(events.Paste(pasted))
        await until(pilot, lambda: editor.text == "[paste #1 +30 lines]")
        await pilot.press("enter")
        await pilot.press("up")
        assert editor.text == pasted
        await pilot.press("enter")
        assert app.sent == [(pasted, False), (pasted, False)]


async def test_a_small_paste_is_inserted_once_with_its_line_ends_made_plain() -> None:
    """A paste under the marker size goes in once (Textual also runs the text area's own paste handler
    after ours, which doubled it), with Windows line ends turned into plain ones, and one undo takes it."""
    app = EditorHost()
    async with app.run_test() as pilot:
        editor = app.editor
        _at(editor, "see ", (0, 4))
        editor.post_message(events.Paste("one\r\ntwo"))
        await until(pilot, lambda: editor.text != "see ")
        await pilot.pause()
        assert editor.text == "see one\ntwo"
        assert editor.cursor_location == (1, 3)
        await pilot.press(UNDO)
        assert editor.text == "see "


async def test_ctrl_bracket_jumps_to_the_next_and_previous_character() -> None:
    app = EditorHost()
    async with app.run_test() as pilot:
        editor = app.editor
        _at(editor, "a,b,c\nd,e", (0, 0))
        await pilot.press(JUMP, "comma")
        assert editor.cursor_location == (0, 1)
        await pilot.press(JUMP, "comma")
        assert editor.cursor_location == (0, 3)
        await pilot.press(JUMP, "comma")
        assert editor.cursor_location == (1, 1)  # on to the next line
        await pilot.press(JUMP, "z")
        assert editor.cursor_location == (1, 1) and editor.text == "a,b,c\nd,e"  # not found: stay
        await pilot.press(JUMP_BACK, "comma")
        assert editor.cursor_location == (0, 3)
        await pilot.press(JUMP_BACK, "a")
        assert editor.cursor_location == (0, 0)
        # the jump key again cancels; the next character is typed
        await pilot.press(JUMP, JUMP, "x")
        assert editor.text == "xa,b,c\nd,e"


async def test_word_motions_stop_at_punctuation_and_cross_lines() -> None:
    app = EditorHost()
    async with app.run_test() as pilot:
        editor = app.editor
        _at(editor, "foo.bar(baz) qux\nnext", (0, 0))
        stops = []
        for _ in range(8):
            await pilot.press("alt+f")
            stops.append(editor.cursor_location)
        assert stops == [(0, 3), (0, 4), (0, 7), (0, 8), (0, 11), (0, 12), (0, 16), (1, 0)]
        back = []
        for key in ("alt+b", "ctrl+left", "alt+left", "alt+b", "alt+b", "alt+b"):
            await pilot.press(key)
            back.append(editor.cursor_location)
        assert back == [(0, 16), (0, 13), (0, 11), (0, 8), (0, 7), (0, 4)]
        await pilot.press("ctrl+right", "alt+right")
        assert editor.cursor_location == (0, 8)
        _at(editor, "path/to.file", (0, 12))
        await pilot.press("ctrl+w")
        assert editor.text == "path/to."
        await pilot.press("alt+backspace")
        assert editor.text == "path/to" and editor.kill_ring.peek() == ".file"


def test_word_boundaries_follow_pi() -> None:
    assert word_start("don't stop", 5) == 4  # an apostrophe splits, as in pi
    assert word_end("snake_case rest", 0) == 10  # underscore is part of a word
    assert word_start("naïve café", 10) == 6  # letters of any script
    assert word_end("  ", 0) == 2 and word_start("  ", 2) == 0
    marker = "see [paste #2 1200 chars] ok"
    assert word_end(marker, 4) == 25 and word_start(marker, 25) == 4


async def test_keybindings_json_moves_yank_to_another_key(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "keybindings.json").write_text(
        json.dumps({"tui.editor.yank": "alt+i", "yankPop": ["ctrl+k"], "tui.editor.undo": []})
    )
    script = FauxScript(faux_reply("ok"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        editor = app.editor
        for word in ("one", "two"):
            await type_text(pilot, word)
            await pilot.press("ctrl+u")
        await pilot.press("ctrl+y")
        assert editor.text == ""  # ctrl+y no longer yanks
        await pilot.press("alt+i")
        assert editor.text == "two"
        await pilot.press("ctrl+k")  # the user's yank-pop key shadows the default kill-to-end
        assert editor.text == "one"
        await pilot.press(UNDO)  # unbound
        assert editor.text == "one"
    rows = hotkey_rows(app.keymap, app.editor.key_actions)
    assert any("alt+i" in keys.split(", ") for keys, _ in rows)
    assert not any("ctrl+y" in keys or "ctrl+y" in description for keys, description in rows)


async def test_keys_that_worked_before_still_do(tmp_path: Path) -> None:
    app = EditorHost(history=["earlier prompt"])
    async with app.run_test() as pilot:
        editor = app.editor
        await type_text(pilot, "ab")
        await pilot.press("shift+enter")
        await type_text(pilot, "c")
        await pilot.press("ctrl+j")
        await type_text(pilot, "d")
        assert editor.text == "ab\nc\nd"
        await pilot.press("backspace", "backspace")
        assert editor.text == "ab\nc"
        await pilot.press("up", "home", "delete")
        assert editor.text == "b\nc"
        await pilot.press("ctrl+e", "ctrl+d")  # ctrl+d on a non-empty editor deletes forward
        assert editor.text == "bc" and app.exited == 0
        await pilot.press("end", "ctrl+b", "ctrl+f", "left")
        assert editor.cursor_location == (0, 1)
        await pilot.press("enter")
        assert app.sent == [("bc", False)] and editor.text == ""
        await type_text(pilot, "q")
        await pilot.press("alt+enter")
        assert app.sent[-1] == ("q", True)
        await pilot.press("up")
        assert editor.text == "q"
        await pilot.press("up")
        assert editor.text == "bc"
        await pilot.press("down", "down")
        assert editor.text == ""
        await type_text(pilot, "draft")
        await pilot.press("ctrl+c")
        assert app.cleared == 1 and editor.text == ""
        await pilot.press(UNDO)  # a clear can be undone, as in pi
        assert editor.text == "draft"
        await pilot.press("ctrl+c", "ctrl+d")
        assert app.exited == 1


async def test_slash_and_at_completion_still_work_with_the_new_keys(tmp_path: Path, agent_dir: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    script = FauxScript(faux_reply("ok"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "/hotk")
        await until(pilot, lambda: app.menu.is_shown)
        await pilot.press("tab")
        assert app.editor.text == "/hotkeys "
        await pilot.press("ctrl+w", "ctrl+w")
        assert app.editor.text == ""
        await type_text(pilot, "read @note")
        await until(pilot, lambda: app.menu.is_shown)
        await pilot.press("tab")
        assert app.editor.text == "read @notes.txt "
        await pilot.press("enter")
        await until(pilot, lambda: script.call_count == 1 and not app._busy)
        assert last_user_text(script) == "read @notes.txt "


def test_terminal_sequences_reach_the_right_editor_action() -> None:
    """What a terminal really sends (kitty protocol and classic) finds pi's action in the editor's map."""
    from textual._xterm_parser import XTermParser

    from pi_tui.modes.interactive.keys import canonical_key

    actions = editor_key_actions(None)[0]
    expected = {
        "\x1b[93;7u": "jumpBackward",  # kitty Ctrl+Alt+]
        "\x1d": "jumpForward",
        "\x1b[45;5u": "undo",  # kitty Ctrl+-
        "\x1f": "undo",  # classic Ctrl+- (0x1f)
        "\x1by": "yankPop",
        "\x1bd": "deleteWordForward",
        "\x1b[3;3~": "deleteWordForward",
        "\x1b\x7f": "deleteWordBackward",
        "\x19": "yank",
        "\x0b": "deleteToLineEnd",
        "\x02": "cursorLeft",
        "\x06": "cursorRight",
    }
    for sequence, action in expected.items():
        parser = XTermParser()
        events_ = [*parser.feed(sequence), *parser.feed("")]  # "" ends the input: a lone ESC prefix resolves
        keys = [getattr(event, "key", None) for event in events_]
        assert len(keys) == 1 and keys[0] is not None, (sequence, keys)
        assert action in actions.get(canonical_key(keys[0]), ()), (sequence, keys[0])


async def test_a_paste_marker_is_one_character_for_backspace_delete_and_arrows() -> None:
    app = EditorHost()
    async with app.run_test() as pilot:
        editor = app.editor
        editor.post_message(events.Paste("x" * 1500))
        await until(pilot, lambda: editor.text == "[paste #1 1500 chars]")
        await type_text(pilot, "ab")
        await pilot.press("left", "left", "left")
        assert editor.cursor_location == (0, 0)
        await pilot.press("right")
        assert editor.cursor_location == (0, 21)
        await pilot.press("backspace")
        assert editor.text == "ab"
        await pilot.press(UNDO)
        assert editor.text == "[paste #1 1500 chars]ab"
        await pilot.press("home", "delete")
        assert editor.text == "ab"
        await pilot.press(UNDO, "enter")
        assert app.sent == [("x" * 1500 + "ab", False)]


async def test_up_in_a_draft_goes_to_its_start_first_then_to_history() -> None:
    """pi 0.79.5: Up on a non-empty draft first goes to the start of the line; the next Up recalls."""
    app = EditorHost(history=["older prompt"])
    async with app.run_test() as pilot:
        editor = app.editor
        await type_text(pilot, "my draft")
        await pilot.press("up")
        assert editor.text == "my draft" and editor.cursor_location == (0, 0)
        await pilot.press("up")
        assert editor.text == "older prompt"
        await pilot.press("down")
        assert editor.text == "my draft"  # leaving history gives the draft back


async def test_up_and_down_move_through_a_wrapped_line_before_history() -> None:
    """A long one-line prompt wraps: Up/Down move between its visual lines; history only from the first
    (last) visual line, not from anywhere on the first (last) line of the text."""
    app = EditorHost(history=["older prompt"])
    async with app.run_test(size=(40, 20)) as pilot:
        editor = app.editor
        long_line = " ".join(f"word{i}" for i in range(30))  # several visual lines at this width
        editor.insert(long_line)
        await pilot.pause()
        assert editor.wrapped_document.height > 2
        end = editor.cursor_location
        await pilot.press("up")
        assert editor.text == long_line  # moved up a visual line, no history
        assert editor.cursor_location[0] == 0 and 0 < editor.cursor_location[1] < end[1]
        await pilot.press("down")
        assert editor.text == long_line


async def test_keys_freed_by_keybindings_json_do_not_edit_the_prompt(tmp_path: Path, agent_dir: Path) -> None:
    """A key taken from an app action (Ctrl+X copy, Ctrl+Z suspend, Ctrl+V paste image) or from the
    editor (Ctrl+Y yank) does nothing, as in pi: Textual's text-area keys (cut, undo, paste, redo, select
    line / all on F6 / F7, delete line) must not reach the prompt and cut or replace what was typed."""
    (agent_dir / "keybindings.json").write_text(
        json.dumps(
            {
                "app.message.copy": "alt+c",
                "app.suspend": [],
                "app.clipboard.pasteImage": [],
                "tui.editor.yank": "alt+i",
            }
        )
    )
    app = make_app(tmp_path, agent_dir, FauxScript(faux_reply("ok")))
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        editor = app.editor
        await type_text(pilot, "keep this")
        await pilot.press("ctrl+x", "ctrl+z", "ctrl+v", "ctrl+y", "f6", "f7", "ctrl+shift+k")
        assert editor.text == "keep this"
        await type_text(pilot, "!")
        assert editor.text == "keep this!"


async def test_backspace_delete_and_arrows_take_a_whole_character_however_many_code_points() -> None:
    """As pi (grapheme segmentation): an accent typed as e + combining mark, an emoji with its skin
    tone, a ZWJ family and a flag each go in one Backspace/Delete and one Left/Right."""
    accent, thumbs, family, flag = "e\u0301", "👍🏽", "👨\u200d👩\u200d👧", "🇫🇷"
    app = EditorHost()
    async with app.run_test() as pilot:
        editor = app.editor
        text = f"a{accent}{thumbs}{family}{flag}中"
        _at(editor, text, (0, len(text)))
        expected = [f"a{accent}{thumbs}{family}{flag}", f"a{accent}{thumbs}{family}", f"a{accent}{thumbs}",
                    f"a{accent}", "a"]  # fmt: skip
        for left in expected:
            await pilot.press("backspace")
            assert editor.text == left
        _at(editor, text, (0, 1))
        await pilot.press("delete")
        assert editor.text == f"a{thumbs}{family}{flag}中"
        await pilot.press("right", "right")  # over the thumbs and the family
        assert editor.cursor_location == (0, 1 + len(thumbs) + len(family))
        await pilot.press("left")
        assert editor.cursor_location == (0, 1 + len(thumbs))
