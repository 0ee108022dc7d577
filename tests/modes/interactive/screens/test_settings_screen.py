from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_tui.args import parse_args
from pi_tui.modes.interactive.screens import SCREEN_COMMANDS
from pi_tui.modes.interactive.screens._dialogs import ChoiceScreen, PromptScreen
from pi_tui.modes.interactive.screens.settings_screen import SettingsScreen, ThemePicker
from pi_tui.runtime.factory import create_session

from .helpers import HostApp


def _session(agent_dir: Path, project: Path, global_: dict, project_: dict | None = None) -> Any:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text(json.dumps(global_))
    if project_ is not None:
        (project / ".pi").mkdir()
        (project / ".pi" / "settings.json").write_text(json.dumps(project_))
    session = create_session(parse_args(["--provider", "faux"]), project).session
    session.settings.set_project_trusted(True)
    return session


async def _open(app: HostApp, pilot: Any) -> SettingsScreen:
    await SCREEN_COMMANDS["settings"](app, "")
    await pilot.pause()
    assert isinstance(app.screen, SettingsScreen)
    return app.screen


def _row(screen: SettingsScreen, key: str) -> str:
    index = next(i for i, s in enumerate(screen.shown) if s.key == key)
    return str(screen._render_row(index))


async def _search(pilot: Any, screen: SettingsScreen, text: str) -> None:
    screen.query_one("#settings-search").value = text  # type: ignore[attr-defined]
    await pilot.pause()


def _saved(agent_dir: Path) -> dict:
    return json.loads((agent_dir / "settings.json").read_text())


async def test_rows_show_each_value_and_where_it_comes_from(agent_dir: Path, project: Path) -> None:
    session = _session(agent_dir, project, {"quietStartup": True}, {"compaction": {"reserveTokens": 9000}})
    app = HostApp(session)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open(app, pilot)
        assert "on" in _row(screen, "quietStartup") and "global" in _row(screen, "quietStartup")
        assert "9000" in _row(screen, "compaction.reserveTokens")
        assert "project" in _row(screen, "compaction.reserveTokens")
        assert "default" in _row(screen, "hideThinkingBlock") and "off" in _row(screen, "hideThinkingBlock")
        await _search(pilot, screen, "steer")
        assert [s.key for s in screen.shown] == ["steeringMode"]
    await session.close()


async def test_a_long_value_keeps_its_distance_from_the_source_column(agent_dir: Path, project: Path) -> None:
    session = _session(agent_dir, project, {"shellPath": "/usr/local/bin/bash-5.2"})
    app = HostApp(session)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open(app, pilot)
        sources = {
            _row(screen, key).index(where)
            for key, where in (("shellPath", "global"), ("quietStartup", "default"))
        }
        assert "/usr/local/bin/bash-5.2  " in _row(screen, "shellPath")
        assert len(sources) == 1  # the source column stays aligned
    await session.close()


async def test_enter_toggles_a_switch_with_a_field_level_write(agent_dir: Path, project: Path) -> None:
    session = _session(agent_dir, project, {"quietStartup": True})
    app = HostApp(session)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open(app, pilot)
        (agent_dir / "settings.json").write_text(json.dumps({"quietStartup": True, "addedByHand": 1}))
        await _search(pilot, screen, "hide thinking")
        await pilot.press("enter")
        assert "on" in _row(screen, "hideThinkingBlock") and "global" in _row(screen, "hideThinkingBlock")
    assert _saved(agent_dir) == {"quietStartup": True, "addedByHand": 1, "hideThinkingBlock": True}
    await session.close()


async def test_numbers_are_checked_and_nested_fields_written_alone(agent_dir: Path, project: Path) -> None:
    session = _session(agent_dir, project, {"compaction": {"enabled": False}})
    app = HostApp(session)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open(app, pilot)
        await _search(pilot, screen, "compaction keeps")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)
        app.screen.query_one("#prompt-input").value = "lots"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await pilot.pause()
        assert _saved(agent_dir) == {"compaction": {"enabled": False}}
        await pilot.press("enter")
        await pilot.pause()
        app.screen.query_one("#prompt-input").value = "12000"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await pilot.pause()
        assert "12000" in _row(screen, "compaction.keepRecentTokens")
    assert _saved(agent_dir) == {"compaction": {"enabled": False, "keepRecentTokens": 12000}}
    assert session.settings.compaction.keep_recent_tokens == 12000
    await session.close()


