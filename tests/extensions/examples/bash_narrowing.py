"""Seed 002 `tool_call` type narrowing (isToolCallEventType) — and why input must not be mutated."""

from __future__ import annotations

from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI, is_tool_call_event_type

COMMANDS: list[str] = []
MUTATION_ERRORS: list[str] = []


def register(pi: ExtensionAPI) -> None:
    @pi.on("tool_call")
    def narrow(event: Event) -> dict[str, Any] | None:
        if is_tool_call_event_type("bash", event):
            COMMANDS.append(event.input["command"])
            try:
                event.input["command"] = "rm -rf /"  # a read-only view: this raises
            except TypeError as exc:
                MUTATION_ERRORS.append(type(exc).__name__)
        if is_tool_call_event_type("write", event):
            return {"block": True, "reason": f"no writes to {event.input['path']}"}
        return None
