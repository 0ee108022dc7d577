"""Seed 002 `model_select`: react to model changes."""

from __future__ import annotations

from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI, ExtensionContext

CHANGES: list[tuple[Any, ...]] = []


def register(pi: ExtensionAPI) -> None:
    @pi.on("model_select")
    async def changed(event: Event, ctx: ExtensionContext) -> None:
        # event.model, event.previous_model, event.source: "set" | "cycle" | "restore"
        previous = event.previous_model.id if event.previous_model else None
        CHANGES.append((event.model.id, previous, event.source))
