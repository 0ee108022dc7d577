from __future__ import annotations

import json
from pathlib import Path

from pi_tui.args import parse_args
from pi_tui.context.panels import REINJECT_ACK, Panel
from pi_tui.runtime.factory import create_session
from pi_tui.testing import FakeLLM, Reply, text

from ..e2e.helpers import write_models_json


async def _request_with_prefix_panel(tmp_path: Path, agent_dir: Path, settings: dict) -> dict:
    (agent_dir / "settings.json").write_text(json.dumps(settings))
    fake = FakeLLM()
    fake.script([Reply([text("ok")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        session = create_session(parse_args(["--model", "fake-anthropic/claude-fake"]), tmp_path).session
        session.panels.register(Panel("Notes", lambda: "stable notes", placement="prefix"))
        await session.prompt("hi")
        await session.close()
    assert fake.violations == []
    return fake.requests[-1].body


async def test_system_prompt_is_reinjected_after_prefix_panels_only_when_enabled(
    tmp_path: Path, agent_dir: Path
) -> None:
    off = await _request_with_prefix_panel(tmp_path, agent_dir, {})
    assert REINJECT_ACK not in json.dumps(off["messages"])
    on = await _request_with_prefix_panel(tmp_path, agent_dir, {"context": {"reinjectSystemPrompt": True}})
    messages = json.dumps(on["messages"])
    assert "System instructions (repeated for emphasis)" in messages and REINJECT_ACK in messages
    # it sits after the panels and before the conversation
    assert messages.index("stable notes") < messages.index(REINJECT_ACK) < messages.index('"hi"')
