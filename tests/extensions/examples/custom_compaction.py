"""Seed 002 `session_before_compact` / `session_compact`: cancel, or provide a custom compaction."""

from __future__ import annotations

from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI

COMPACTED: list[tuple[str, bool]] = []


def register(pi: ExtensionAPI) -> None:
    @pi.on("session_before_compact")
    async def compact(event: Event) -> dict[str, Any]:
        # event.preparation, event.branch_entries, event.custom_instructions, event.signal
        if event.custom_instructions == "cancel":
            return {"cancel": True}
        return {
            "compaction": {
                "summary": "My custom summary",
                "firstKeptEntryId": event.preparation.firstKeptEntryId,
                "tokensBefore": event.preparation["tokensBefore"],
            }
        }

    @pi.on("session_compact")
    async def compacted(event: Event) -> None:
        COMPACTED.append((event.compaction_entry.type, event.from_extension))
