"""Seed 002 `session_start`: restore in-memory state from the session's entries."""

from __future__ import annotations

from typing import Any

from pi_tui.extensions.api import CommandContext, Event, ExtensionAPI, ExtensionContext

STATE: dict[str, Any] = {"count": 0, "starts": []}


def register(pi: ExtensionAPI) -> None:
    @pi.on("session_start")
    async def restore(event: Event, ctx: ExtensionContext) -> None:
        STATE["count"] = 0
        for entry in ctx.session_manager.get_branch():
            if entry.type == "custom" and entry.custom_type == "my-state":
                STATE["count"] = entry.data["count"]
        STATE["starts"].append(event.reason)

    async def bump(args: str, ctx: CommandContext) -> None:
        STATE["count"] += 1
        pi.append_entry("my-state", {"count": STATE["count"]})

    pi.register_command("bump", handler=bump, description="Count something, persistently")
