"""Seed 002 `session_before_tree`: cancel /tree navigation, or provide the branch summary and a label."""

from __future__ import annotations

from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI

MODE = {"value": "summary"}
TREE_EVENTS: list[dict[str, Any]] = []


def register(pi: ExtensionAPI) -> None:
    @pi.on("session_before_tree")
    async def before(event: Event) -> dict[str, Any]:
        if MODE["value"] == "cancel":
            return {"cancel": True}
        return {"summary": {"summary": "Custom branch summary"}, "label": "my-label"}

    @pi.on("session_tree")
    async def after(event: Event) -> None:
        TREE_EVENTS.append(event.fields())
