"""Seed 002 `user_bash`: replace the execution of `!cmd` with a full result."""

from __future__ import annotations

from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI, ExtensionContext


def register(pi: ExtensionAPI) -> None:
    @pi.on("user_bash")
    async def remote(event: Event, ctx: ExtensionContext) -> dict[str, Any] | None:
        # event.command, event.exclude_from_context (True for "!!"), event.cwd
        if not event.command.startswith("remote "):
            return None
        output = f"ran {event.command.removeprefix('remote ')!r} on the build host"
        return {"result": {"output": output, "exitCode": 0, "cancelled": False, "truncated": False}}
