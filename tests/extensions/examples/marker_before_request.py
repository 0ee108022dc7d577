"""Seed 001: add a persistent marker before every request (context, reason before_request)."""

from __future__ import annotations

from typing import Any

from pi_tui.extensions.api import ContextEvent, ExtensionAPI, messages_cached_replace


def register(pi: ExtensionAPI) -> None:
    @pi.on("context")
    async def marker(event: ContextEvent) -> dict[str, Any] | None:
        if event.reason != "before_request":
            return None
        marker_message = {"role": "user", "content": "[marker]", "timestamp": 0}
        return {
            "transformerName": "marker",
            "patch": [messages_cached_replace([*event.state.envelope.cached, marker_message], "add marker")],
        }
