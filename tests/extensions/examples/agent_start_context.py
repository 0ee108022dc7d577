"""Seed 000, stage 4: inject a hidden message and extend the system prompt once per prompt."""

from __future__ import annotations

from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI, ExtensionContext


def register(pi: ExtensionAPI) -> None:
    @pi.on("before_agent_start")
    async def add_context(event: Event, ctx: ExtensionContext) -> dict[str, Any]:
        return {
            "message": {
                "customType": "my-context",
                "content": "Context the LLM should see",
                "display": False,  # UI rendering only — the LLM always sees it
            },
            "systemPrompt": event["systemPrompt"] + "\nExtra instructions",
        }
