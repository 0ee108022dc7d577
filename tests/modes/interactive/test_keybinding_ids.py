"""pi's remaining keybinding ids in ``keybindings.json``: the editor's history, cursor and page keys,
Tab and copy, the lists' selection keys, the pickers' save keys and the scoped-models keys."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.widgets import OptionList

from pi_tui.ai.providers.faux import FauxScript
from pi_tui.modes.interactive.dialogs import SelectDialog
from pi_tui.modes.interactive.keys import editor_key_actions, hotkey_rows, load_keymap, textual_keymap
from pi_tui.modes.interactive.screens import SCREEN_COMMANDS
from pi_tui.modes.interactive.screens.model_screen import ModelScreen
from pi_tui.modes.interactive.screens.scoped_models_screen import ScopedModelsScreen
from pi_tui.modes.interactive.theme import variable_defaults

from .helpers import make_app, type_text, until
from .screens.helpers import HostApp
from .screens.test_model_screen import _session as model_session
from .test_editor_keys import EditorHost


def _bind(agent_dir: Path, bindings: dict[str, Any]) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "keybindings.json").write_text(json.dumps(bindings))


class ThemedHost(HostApp):
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return {**super().get_theme_variable_defaults(), **variable_defaults()}


def _keyed_host(session: Any, agent_dir: Path) -> HostApp:
    """The screens' host app with the keymap the real app gives them (the user's keybindings.json)."""
    app = ThemedHost(session)
    keymap, warnings = load_keymap(agent_dir)
    assert warnings == []
    app.set_keymap(textual_keymap(keymap))
    return app


async def test_history_cursor_and_page_ids_are_rebindable(agent_dir: Path) -> None:
    _bind(
        agent_dir,
        {
            "tui.editor.historyPrevious": "alt+p",
            "tui.editor.historyNext": ["alt+n"],
            "tui.editor.cursorUp": [],
            "tui.editor.cursorDown": "alt+j",
            "tui.editor.pageUp": "alt+u",
        },
    )
    app = EditorHost(agent_dir, history=["older", "newer"])
    async with app.run_test() as pilot:
        editor = app.editor
        await type_text(pilot, "ab")
        await pilot.press("shift+enter")
        await type_text(pilot, "cd")
        await pilot.press("up")  # unbound: the cursor stays
        assert editor.cursor_location == (1, 2)
        await pilot.press("alt+u")  # a page up: to the first line
        assert editor.cursor_location[0] == 0
        await pilot.press("alt+j")  # cursor down
        assert editor.cursor_location[0] == 1
        await pilot.press("alt+p")  # history from anywhere in the text
        assert editor.text == "newer"
        await pilot.press("alt+p")
        assert editor.text == "older"
        await pilot.press("alt+n", "alt+n")
        assert editor.text == "ab\ncd"  # back to the draft


async def test_tab_and_copy_ids_are_rebindable(tmp_path: Path, agent_dir: Path) -> None:
    _bind(agent_dir, {"tui.input.tab": "alt+t", "tui.input.copy": "alt+c"})
    actions, warnings = editor_key_actions(agent_dir)
    assert warnings == [] and actions["alt+c"] == ("copy",) and actions["ctrl+c"] == ("clear",)
    assert any(keys == "alt+c" and "Copy" in what for keys, what in hotkey_rows({}, actions))
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "/hotk")
        await until(pilot, lambda: app.menu.is_shown)
        await pilot.press("tab")  # no longer completes, nor takes the focus away
        assert app.editor.text == "/hotk" and app.focused is app.editor
        await pilot.press("alt+t")
        assert app.editor.text == "/hotkeys "


async def test_selection_ids_move_choose_and_cancel_in_lists_and_the_completion_menu(
    tmp_path: Path, agent_dir: Path
) -> None:
    _bind(
        agent_dir,
        {
            "tui.select.up": "alt+k",
            "tui.select.down": "alt+j",
            "tui.select.confirm": "alt+l",
            "tui.select.cancel": "alt+q",
            "tui.select.pageDown": "alt+d",
        },
    )
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        answers: list[str | None] = []
        dialog = SelectDialog("Pick", [f"Option {i}" for i in range(1, 41)])
        await app.push_screen(dialog, answers.append)
        options = dialog.query_one("#options", OptionList)
        await until(pilot, lambda: app.screen is dialog and options.highlighted == 0)
        await pilot.press("down")  # no longer a selection key: nothing moves
        assert options.highlighted == 0
        await pilot.press("alt+j", "alt+j", "alt+k")
        assert options.highlighted == 1
        await pilot.press("alt+d")
        assert options.highlighted is not None and options.highlighted > 2
        await pilot.press("alt+k")
        chosen = options.highlighted
        await pilot.press("alt+l")
        await until(pilot, lambda: answers == [f"Option {chosen + 1}"])
        dialog = SelectDialog("Pick", ["a", "b"])
        await app.push_screen(dialog, answers.append)
        await until(pilot, lambda: app.screen is dialog)
        await pilot.press("escape")  # no longer cancels
        assert app.screen is dialog
        await pilot.press("alt+q")
        await until(pilot, lambda: answers[-1] is None)
        # The completion menu moves with the same keys.
        await type_text(pilot, "/")
        await until(pilot, lambda: app.menu.is_shown)
        first = app.menu.highlighted
        await pilot.press("alt+j")
        assert app.menu.highlighted == (first or 0) + 1


async def test_save_ids_of_the_model_and_thinking_pickers_are_rebindable(
    agent_dir: Path, tmp_path: Path
) -> None:
    _bind(agent_dir, {"app.models.save": "alt+s", "app.thinking.save": ["alt+w"]})
    session = model_session(agent_dir, tmp_path)
    app = _keyed_host(session, agent_dir)
    async with app.run_test(size=(140, 30)) as pilot:
        await SCREEN_COMMANDS["model"](app, "gpt")
        await pilot.pause()
        assert isinstance(app.screen, ModelScreen)
        await pilot.press("ctrl+s")  # no longer saves
        assert isinstance(app.screen, ModelScreen)
        await pilot.press("alt+s")
        await until(pilot, lambda: not isinstance(app.screen, ModelScreen))
        saved = json.loads((agent_dir / "settings.json").read_text())
        assert saved["defaultModel"] == "gpt-mini"
        answers: list[str | None] = []
        dialog: SelectDialog[str] = SelectDialog("Thinking level", ["low", "high"], saveable=True)
        await app.push_screen(dialog, answers.append)
        await until(pilot, lambda: app.screen is dialog)
        await pilot.press("alt+w")
        await until(pilot, lambda: answers == ["low"])
        assert dialog.saved
    await session.close()


async def test_scoped_models_ids_toggle_a_provider_and_reorder_the_cycle(
    agent_dir: Path, tmp_path: Path
) -> None:
    _bind(
        agent_dir,
        {
            "app.models.toggleProvider": "alt+p",
            "app.models.reorderUp": "alt+k",
            "app.models.enableAll": "alt+a",
            "app.models.clearAll": "alt+x",
        },
    )
    session = model_session(agent_dir, tmp_path)
    app = _keyed_host(session, agent_dir)

    def enabled() -> Any:
        return json.loads((agent_dir / "settings.json").read_text()).get("enabledModels")

    async with app.run_test(size=(100, 30)) as pilot:
        await SCREEN_COMMANDS["scoped-models"](app, "")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ScopedModelsScreen)
        await type_text(pilot, "swift")
        await pilot.press("alt+p")  # the provider of acme/swift-1: both acme models
        assert enabled() == ["acme/swift-1", "acme/deep-think-2"]
        await pilot.press("alt+p")  # all in: all out
        assert enabled() is None
        await pilot.press("backspace", "backspace", "backspace", "backspace", "backspace")
        await pilot.press("alt+a")
        assert set(enabled()) == {"acme/swift-1", "acme/deep-think-2", "other/gpt-mini"}
        order = enabled()
        await pilot.press("down", "alt+k")  # the second in the cycle goes first
        assert enabled() == [order[1], order[0], order[2]]
        assert [m.label for m in screen.shown] == enabled()
        await pilot.press("ctrl+x")  # no longer clears
        assert enabled() is not None
        await pilot.press("alt+x")
        assert enabled() is None
    await session.close()
