"""Seed 002 `session_before_switch`: prevent /new and /resume."""

from __future__ import annotations

from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI

REASONS: list[str] = []


def register(pi: ExtensionAPI) -> None:
    @pi.on("session_before_switch")
    async def veto(event: Event) -> dict[str, Any]:
        # event.reason: "new" | "resume"; event.target_session_file only for resume
        REASONS.append(event.reason)
        return {"cancel": True}
