"""Scrolling the chat from the editor: pi's full-screen keys, rebindable, listed in /hotkeys."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.ai.providers.faux import FauxScript, faux_reply
from pi_tui.modes.interactive.keys import hotkey_rows

from .helpers import make_app, type_text, until

LONG = "\n\n".join(f"line {i:03d} of a long answer" for i in range(120))


async def _long_chat(pilot, app) -> None:  # type: ignore[no-untyped-def]
    await until(pilot, app.ready.is_set)
    await type_text(pilot, "tell me a lot")
    await pilot.press("enter")
    await until(pilot, lambda: not app._busy and len(app.session.messages) >= 2)
    await until(pilot, lambda: app.chat.max_scroll_y > 3 * app.chat.size.height)
    await pilot.pause()
    assert app.chat.scroll_y == app.chat.max_scroll_y


async def test_page_line_and_jump_keys_scroll_the_chat_from_the_editor(
    tmp_path: Path, agent_dir: Path
) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript(faux_reply(LONG)))
    async with app.run_test(size=(100, 30)) as pilot:
        await _long_chat(pilot, app)
        chat = app.chat
        bottom = chat.max_scroll_y
        page = chat.scrollable_content_region.height - 2
        await pilot.press("pageup")
        assert chat.scroll_y == bottom - page
        await pilot.press("shift+up")
        assert chat.scroll_y == bottom - page - 1
        await pilot.press("shift+down", "pagedown")
        assert chat.scroll_y == bottom
        await pilot.press("pageup", "pageup")
        assert chat.scroll_y == bottom - 2 * page
        await pilot.press("alt+home")
        await pilot.pause()
        assert chat.scroll_y == 0
        await pilot.press("alt+end")
        await pilot.pause()
        assert chat.scroll_y == chat.max_scroll_y
        assert app.focused is app.editor and app.editor.text == ""


async def test_sending_after_scrolling_up_goes_back_to_the_end(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript(faux_reply(LONG), faux_reply("SECONDANSWER")))
    async with app.run_test(size=(100, 30)) as pilot:
        await _long_chat(pilot, app)
        await pilot.press("pageup", "pageup")
        assert app.chat.scroll_y < app.chat.max_scroll_y
        await type_text(pilot, "more")
        await pilot.press("enter")
        await until(pilot, lambda: not app._busy and len(app.session.messages) >= 4)
        await pilot.pause()
        assert app.chat.scroll_y == app.chat.max_scroll_y  # at the end, and still following it


async def test_ctrl_up_goes_to_the_previous_prompt(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript(faux_reply(LONG), faux_reply(LONG)))
    async with app.run_test(size=(100, 30)) as pilot:
        await _long_chat(pilot, app)
        await type_text(pilot, "again")
        await pilot.press("enter")
        await until(pilot, lambda: not app._busy and len(app.session.messages) >= 4)
        await pilot.pause()
        from pi_tui.modes.interactive.blocks import UserBlock

        first, second = list(app.chat.query(UserBlock))
        await pilot.press("ctrl+up")
        assert app.chat.scroll_y == second.virtual_region.y
        await pilot.press("ctrl+up")
        assert app.chat.scroll_y == first.virtual_region.y
        await pilot.press("ctrl+down")
        assert app.chat.scroll_y == second.virtual_region.y


async def test_tab_keeps_the_focus_and_the_typed_text_in_the_editor(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "ab")
        await pilot.press("tab")
        await type_text(pilot, "cd")
        assert app.focused is app.editor
        assert app.editor.text == "abcd"
        await pilot.click("#chat")
        await type_text(pilot, "e")
        assert app.focused is app.editor and app.editor.text == "abcde"


async def test_scroll_keys_are_rebound_in_keybindings_json_and_listed(
    tmp_path: Path, agent_dir: Path
) -> None:
    (agent_dir / "keybindings.json").write_text(json.dumps({"tui.altScreen.pageUp": "f6"}))
    app = make_app(tmp_path, agent_dir, FauxScript(faux_reply(LONG)))
    async with app.run_test(size=(100, 30)) as pilot:
        await _long_chat(pilot, app)
        bottom = app.chat.max_scroll_y
        await pilot.press("pageup")
        assert app.chat.scroll_y == bottom
        await pilot.press("f6")
        assert app.chat.scroll_y < bottom
        rows = hotkey_rows(app.keymap, app.editor.key_actions)
    assert ("f6", "Scroll the chat up a page") in rows
    assert ("shift+up", "Scroll the chat up a line") in rows
