"""What a server offers and what a call costs, as the ``mcp`` extension keeps them: plain records, no SDK."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["McpCallError", "PromptInfo", "ToolInfo", "tokens_of"]


class McpCallError(RuntimeError):
    """A server could not be started or a call failed; the message names the server."""


def tokens_of(value: object) -> int:
    """An estimate of what ``value`` costs as prompt text: its compact JSON length / 4."""
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return (len(text) + 3) // 4


@dataclass(frozen=True)
class ToolInfo:
    """A tool a server offers, as ``tools/list`` describes it."""

    server: str
    name: str
    description: str
    input_schema: dict[str, Any]

    def definition(self) -> dict[str, Any]:
        """The tool as a model would see it direct: name, description, JSON schema."""
        return {"name": self.name, "description": self.description, "parameters": self.input_schema}

    @property
    def tokens(self) -> int:
        """What this tool's definition costs in every request when exposed direct."""
        return tokens_of(self.definition())


@dataclass(frozen=True)
class PromptInfo:
    """A prompt a server offers (``prompts/list``): its name, description and argument names."""

    server: str
    name: str
    description: str
    arguments: tuple[tuple[str, bool], ...]  # (name, required)
