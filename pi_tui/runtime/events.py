"""Runtime events (beside the agent loop's own) and session statistics."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["RuntimeEvent", "SessionStats"]


@dataclass(frozen=True, slots=True)
class RuntimeEvent:
    """Events of the runtime itself (beside the agent's): ``type`` plus a JSON-ready payload."""

    type: str
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, **self.data}


@dataclass(slots=True)
class SessionStats:
    user_messages: int = 0
    assistant_messages: int = 0
    tool_calls: int = 0
    tool_results: int = 0
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write
