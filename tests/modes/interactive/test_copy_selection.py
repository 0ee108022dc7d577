"""Text selected in the chat with the mouse is copied when the button is let go (pi's
``fullscreenCopyOnSelect``), or by Ctrl+X with that setting off, and by Ctrl+C, as in most terminal apps.

The app reports the mouse to itself (wheel scrolling, clicks), so the terminal's own selection and copy
do not see a drag over the chat; Textual selects the text instead, and Ctrl+C must copy that rather than
clear the prompt (and, pressed twice, quit).
"""

from __future__ import annotations

from pathlib import Path

from pi_tui.ai.providers.faux import FauxScript, faux_reply
from pi_tui.modes.interactive.markdown_block import AssistantText

from .helpers import make_app, submit_and_wait, type_text, until


async def test_ctrl_c_copies_text_selected_in_the_chat_and_keeps_the_draft(
    tmp_path: Path, agent_dir: Path
) -> None:
    script = FauxScript(faux_reply("Selectable answer words here"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "question")
        answer = app.chat.query(AssistantText).last().query_one("MarkdownParagraph")  # the answer's text line
        await type_text(pilot, "draft")
        await pilot.mouse_down(answer, offset=(0, 0))
        await pilot.hover(answer, offset=(20, 0))
        await pilot.mouse_up(answer, offset=(20, 0))
        await until(pilot, lambda: bool(app.screen.get_selected_text()))
        selected = app.screen.get_selected_text() or ""
        assert "Selectable" in selected
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard == selected
        assert app.editor.text == "draft"
        assert not app.screen.get_selected_text()  # copied: the selection goes, as its feedback
        await pilot.press("ctrl+c")  # then Ctrl+C clears the prompt; the copy did not count toward quitting
        await pilot.pause()
        assert app.editor.text == ""
        assert app.is_running


async def _select_in_answer(pilot: object, app: object) -> str:
    """Drag over the start of the last answer's first line; the text Textual selected."""
    from pi_tui.modes.interactive.app import PiApp

    assert isinstance(app, PiApp)
    answer = app.chat.query(AssistantText).last().query_one("MarkdownParagraph")
    await pilot.mouse_down(answer, offset=(0, 0))  # type: ignore[attr-defined]
    await pilot.hover(answer, offset=(10, 0))  # type: ignore[attr-defined]
    await pilot.mouse_up(answer, offset=(10, 0))  # type: ignore[attr-defined]
    await until(pilot, lambda: bool(app.screen.get_selected_text()))
    return app.screen.get_selected_text() or ""


async def test_text_selected_with_the_mouse_is_copied_when_the_button_is_let_go(
    tmp_path: Path, agent_dir: Path
) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript(faux_reply("Selectable answer words here")))
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "question")
        selected = await _select_in_answer(pilot, app)
        assert selected and selected in "Selectable answer words here"
        await until(pilot, lambda: app.clipboard == selected)  # fullscreenCopyOnSelect: pi's default
        assert app.screen.get_selected_text() == selected  # and it stays selected, as in pi


async def test_with_copy_on_select_off_ctrl_x_copies_the_selection_instead_of_the_last_answer(
    tmp_path: Path, agent_dir: Path
) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text('{"fullscreenCopyOnSelect": false}')
    app = make_app(tmp_path, agent_dir, FauxScript(faux_reply("Selectable answer words here")))
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "question")
        selected = await _select_in_answer(pilot, app)
        await pilot.pause()
        assert app.clipboard != selected  # letting go of the button copied nothing
        await pilot.press("ctrl+x")
        await until(pilot, lambda: app.clipboard == selected)
        assert selected != "Selectable answer words here"  # the selection, not the whole answer
