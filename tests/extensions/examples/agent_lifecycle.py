"""Seed 002 `agent_start` / `agent_end`: per-run state; agent_end gets only this run's new messages."""

from __future__ import annotations

from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI, ExtensionContext

RUNS: list[dict[str, Any]] = []


def register(pi: ExtensionAPI) -> None:
    state: dict[str, Any] = {}

    @pi.on("agent_start")
    async def start(event: Event, ctx: ExtensionContext) -> None:
        state["started"] = True  # e.g. start a timer, reset per-run state

    @pi.on("agent_end")
    async def end(event: Event, ctx: ExtensionContext) -> None:
        RUNS.append(
            {
                "started": state.pop("started", False),
                "roles": [m.role for m in event.messages],
                "branch_length": len(ctx.session_manager.get_branch()),
            }
        )
