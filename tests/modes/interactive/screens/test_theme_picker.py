"""The theme picker is framed like the other dialogs (a padded frame, the themes right under the title,
no box around the list) and Ctrl+C backs out of it as Esc does, as in pi's selectors."""

from __future__ import annotations

from pathlib import Path

from textual.widget import Widget
from textual.widgets import OptionList, Static

from pi_tui.args import parse_args
from pi_tui.modes.interactive.screens import SCREEN_COMMANDS
from pi_tui.modes.interactive.screens._dialogs import ChoiceScreen
from pi_tui.modes.interactive.screens.settings_screen import SettingsScreen, ThemePicker
from pi_tui.runtime.factory import create_session

from .helpers import HostApp


async def test_the_theme_picker_is_a_padded_dialog_that_ctrl_c_backs_out_of(
    agent_dir: Path, project: Path
) -> None:
    session = create_session(parse_args(["--provider", "faux"]), project).session
    app = HostApp(session)
    async with app.run_test(size=(120, 30)) as pilot:
        await SCREEN_COMMANDS["settings"](app, "")
        await pilot.pause()
        assert isinstance(app.screen, SettingsScreen)
        app.screen.query_one("#settings-search").value = "theme"  # type: ignore[attr-defined]
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, ThemePicker)
        title = picker.query(Static).first()
        themes = picker.query_one(OptionList)
        frame = title.parent
        assert isinstance(frame, Widget)
        assert title.region.x == frame.region.x + 2  # the border, then one column of padding
        assert themes.region.y == title.region.bottom  # no box of its own around the list
        await pilot.press("down")
        await pilot.pause()
        assert app.theme == "pi-light"
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert isinstance(app.screen, SettingsScreen) and app.theme == "pi-dark"
    await session.close()


async def test_automatic_is_offered_first_and_saves_pis_light_dark_pair(agent_dir: Path, project: Path) -> None:
    # pi's theme list starts with "Automatic": a light and a dark theme, picked by the terminal's background
    import json

    session = create_session(parse_args(["--provider", "faux"]), project).session
    app = HostApp(session)
    async with app.run_test(size=(120, 30)) as pilot:
        await SCREEN_COMMANDS["settings"](app, "")
        await pilot.pause()
        app.screen.query_one("#settings-search").value = "theme"  # type: ignore[attr-defined]
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        themes = app.screen.query_one(OptionList)
        assert str(themes.get_option_at_index(0).prompt).startswith("Automatic (light/dark)")
        await pilot.press("up", "enter")
        await pilot.pause()
        # then, as pi's Automatic menu, the theme for each appearance (the pair's own at the cursor)
        assert isinstance(app.screen, ChoiceScreen)
        choices = app.screen.query_one(OptionList)
        assert choices.highlighted is not None
        assert str(choices.get_option_at_index(choices.highlighted).prompt) == "→ light"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceScreen)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, SettingsScreen)
    assert json.loads((agent_dir / "settings.json").read_text())["theme"] == "light/dark"
    await session.close()
