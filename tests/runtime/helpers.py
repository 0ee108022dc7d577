from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from pi_tui.args import parse_args
from pi_tui.runtime.agent_session import AgentSession
from pi_tui.runtime.factory import create_session

ANTHROPIC = "fake-anthropic/claude-fake"
OPENAI_CHAT = "fake-openai/gpt-fake"
GEMINI = "fake-google/gemini-3-fake"
BEDROCK = "fake-bedrock/anthropic.claude-sonnet-4-5-fake"  # a Claude 4.x id: Bedrock cache points
MISTRAL = "fake-mistral/mistral-fake"
AZURE = "fake-azure/gpt-azure-fake"
CODEX = "fake-codex/gpt-codex-fake"
MODELS = [ANTHROPIC, OPENAI_CHAT, GEMINI, BEDROCK, MISTRAL, AZURE, CODEX]


def write_settings(agent_dir: Path, settings: dict[str, Any]) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text(json.dumps(settings))


@asynccontextmanager
async def open_session(argv: list[str], cwd: Path) -> AsyncIterator[AgentSession]:
    startup = create_session(parse_args(argv), cwd)
    try:
        yield startup.session
    finally:
        await startup.session.close()


class Events:
    def __init__(self, session: AgentSession) -> None:
        self.all: list[Any] = []
        session.subscribe(self.all.append)

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.all if getattr(e, "type", None) == kind]


def without_cache_control(value: Any) -> Any:
    """A request body part with the cache breakpoints removed (they move to the newest message): Anthropic's
    ``cache_control`` markers and Bedrock's ``cachePoint`` blocks."""
    if isinstance(value, dict):
        return {k: without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [
            without_cache_control(v) for v in value if not (isinstance(v, dict) and set(v) == {"cachePoint"})
        ]
    return value
