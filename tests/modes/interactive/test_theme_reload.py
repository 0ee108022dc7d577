"""A theme picked in ``/settings`` becomes the app's theme: editing its file is applied (hot reload)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from textual.widgets import OptionList

from pi_tui.ai.providers.faux import FauxScript
from pi_tui.modes.interactive.screens.settings_screen import SettingsScreen, ThemePicker
from pi_tui.modes.interactive.theme import builtin_theme_dir

from .helpers import make_app, until


def write_theme(folder: Path, name: str, accent: str) -> Path:
    data = json.loads((builtin_theme_dir() / "dark.json").read_text())
    data["name"] = name
    data["colors"]["accent"] = accent
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


async def pick_theme(pilot: object, app: object, name: str) -> None:
    app.run_command("/settings")  # type: ignore[attr-defined]
    await until(pilot, lambda: isinstance(app.screen, SettingsScreen))  # type: ignore[attr-defined]
    screen = app.screen  # type: ignore[attr-defined]
    screen.query_one("#settings-search").value = "theme"
    await until(pilot, lambda: [s.key for s in screen.shown][:1] == ["theme"])
    await pilot.press("enter")  # type: ignore[attr-defined]
    await until(pilot, lambda: isinstance(app.screen, ThemePicker))  # type: ignore[attr-defined]
    picker = app.screen  # type: ignore[attr-defined]
    picker.query_one(OptionList).highlighted = picker.names.index(name)
    await pilot.press("enter")  # type: ignore[attr-defined]
    await until(pilot, lambda: isinstance(app.screen, SettingsScreen))  # type: ignore[attr-defined]
    await pilot.press("escape")  # type: ignore[attr-defined]


async def test_editing_a_theme_picked_in_settings_applies_it_and_does_not_revert(
    tmp_path: Path, agent_dir: Path
) -> None:
    themes = agent_dir / "themes"
    write_theme(themes, "first", "#ff0000")
    second = write_theme(themes, "second", "#0000ff")
    app = make_app(tmp_path, agent_dir, FauxScript(), theme_name="first")
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        assert app.theme == "pi-first"
        await pick_theme(pilot, app, "second")
        await until(pilot, lambda: app.theme == "pi-second")
        write_theme(themes, "second", "#00ff00")
        os.utime(second, (1, 1))  # a new mtime even within the same second
        await until(pilot, lambda: app.theme_variables.get("pi-accent") == "#00ff00")
        assert app.theme == "pi-second"


async def test_a_user_theme_picked_after_a_built_in_one_is_hot_reloaded(
    tmp_path: Path, agent_dir: Path
) -> None:
    themes = agent_dir / "themes"
    mine = write_theme(themes, "mine", "#ff0000")
    app = make_app(tmp_path, agent_dir, FauxScript(), theme_name="dark")
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await pick_theme(pilot, app, "mine")
        await until(pilot, lambda: app.theme_variables.get("pi-accent") == "#ff0000")
        write_theme(themes, "mine", "#00ff00")
        os.utime(mine, (1, 1))
        await until(pilot, lambda: app.theme_variables.get("pi-accent") == "#00ff00")
