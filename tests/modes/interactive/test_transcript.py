"""What the chat shows for a session branch, from entries read off disk."""

from __future__ import annotations

from pathlib import Path

from pi_tui.ai.types import UserMessage
from pi_tui.modes.interactive.transcript import branch_items
from pi_tui.session.entries import SystemMessageEntry
from pi_tui.session.manager import SessionManager

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "pi087"


def test_a_branch_with_pi_system_messages_shows_its_conversation_without_them() -> None:
    with SessionManager.open(FIXTURES / "plain.jsonl", read_only=True) as manager:
        branch = manager.get_branch()
    assert any(isinstance(entry, SystemMessageEntry) for entry in branch)
    items = branch_items(branch)
    assert items
    assert isinstance(items[0], UserMessage)
    assert all(getattr(item, "role", None) != "system" for item in items)
