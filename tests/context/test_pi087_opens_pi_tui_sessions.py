"""pi 0.87.1 continues a session pi-tui wrote with everything pi-tui records in it (tool calls, a
compaction, a branch summary, rewind records, labels, a name), on each wire API, and pi-tui continues
after pi without losing a line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pi_tui.ai.types import message_text
from pi_tui.runtime.agent_session import AgentSession
from pi_tui.testing import FakeLLM, Reply, text, tool_call

from ..e2e.helpers import open_session
from ..pi087 import Pi087
from .test_pi087_cache_handover import MODELS, write_models

ANTHROPIC = MODELS["anthropic-messages"]


def _entry(agent: AgentSession, role: str, words: str) -> str:
    for entry in agent.session_manager.get_branch():
        message = getattr(entry, "message", None)
        if getattr(message, "role", None) == role and message_text(message) == words:
            return str(entry.id)
    raise AssertionError(f"no {role} message {words!r} on the branch")


async def _write_rich_session(fake: FakeLLM, agent_dir: Path, project: Path) -> Path:
    (agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 150}}))
    (project / "a.txt").write_text("one\n")
    fake.script(
        [
            Reply([text("Looking."), tool_call("read", {"path": "a.txt"})]),
            Reply([tool_call("edit", {"path": "a.txt", "edits": [{"oldText": "one", "newText": "two"}]})]),
            Reply([tool_call("bash", {"command": "echo made > b.txt && cat a.txt"})]),
            Reply([text("Changed it.")]),
            Reply([text("A second answer " * 20)]),
            Reply([text("## Goal\nChange a.txt\n\n## Progress\nDone.")]),  # the compaction's summary
            Reply([text("After the compaction.")]),
            Reply([tool_call("write", {"path": "c.txt", "content": "three\n"})]),
            Reply([text("Wrote c.txt.")]),
        ]
    )
    async with open_session(["--model", ANTHROPIC], project) as agent:
        await agent.prompt("Change one to two in a.txt")
        await agent.prompt("Tell me more " * 20)
        agent.label(_entry(agent, "user", "Change one to two in a.txt"), "start")
        agent.set_session_name("Interop with pi")
        assert (await agent.compact()) is not None
        await agent.prompt("Anything else?")
        after = _entry(agent, "assistant", "After the compaction.")
        await agent.prompt("Write c.txt")
        assert await agent.undo() is not None  # rewind records: the checkpoint restore at the leaf
        await agent.navigate(after, summary="We wrote c.txt and took it back.")
        path = agent.session_manager.path
    assert path is not None
    return path


def _types(path: Path) -> list[str]:
    return [json.loads(line)["type"] for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.slow
@pytest.mark.parametrize("api", list(MODELS))
async def test_pi_0_87_1_continues_a_pi_tui_session_with_every_kind_of_entry(
    api: str, tmp_path: Path, agent_dir: Path, pi087: Pi087
) -> None:
    project = (tmp_path / "project").resolve()
    project.mkdir()
    fake = FakeLLM()
    with fake.serve() as server:
        write_models(agent_dir, server)
        path = await _write_rich_session(fake, agent_dir, project)
        kinds = set(_types(path))
        assert {"message", "label", "session_info", "branch_summary", "custom"} <= kinds
        assert "context_transform" in kinds or "compaction" in kinds
        ours = path.read_text(encoding="utf-8").splitlines()
        fake.script([Reply([text("pi answers")]), Reply([text("pi-tui answers")])])
        run = subprocess.run(
            pi087.argv("--session", str(path), "--model", MODELS[api], "-p", "and now?"),
            cwd=project,
            env=pi087.env(),
            capture_output=True,
            text=True,
            timeout=50,
        )
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == "pi answers"
        pi_request = fake.requests[-1]
        after_pi = path.read_text(encoding="utf-8").splitlines()
        async with open_session(["--session", str(path), "--model", ANTHROPIC], project) as agent:
            await agent.prompt("back in pi-tui")
            last = agent.last_assistant_message()
    assert fake.violations == []
    sent = json.dumps(pi_request.body)
    assert "We wrote c.txt and took it back." in sent and "and now?" in sent  # branch summary, prompt
    assert "Change one to two in a.txt" in sent and "pi-tui.checkpoint" not in sent
    assert after_pi[: len(ours)] == ours  # pi kept every line pi-tui wrote
    assert path.read_text(encoding="utf-8").splitlines()[: len(after_pi)] == after_pi
    assert last is not None and last.text() == "pi-tui answers"
