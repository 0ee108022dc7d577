from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pi_tui.session import SessionManager
from pi_tui.testing import FakeLLM, Reply, text, tool_call

from ..pi087 import Pi087
from .conftest import open_session


async def _checkpointed_session(fake: FakeLLM, project: Path) -> Path:
    (project / "a.txt").write_text("one\n")
    fake.script(
        [
            Reply([tool_call("edit", {"path": "a.txt", "edits": [{"oldText": "one", "newText": "two"}]})]),
            Reply([tool_call("bash", {"command": "echo made > b.txt"})]),
            Reply([text("done")]),
        ]
    )
    async with open_session(project) as session:
        await session.prompt("change it")
        assert await session.undo() is not None  # leaves a checkpoint custom entry at the leaf
        path = session.session_manager.path
    assert path is not None
    return path


async def test_a_checkpointed_session_loads_cleanly_and_keeps_pis_message_shapes(
    fake: FakeLLM, project: Path
) -> None:
    path = await _checkpointed_session(fake, project)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert {e["type"] for e in lines} <= {
        "session",
        "model_change",
        "thinking_level_change",
        "message",
        "custom",
    }
    custom = [e for e in lines if e["type"] == "custom"]
    assert [e["customType"] for e in custom] == ["pi-tui.checkpoint"]
    assert custom[0]["data"]["kind"] == "restore"
    manager = SessionManager.open(path, read_only=True)
    try:
        assert manager.load_report.summary() in ("", None)
        roles = [m.role for m in manager.build_context().messages]
        assert roles == ["user", "assistant", "toolResult", "assistant", "toolResult", "assistant"]
    finally:
        manager.close()


@pytest.mark.slow
async def test_pi_0_87_1_continues_a_session_with_checkpoints(
    fake: FakeLLM, project: Path, pi087: Pi087
) -> None:
    path = await _checkpointed_session(fake, project)
    fake.script([Reply([text("pi answered")])])
    argv = pi087.argv("--model", "fake-anthropic/claude-fake", "--session", str(path), "-p", "and now?")
    run = subprocess.run(argv, cwd=project, env=pi087.env(), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "pi answered" in run.stdout
    body = json.dumps(fake.requests[-1].body)
    assert "change it" in body and "and now?" in body
    assert "pi-tui.checkpoint" not in body and '"checkpoint"' not in body
    assert fake.violations == []
