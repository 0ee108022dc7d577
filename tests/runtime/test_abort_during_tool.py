from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai.types import UserMessage
from pi_tui.session import SessionManager
from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.agent.helpers import pairing_violations

from .helpers import MODELS, Events, open_session

# Abort as the tool starts, or once the shell is running (it printed something) and must be killed.
WHEN = {"tool_execution_start": "sleep 5", "tool_execution_update": "echo started; sleep 5"}


@pytest.mark.parametrize("trigger", list(WHEN))
@pytest.mark.parametrize("model", MODELS)
async def test_abort_during_a_tool_call_leaves_a_valid_conversation_in_memory_and_on_disk(
    model: str, trigger: str, fake: FakeLLM, project: Path
) -> None:
    fake.script([Reply([tool_call("bash", {"command": WHEN[trigger]})]), Reply([text("fine, stopped")])])
    async with open_session(["--model", model], project) as session:
        events = Events(session)

        aborted_at: list[float] = []

        def abort_when_the_tool_starts(event: Any) -> None:
            if getattr(event, "type", None) == trigger and not aborted_at:
                aborted_at.append(time.monotonic())
                session.abort()

        session.subscribe(abort_when_the_tool_starts)
        await session.prompt("wait a while")
        assert time.monotonic() - aborted_at[0] < 4  # the sleep is not waited out
        [end] = events.of("tool_execution_end")
        assert end.is_error

        await session.prompt("never mind")
        last = session.last_assistant_message()
        path = session.session_manager.path

    assert last is not None and last.stop_reason == "stop"
    fake.assert_script_consumed()
    assert len(fake.requests) == 2 and fake.violations == []
    call_ids = fake.requests[0].response.tool_call_ids
    second = fake.requests[1]
    assert [r.tool_call_id for r in second.tool_results()] == call_ids
    assert second.last_user_text() == "never mind"

    assert path is not None and path.exists()
    reopened = SessionManager.open(path)
    try:
        assert reopened.load_report.has_problems is False
        messages = reopened.build_context().messages
    finally:
        reopened.close()
    assert [m.role for m in messages] == ["user", "assistant", "toolResult", "user", "assistant"]
    # the context a next prompt would be sent with
    assert pairing_violations([*messages, UserMessage(content="go on")]) == []
