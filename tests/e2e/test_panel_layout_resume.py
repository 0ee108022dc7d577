from __future__ import annotations

import json
from pathlib import Path

from pi_tui.modes.interactive.screens.context_data import apply_layout
from pi_tui.testing import FakeLLM, Reply, text

from .helpers import open_session, run_cli

ANTHROPIC = "fake-anthropic/claude-fake"

PANELS = """
def register(pi):
    pi.register_panel("Status", lambda: "all green", placement="tail")
    pi.register_panel("Noise", lambda: "chatter", placement="tail")
"""


async def test_print_mode_lays_out_a_resumed_request_with_the_recorded_panel_layouts(
    fake: FakeLLM, tmp_path: Path
) -> None:
    fake.responder = lambda _req: Reply([text("ok")])
    ext = tmp_path / "panels.py"
    ext.write_text(PANELS)
    async with open_session(["--model", ANTHROPIC, "-e", str(ext)], tmp_path) as session:
        await session.prompt("hello")
        apply_layout(session, {"Status": "prefix", "Noise": "hidden"}, "status is stable")
        await session.prompt("again")
    live = json.dumps(fake.requests[-1].body["messages"])

    run = run_cli(["-c", "--model", ANTHROPIC, "-e", str(ext), "-p", "after the restart"], tmp_path)
    assert run.returncode == 0, run.stderr
    resumed = json.dumps(fake.requests[-1].body["messages"])
    assert "after the restart" in resumed
    for messages in (live, resumed):  # the panel before the conversation, the hidden one left out
        assert messages.index("all green") < messages.index("hello")
        assert "chatter" not in messages
    assert fake.violations == []


async def test_switching_to_a_session_applies_its_recorded_panel_layouts(
    fake: FakeLLM, tmp_path: Path
) -> None:
    from pi_tui.session import SessionManager

    fake.responder = lambda _req: Reply([text("ok")])
    ext = tmp_path / "panels.py"
    ext.write_text(PANELS)
    async with open_session(["--model", ANTHROPIC, "-e", str(ext)], tmp_path) as session:
        await session.prompt("hello")
        apply_layout(session, {"Status": "prefix", "Noise": "hidden"}, "status is stable")
        laid_out = session.session_manager.path
    assert laid_out is not None
    async with open_session(["--model", ANTHROPIC, "-e", str(ext), "--no-session"], tmp_path) as session:
        await session.prompt("elsewhere")
        assert session.panels.layout_overrides == {}
        await session.switch_session(SessionManager.open(laid_out))
        assert session.panels.layout_overrides == {"Status": "prefix", "Noise": "hidden"}
        await session.prompt("back again")
    messages = json.dumps(fake.requests[-1].body["messages"])
    assert messages.index("all green") < messages.index("hello") and "chatter" not in messages
