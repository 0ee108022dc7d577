"""Seed 002 `tool_result`: modify the result (also error results) — append an audit line, clear the error."""

from __future__ import annotations

from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI, ExtensionContext


def register(pi: ExtensionAPI) -> None:
    @pi.on("tool_result")
    async def audit(event: Event, ctx: ExtensionContext) -> dict[str, Any]:
        # event.tool_call_id, event.tool_name, event.input, event.content, event.details, event.is_error
        return {
            "content": [*event.content, {"type": "text", "text": "\n\nAudit: logged"}],
            "isError": False,  # can flip the error state
        }
