"""Seed 002 `tool_call`: block execution; the reason becomes the tool's error result."""

from __future__ import annotations

from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI, ExtensionContext

WRITE_TOOLS = {"write", "edit", "bash"}


def register(pi: ExtensionAPI) -> None:
    @pi.on("tool_call")
    async def guard(event: Event, ctx: ExtensionContext) -> dict[str, Any] | None:
        # event.tool_call_id, event.tool_name, event.input
        if event.tool_name in WRITE_TOOLS:
            return {"block": True, "reason": "Not allowed in read-only mode"}
        return None  # allow execution
