"""Seed 002 `session_shutdown`: the last chance to persist state (keep it fast)."""

from __future__ import annotations

from pathlib import Path

from pi_tui.extensions.api import Event, ExtensionAPI, ExtensionContext


def register(pi: ExtensionAPI) -> None:
    @pi.on("session_shutdown")
    async def save(_event: Event, ctx: ExtensionContext) -> None:
        Path(ctx.cwd, "shutdown-state.txt").write_text(f"entries={len(ctx.session_manager.get_entries())}")
