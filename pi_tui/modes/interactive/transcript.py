"""What the chat shows for a session branch: its entries as displayable items, oldest first."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_tui.ai.types import Message
    from pi_tui.session.entries import SessionEntry

__all__ = ["branch_items"]


def branch_items(entries: Iterable[SessionEntry]) -> list[Message]:
    """Messages, compaction and branch summaries and displayed custom messages of a branch.

    pi's persisted system prompts (`SystemMessageEntry`) are not part of the conversation and are left out.
    """
    from pi_tui.ai.types import BranchSummaryMessage, CompactionSummaryMessage, CustomMessage
    from pi_tui.session.entries import BranchSummaryEntry, CompactionEntry, CustomMessageEntry, MessageEntry

    items: list[Message] = []
    for entry in entries:
        if isinstance(entry, MessageEntry):
            items.append(entry.message)
        elif isinstance(entry, CompactionEntry):
            items.append(
                CompactionSummaryMessage(summary=entry.summary, tokens_before=entry.tokens_before or 0)
            )
        elif isinstance(entry, BranchSummaryEntry):
            items.append(BranchSummaryMessage(summary=entry.summary, from_id=entry.from_id))
        elif isinstance(entry, CustomMessageEntry) and entry.display:
            items.append(
                CustomMessage(
                    custom_type=entry.custom_type, content=entry.content, display=True, details=entry.details
                )
            )
    return items
