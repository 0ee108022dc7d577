"""Runtime events (beside the agent loop's own; the record lives in `pi_tui.agent.events`) and session
statistics."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

from pi_tui.agent.events import (
    AutoCompactionEnd,
    AutoCompactionStart,
    CheckpointRestore,
    CompactionApplied,
    ErrorEvent,
    ExtensionError,
    ExtensionWarning,
    RuntimeEvent,
    SessionSwitched,
    SessionTreeMoved,
)
from pi_tui.session.entries import SessionEntry, entry_to_line

__all__ = [
    "AutoCompactionEnd",
    "AutoCompactionStart",
    "CheckpointRestore",
    "CompactionApplied",
    "ExtensionError",
    "ExtensionWarning",
    "RuntimeEvent",
    "ErrorEvent",
    "SessionSwitched",
    "SessionTreeMoved",
    "SessionStats",
    "EntryAppended",
]


@dataclass(frozen=True, slots=True)
class EntryAppended(RuntimeEvent):
    """The session appended an entry outside the conversation's flow (a cache refresh's ``usage``)."""

    type: ClassVar[str] = "entry_appended"
    entry: SessionEntry

    def payload(self) -> dict[str, object]:
        entry: object = json.loads(entry_to_line(self.entry))
        return {"entry": entry}


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
    latest_cache_hit: float | None = None
    """The newest assistant message's cache read share of its prompt, in percent (pi's footer ``CH``);
    None before any answer or when the newest answer's prompt counted no tokens."""

    @property
    def total_tokens(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write
