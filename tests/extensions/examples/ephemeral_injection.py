"""Seed 001: inject request-only context (context, reason ephemeral); never persisted."""

from __future__ import annotations

from typing import Any

from pi_tui.extensions.api import ContextEvent, ExtensionAPI


def register(pi: ExtensionAPI) -> None:
    @pi.on("context")
    async def inject(event: ContextEvent) -> dict[str, Any] | None:
        if event.reason != "ephemeral":
            return None
        eph = {"role": "user", "content": "[request-only]", "timestamp": 0}
        return {"patch": [{"op": "messages_uncached_append", "scope": "uncached", "messages": [eph]}]}
