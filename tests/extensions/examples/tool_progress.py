"""Seed 002 `tool_execution_start` / `_update` / `_end`: informational, no return value."""

from __future__ import annotations

from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI

EVENTS: list[tuple[Any, ...]] = []


def register(pi: ExtensionAPI) -> None:
    @pi.on("tool_execution_start")
    async def start(event: Event) -> None:
        EVENTS.append(("start", event.tool_call_id, event.tool_name, dict(event.args)))

    @pi.on("tool_execution_update")
    async def update(event: Event) -> None:
        EVENTS.append(("update", event.tool_call_id))  # event.partial_result: progress so far

    @pi.on("tool_execution_end")
    async def end(event: Event) -> None:
        EVENTS.append(("end", event.tool_call_id, event.is_error, event.result.content[0].text))
