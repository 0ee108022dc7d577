"""Seed 002 `before_agent_start`: a second extension sees the first one's system prompt (chaining) and
adds its own message (messages accumulate)."""

from __future__ import annotations

from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI

SEEN_PROMPTS: list[str] = []


def register(pi: ExtensionAPI) -> None:
    @pi.on("before_agent_start")
    def chained(event: Event) -> dict[str, Any]:
        SEEN_PROMPTS.append(event.system_prompt)
        return {
            "message": {
                "customType": "my-extension",
                "content": "Text the LLM sees",
                "display": True,
                "details": {"any": "data"},
            },
            "systemPrompt": event.system_prompt + "\nNew instructions",
        }
