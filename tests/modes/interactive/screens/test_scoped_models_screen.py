"""/scoped-models: the models Ctrl+P cycles through, chosen in a list as in pi."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_tui.args import parse_args
from pi_tui.modes.interactive.screens import SCREEN_COMMANDS
from pi_tui.modes.interactive.screens.scoped_models_screen import ScopedModelsScreen
from pi_tui.runtime.factory import create_session
from pi_tui.runtime.model_cycle import model_cycle

from .helpers import HostApp
from .test_model_screen import MODELS


def _session(agent_dir: Path, project: Path) -> Any:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps(MODELS))
    return create_session(parse_args(["--model", "acme/swift-1"]), project).session


def _drawn(screen: ScopedModelsScreen) -> list[str]:
    rows = screen.query_one("#scope-list")
    return [
        "".join(s.text for s in rows.render_line(i)).rstrip()  # type: ignore[attr-defined]
        for i in range(len(screen.shown))
    ]


def _enabled(agent_dir: Path) -> Any:
    return json.loads((agent_dir / "settings.json").read_text()).get("enabledModels")


async def test_enter_ticks_a_model_into_the_scope_that_ctrl_p_cycles(agent_dir: Path, project: Path) -> None:
    session = _session(agent_dir, project)
    app = HostApp(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await SCREEN_COMMANDS["scoped-models"](app, "")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ScopedModelsScreen)
        labels = [m.label for m in screen.shown]
        assert "faux/faux-1" not in labels and set(labels) == {
            "acme/swift-1",
            "acme/deep-think-2",
            "other/gpt-mini",
        }
        assert not any("✓" in row for row in _drawn(screen))  # nothing chosen: every model cycles
        await pilot.press(*"gpt", "enter")
        assert _enabled(agent_dir) == ["other/gpt-mini"]
        assert "✓ other/gpt-mini" in _drawn(screen)[0]
        await pilot.press("backspace", "backspace", "backspace")
        await pilot.press("ctrl+a")
        assert set(_enabled(agent_dir)) == set(labels) and _enabled(agent_dir)[0] == "other/gpt-mini"
        cycle = model_cycle(session)
        assert cycle.scoped and [m.label for m in cycle.models][0] == "other/gpt-mini"
        await pilot.press("ctrl+x")
        assert _enabled(agent_dir) is None
        assert not model_cycle(session).scoped
        await pilot.press(*"swift", "enter", "enter")  # added, then removed again
        assert _enabled(agent_dir) is None
        await pilot.press("escape")
        assert not isinstance(app.screen, ScopedModelsScreen)
    await session.close()
