"""Seed 002 `session_before_fork`: cancel a fork, or fork without restoring messages."""

from __future__ import annotations

from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI

MODE = {"value": "cancel"}
SEEN: list[str] = []


def register(pi: ExtensionAPI) -> None:
    @pi.on("session_before_fork")
    async def guard(event: Event) -> dict[str, Any]:
        SEEN.append(event.entry_id)  # the entry being forked from
        if MODE["value"] == "cancel":
            return {"cancel": True}
        return {"skipConversationRestore": True}

    @pi.on("session_fork")
    async def forked(event: Event) -> None:
        SEEN.append("forked from " + event.previous_session_file)
