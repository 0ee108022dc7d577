"""Seed 002 `turn_start` / `turn_end` and the message lifecycle events."""

from __future__ import annotations

from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI

LOG: list[tuple[Any, ...]] = []


def register(pi: ExtensionAPI) -> None:
    @pi.on("turn_start")
    async def turn_start(event: Event) -> None:
        LOG.append(("turn_start", event.turn_index, isinstance(event.timestamp, int)))

    @pi.on("turn_end")
    async def turn_end(event: Event) -> None:
        LOG.append(("turn_end", event.turnIndex, event.message.role, [r.role for r in event.tool_results]))

    @pi.on("message_start")
    async def message_start(event: Event) -> None:
        LOG.append(("message_start", event.message.role))

    @pi.on("message_update")
    async def message_update(event: Event) -> None:
        # only assistant messages stream; the token event says what changed
        LOG.append(("message_update", event.message.role, event.assistant_message_event.type))

    @pi.on("message_end")
    async def message_end(event: Event) -> None:
        LOG.append(("message_end", event.message.role))
