"""Seed 002 `resources_discover`: an extension ships its own skill and prompt template (a package)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI, ExtensionContext

HERE = Path(__file__).parent
REASONS: list[str] = []


def register(pi: ExtensionAPI) -> None:
    @pi.on("resources_discover")
    async def discover(event: Event, ctx: ExtensionContext) -> dict[str, Any]:
        # event.cwd, event.reason: "startup" | "reload"
        REASONS.append(event.reason)
        return {
            "skillPaths": [str(HERE / "skills" / "greeter" / "SKILL.md")],
            "promptPaths": ["prompts/shipit.md"],  # relative paths are taken from the extension's folder
            "themePaths": [str(HERE / "themes" / "dark.json")],
        }
