"""Seed 002 `context`: filter out irrelevant messages and inject a synthetic one (every request)."""

from __future__ import annotations

from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI, message_text


def is_irrelevant(message: Any) -> bool:
    return "IRRELEVANT" in message_text(message)


def register(pi: ExtensionAPI) -> None:
    @pi.on("context")
    async def shape(event: Event) -> dict[str, Any]:
        # event.messages is a deep copy: safe to mutate
        filtered = [m for m in event.messages if not is_irrelevant(m)]
        synthetic = {"role": "user", "content": "[synthetic note]", "timestamp": 0}
        return {"messages": [*filtered, synthetic]}
