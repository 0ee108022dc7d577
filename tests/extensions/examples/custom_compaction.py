"""Seed 002 `session_before_compact`: cancel, or provide a custom compaction."""

from __future__ import annotations

from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI


def register(pi: ExtensionAPI) -> None:
    @pi.on("session_before_compact")
    async def compact(event: Event) -> dict[str, Any]:
        if event.custom_instructions == "cancel":
            return {"cancel": True}
        return {
            "compaction": {
                "summary": "My custom summary",
                "firstKeptEntryId": event.preparation["firstKeptEntryId"],
                "tokensBefore": event.preparation["tokensBefore"],
            }
        }
