"""Seed 001: persist a system prompt part after a turn (context, reason turn_end)."""

from __future__ import annotations

from typing import Any

from pi_tui.extensions.api import ContextEvent, ExtensionAPI


def register(pi: ExtensionAPI) -> None:
    @pi.on("context")
    async def policy(event: ContextEvent) -> dict[str, Any] | None:
        if event.reason != "turn_end":
            return None
        return {
            "transformerName": "system-policy",
            "patch": [
                {
                    "op": "system_part_set",
                    "scope": "cached",
                    "partName": "policy",
                    "text": "\n\n# Policy\n\nNever output secrets.",
                    "invalidateCacheReason": "add policy section",
                }
            ],
        }
