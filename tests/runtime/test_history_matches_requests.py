from __future__ import annotations

from pathlib import Path

from pi_tui.ai.types import AssistantMessage, TextContent, UserMessage
from pi_tui.args import parse_args
from pi_tui.runtime.factory import create_session
from pi_tui.session import SessionManager


async def test_resumed_history_applies_a_patch_based_compaction(tmp_path: Path, agent_dir: Path) -> None:
    path = tmp_path / "s.jsonl"
    manager = SessionManager.open(path, cwd=tmp_path)
    ids = []
    for n in range(3):
        ids.append(manager.append_message(UserMessage(content=f"q{n}")).id)
        manager.append_message(AssistantMessage(content=[TextContent(text=f"a{n}")]))
    op = {
        "op": "compaction_apply",
        "scope": "cached",
        "summary": "S",
        "firstKeptEntryId": ids[2],
        "tokensBefore": 100,
        "invalidateCacheReason": "compaction",
    }
    manager.append_context_transform("compaction", [op])
    manager.close()

    session = create_session(parse_args(["--session", str(path), "--provider", "faux"]), tmp_path).session
    try:
        roles = [m.role for m in session.messages]
        assert roles == ["compactionSummary", "user", "assistant"]
        assert session.messages[1].content == "q2"
        # and it is what the next request starts from
        assert [m.role for m in session.current_envelope().cached] == roles
    finally:
        await session.close()
