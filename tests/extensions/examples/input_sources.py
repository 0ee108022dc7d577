"""Seed 002 `input`: handlers chain (this one runs after input_actions) and see the source."""

from __future__ import annotations

from pi_tui.extensions.api import Event, ExtensionAPI

SEEN: list[tuple[str, str]] = []


def register(pi: ExtensionAPI) -> None:
    @pi.on("input")
    def record(event: Event) -> None:
        SEEN.append((event["source"], event["text"]))  # pi-style item access works too
        return None  # the same as {"action": "continue"}
