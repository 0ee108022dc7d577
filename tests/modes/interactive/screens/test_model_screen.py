from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_tui.args import parse_args
from pi_tui.modes.interactive.screens import SCREEN_COMMANDS
from pi_tui.modes.interactive.screens.model_screen import ModelScreen
from pi_tui.runtime.factory import create_session

from .helpers import HostApp

MODELS = {
    "providers": {
        "acme": {
            "baseUrl": "http://127.0.0.1:9/v1",
            "api": "openai-completions",
            "apiKey": "k",
            "models": [
                {"id": "swift-1", "contextWindow": 32000, "cost": {"input": 0.5, "output": 1.5}},
                {
                    "id": "deep-think-2",
                    "reasoning": True,
                    "input": ["text", "image"],
                    "contextWindow": 200000,
                    "cost": {"input": 3, "output": 15},
                },
            ],
        },
        "other": {
            "baseUrl": "http://127.0.0.1:9/v1",
            "api": "openai-completions",
            "apiKey": "k",
            "models": [{"id": "gpt-mini", "contextWindow": 128000}],
        },
    }
}


def _session(agent_dir: Path, project: Path) -> Any:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps(MODELS))
    return create_session(parse_args(["--model", "acme/swift-1"]), project).session


async def _open(app: HostApp, pilot: Any, args: str = "") -> ModelScreen:
    await SCREEN_COMMANDS["model"](app, args)
    await pilot.pause()
    assert isinstance(app.screen, ModelScreen)
    return app.screen


def _labels(screen: ModelScreen) -> list[str]:
    return [m.label for m in screen.shown]


async def test_model_picker_filters_fuzzily_and_enter_switches_the_session(
    agent_dir: Path, project: Path
) -> None:
    session = _session(agent_dir, project)
    app = HostApp(session)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await _open(app, pilot)
        assert set(_labels(screen)) >= {"acme/swift-1", "acme/deep-think-2", "other/gpt-mini"}
        row = str(screen._render_row(_labels(screen).index("acme/deep-think-2")))
        assert "200k ctx" in row and "$3/$15 per M" in row and "thinking, images" in row
        await pilot.press(*"dthink")
        assert _labels(screen)[0] == "acme/deep-think-2"
        assert _rows_on_screen(screen)[0].startswith("→ ")  # pi's marker on the highlighted model
        await pilot.press("right")
        assert "thinking: high" in str(screen.query_one("#model-title").render())
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, ModelScreen)
    assert session.model.label == "acme/deep-think-2" and session.thinking == "high"
    assert (
        not (agent_dir / "settings.json").exists()
        or "defaultModel" not in (agent_dir / "settings.json").read_text()
    )
    await session.close()


async def test_ctrl_s_saves_the_default_model(agent_dir: Path, project: Path) -> None:
    session = _session(agent_dir, project)
    app = HostApp(session)
    async with app.run_test(size=(140, 30)) as pilot:
        await _open(app, pilot, "gpt")
        await pilot.press("ctrl+s")
        await pilot.pause()
    saved = json.loads((agent_dir / "settings.json").read_text())
    assert saved["defaultProvider"] == "other" and saved["defaultModel"] == "gpt-mini"
    assert session.model.label == "other/gpt-mini"
    await session.close()


async def test_ctrl_t_scopes_models_and_tab_shows_only_the_scope(agent_dir: Path, project: Path) -> None:
    session = _session(agent_dir, project)
    app = HostApp(session)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await _open(app, pilot, "swift")
        await pilot.press("ctrl+t")
        screen.query_one("#model-search").value = "gpt"  # type: ignore[attr-defined]
        await pilot.pause()
        await pilot.press("ctrl+t")
        screen.query_one("#model-search").value = ""  # type: ignore[attr-defined]
        await pilot.pause()
        await pilot.press("tab")
        assert _labels(screen) == ["acme/swift-1", "other/gpt-mini"]
        await pilot.press("escape")
    saved = json.loads((agent_dir / "settings.json").read_text())
    assert saved["enabledModels"] == ["acme/swift-1", "other/gpt-mini"]
    await session.close()


async def test_left_lowers_the_thinking_level_and_escape_changes_nothing(
    agent_dir: Path, project: Path
) -> None:
    session = _session(agent_dir, project)
    app = HostApp(session)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await _open(app, pilot, "deep")
        await pilot.press("left")
        assert "thinking: low" in str(screen.query_one("#model-title").render())
        await pilot.press("escape")
        assert not isinstance(app.screen, ModelScreen)
    assert session.model.label == "acme/swift-1"
    await session.close()


def _rows_on_screen(screen: ModelScreen) -> list[str]:
    from pi_tui.modes.interactive.screens._rowlist import RowList

    rows = screen.query_one("#model-list", RowList)
    return [rows.render_line(y).text.rstrip() for y in range(rows.count)]


async def test_narrow_terminals_shorten_then_drop_columns_but_never_cut_a_model_name(
    agent_dir: Path, project: Path
) -> None:
    models = json.loads(json.dumps(MODELS))
    models["providers"]["acme"]["models"].append(
        {"id": "a-rather-long-model-name-2025-11", "reasoning": True, "cost": {"input": 10, "output": 50}}
    )
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps(models))
    session = create_session(parse_args(["--model", "acme/swift-1"]), project).session
    seen: dict[int, list[str]] = {}
    for width in (62, 80, 120):  # the rows have two columns less: pi's "→ " marker's gutter
        app = HostApp(session)
        async with app.run_test(size=(width, 30)) as pilot:
            screen = await _open(app, pilot)
            seen[width] = _rows_on_screen(screen)
    for width, rows in seen.items():
        long_row = next(r for r in rows if "acme/a-rather-long-model-name-2025-11" in r)
        assert "…" not in "".join(rows), (width, rows)
        assert "ctx" in long_row and "$10/$50" in long_row, (width, long_row)
    assert "$10/$50 per M" in next(r for r in seen[120] if "long-model" in r)
    assert "thinking" in next(r for r in seen[80] if "long-model" in r)
    assert "thinking" not in next(r for r in seen[62] if "long-model" in r)
    await session.close()


async def test_a_search_that_matches_nothing_says_so(agent_dir: Path, project: Path) -> None:
    session = _session(agent_dir, project)
    app = HostApp(session)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _open(app, pilot)
        assert not screen.query_one("#model-empty").display
        await pilot.press(*"zzzq")
        assert screen.shown == [] and screen.query_one("#model-empty").display
    await session.close()
