"""The bash tool's commands see pi 0.82+'s PI_* variables for the current session and model."""

from __future__ import annotations

from pathlib import Path

from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .helpers import ANTHROPIC, open_session

SHOW = "env | grep -E '^(PI_(SESSION_ID|SESSION_FILE|PROVIDER|MODEL|REASONING_LEVEL|CODING_AGENT)|AI_AGENT)=' | sort"


async def test_bash_commands_see_the_session_model_and_thinking(fake: FakeLLM, project: Path) -> None:
    fake.script([Reply([tool_call("bash", {"command": SHOW})]), Reply([text("ok")])])
    async with open_session(["--model", ANTHROPIC], project) as session:
        await session.prompt("show env")
        session_id, session_file, thinking = (
            session.session_manager.id,
            session.session_manager.path,
            session.thinking,
        )
    [result] = fake.requests[1].tool_results()
    provider, model = ANTHROPIC.split("/")
    assert result.content.splitlines() == [
        "AI_AGENT=pi",
        "PI_CODING_AGENT=true",
        f"PI_MODEL={model}",
        f"PI_PROVIDER={provider}",
        f"PI_REASONING_LEVEL={thinking}",
        f"PI_SESSION_FILE={session_file}",
        f"PI_SESSION_ID={session_id}",
    ]
