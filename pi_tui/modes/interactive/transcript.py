"""What the chat shows for a session branch: its entries as displayable items, oldest first."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["branch_items"]


def branch_items(entries: Iterable[Any]) -> list[Any]:
    """Messages, compaction and branch summaries and displayed custom messages of a branch."""
    from pi_tui.ai.types import BranchSummaryMessage, CompactionSummaryMessage, CustomMessage

    items: list[Any] = []
    for entry in entries:
        kind = getattr(entry, "type", None)
        if kind == "message":
            if getattr(entry.message, "role", None) != "system":
                items.append(entry.message)
        elif kind == "compaction":
            items.append(
                CompactionSummaryMessage(summary=entry.summary, tokens_before=entry.tokens_before or 0)
            )
        elif kind == "branch_summary":
            items.append(BranchSummaryMessage(summary=entry.summary, from_id=entry.from_id))
        elif kind == "custom_message" and entry.display:
            items.append(
                CustomMessage(
                    custom_type=entry.custom_type, content=entry.content, display=True, details=entry.details
                )
            )
    return items
