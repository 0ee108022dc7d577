"""`get_messages` lists the recorded system messages where pi lists them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pi_tui.modes.rpc.transcript import transcript_messages
from pi_tui.testing import FakeLLM

from ...e2e.helpers import open_session, rehome_session

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "pi087"


async def test_after_a_compaction_pi_wrote_its_checkpoint_leads_and_earlier_system_messages_are_gone(
    tmp_path: Path, fake: FakeLLM
) -> None:
    project = (tmp_path / "project").resolve()
    project.mkdir()
    session = tmp_path / "rich.jsonl"
    shutil.copyfile(FIXTURES / "rich.jsonl", session)
    rehome_session(session, project)
    entries = [json.loads(line) for line in session.read_text().splitlines()[1:]]
    (compaction,) = [e for e in entries if e["type"] == "compaction"]
    async with open_session(
        ["--session", str(session), "--model", "fake-anthropic/claude-fake"], project
    ) as agent:
        listed = transcript_messages(agent)
        conversation = [m.role for m in agent.messages]
    assert listed[0] == compaction["systemMessage"]  # the checkpoint, not the system message before it
    assert [m["role"] for m in listed[1:]] == conversation
    assert conversation[0] == "compactionSummary"