async def test_choices_reset_and_project_scope(agent_dir: Path, project: Path) -> None:
    session = _session(agent_dir, project, {})
    app = HostApp(session)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open(app, pilot)
        await _search(pilot, screen, "review")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceScreen)
        await pilot.press("enter")  # "always"
        await pilot.pause()
        assert _saved(agent_dir) == {"compaction": {"review": "always"}}
        await pilot.press("ctrl+d")
        assert _saved(agent_dir) == {"compaction": {}}
        await pilot.press("ctrl+g")
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("down", "enter")  # "manual-only", into the project file
        await pilot.pause()
        assert "project" in _row(screen, "compaction.review")
    assert json.loads((project / ".pi" / "settings.json").read_text()) == {
        "compaction": {"review": "manual-only"}
    }
    await session.close()


async def test_the_theme_list_previews_as_you_move_and_escape_restores(
    agent_dir: Path, project: Path
) -> None:
    session = _session(agent_dir, project, {})
    app = HostApp(session)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open(app, pilot)
        await _search(pilot, screen, "theme")
        before = app.theme
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ThemePicker)
        await pilot.press("down")
        await pilot.pause()
        assert app.theme == "pi-light"
        await pilot.press("escape")
        await pilot.pause()
        assert app.theme == "pi-dark" and before != "pi-light"
        assert "theme" not in json.loads((agent_dir / "settings.json").read_text())
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.theme == "pi-light"
    assert _saved(agent_dir) == {"theme": "light"}
    await session.close()


async def test_arrows_move_and_escape_closes(agent_dir: Path, project: Path) -> None:
    session = _session(agent_dir, project, {})
    app = HostApp(session)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open(app, pilot)
        rows = screen.query_one("#settings-list")
        await pilot.press("down", "down", "up")
        assert rows.cursor == 1  # type: ignore[attr-defined]
        drawn = [rows.render_line(y).text for y in range(3)]  # type: ignore[attr-defined]
        assert [line[:2] for line in drawn] == ["  ", "→ ", "  "]  # pi's marker on the highlighted row
        await pilot.press("escape")
        assert not isinstance(app.screen, SettingsScreen)
    await session.close()


async def test_lists_and_texts_are_edited_as_text_and_packages_are_read_only(
    agent_dir: Path, project: Path
) -> None:
    session = _session(agent_dir, project, {"packages": ["npm:some-pkg"]})
    app = HostApp(session)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open(app, pilot)
        await _search(pilot, screen, "scoped models")
        await pilot.press("enter")
        await pilot.pause()
        app.screen.query_one("#prompt-input").value = "acme/*, other/gpt-mini"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await pilot.pause()
        await _search(pilot, screen, "shell command prefix")
        await pilot.press("enter")
        await pilot.pause()
        app.screen.query_one("#prompt-input").value = "set -e;"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await pilot.pause()
        await _search(pilot, screen, "packages")
        assert "npm:some-pkg" in _row(screen, "packages")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, SettingsScreen)
    assert _saved(agent_dir) == {
        "packages": ["npm:some-pkg"],
        "enabledModels": ["acme/*", "other/gpt-mini"],
        "shellCommandPrefix": "set -e;",
    }
    await session.close()


async def test_cache_warming_is_global_only_whatever_scope_the_screen_writes_to(
    agent_dir: Path, project: Path
) -> None:
    session = _session(agent_dir, project, {}, {"cacheWarming": "off"})
    app = HostApp(session)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open(app, pilot)
        # a project's value is not the one in effect: warming spends money
        assert "streaming" in _row(screen, "cacheWarming") and "default" in _row(screen, "cacheWarming")
        await pilot.press("ctrl+g")  # writing to project settings
        await _search(pilot, screen, "cache warming")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceScreen)
        await pilot.press("down", "down", "enter")  # "idle"
        await pilot.pause()
        assert "idle" in _row(screen, "cacheWarming") and "global" in _row(screen, "cacheWarming")
    assert _saved(agent_dir) == {"cacheWarming": "idle"}
    assert json.loads((project / ".pi" / "settings.json").read_text()) == {"cacheWarming": "off"}
    assert session.settings.cache_warming == "idle"
    assert session.cache_warmer.mode == "idle"
    await session.close()
