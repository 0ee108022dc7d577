"""Seed 000, stage 2 / seed 002 `input`: pass through, transform, or swallow the user's input."""

from __future__ import annotations

from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI, ExtensionContext


def register(pi: ExtensionAPI) -> None:
    async def on_input(event: Event, ctx: ExtensionContext) -> dict[str, Any] | None:
        # event.text — the raw user input; event.images — attached images; event.source
        if event.text.startswith("shout "):
            return {"action": "transform", "text": event.text.removeprefix("shout ").upper()}
        if event.text == "ignore me":
            return {"action": "handled"}  # swallow entirely: no LLM call
        return {"action": "continue"}  # pass through unchanged

    pi.on("input", on_input)
