from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from pi_tui.args import parse_args
from pi_tui.runtime.agent_session import AgentSession
from pi_tui.runtime.factory import create_session

MODEL = "fake-anthropic/claude-fake"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@asynccontextmanager
async def open_session(cwd: Path, *argv: str) -> AsyncIterator[AgentSession]:
    startup = create_session(parse_args(["--model", MODEL, *argv]), cwd)
    try:
        yield startup.session
    finally:
        await startup.session.close()


def user_entry(session: AgentSession, text: str) -> Any:
    """The user-message entry on the current branch whose text is ``text``."""
    from pi_tui.ai.types import message_text

    for entry in session.session_manager.get_branch():
        message = getattr(entry, "message", None)
        if getattr(message, "role", None) == "user" and message_text(message) == text:
            return entry
    raise AssertionError(f"no user message {text!r} on the branch")
