from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai.types import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tests.shared_fixtures import PI_SESSIONS

FIXTURES = PI_SESSIONS
LARGE = FIXTURES / "large-session.jsonl"
BEFORE_COMPACTION = FIXTURES / "before-compaction.jsonl"


def user(text: str, ts: int = 1_700_000_000_000) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=ts)


def assistant(
    text: str = "", *, calls: list[ToolCall] | None = None, ts: int = 1_700_000_000_500
) -> AssistantMessage:
    content: list[Any] = [TextContent(text=text)] if text else []
    content.extend(calls or [])
    return AssistantMessage(
        content=content,
        api="anthropic-messages",
        provider="anthropic",
        model="claude-test",
        stop_reason="toolUse" if calls else "stop",
        timestamp=ts,
    )


def tool_result(call_id: str, text: str, name: str = "read") -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name=name, content=[TextContent(text=text)])


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


class HeldDisk:
    """A disk whose fsync takes until the test calls ``release.set()`` (installed into the session store)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from pi_tui.session import store

        self.release = threading.Event()
        self.synced: list[int] = []
        self._real_fsync = os.fsync
        monkeypatch.setattr(store.os, "fsync", self._fsync)

    def _fsync(self, fd: int) -> None:
        self.release.wait(10)
        self._real_fsync(fd)
        self.synced.append(fd)


__all__ = [
    "HeldDisk",
    "AssistantMessage",
    "FIXTURES",
    "LARGE",
    "BEFORE_COMPACTION",
    "user",
    "assistant",
    "tool_result",
    "read_lines",
    "ToolCall",
]
