"""A session listener that fails (an exception, or a stray CancelledError of its own) is reported and
the conversation goes on: nothing queued is dropped, every message is saved."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai.providers.faux import FauxScript, faux_reply
from pi_tui.ai.types import AssistantMessage
from pi_tui.args import parse_args
from pi_tui.runtime.factory import create_session


@pytest.mark.parametrize("failure", ["exception", "stray cancellation"])
async def test_a_failing_listener_does_not_end_the_conversation(
    failure: str, tmp_path: Path, agent_dir: Path
) -> None:
    script = FauxScript(faux_reply("first"), faux_reply("second"))
    session = create_session(parse_args(["--provider", "faux"]), tmp_path, stream_fn=script.stream).session
    failed: list[str] = []

    async def listener(event: Any) -> None:
        if getattr(event, "type", "") != "message_end" or not isinstance(event.message, AssistantMessage):
            return
        if failed:
            return
        failed.append(event.message.content[0].text)
        session.follow_up("later")
        if failure == "exception":
            raise RuntimeError("listener bug")
        cancelled = asyncio.ensure_future(asyncio.sleep(1))
        cancelled.cancel()
        await cancelled  # CancelledError, though nobody cancelled the prompt's task

    session.subscribe(listener)
    try:
        await session.prompt("go")
    finally:
        await session.close()
    assert failed == ["first"]
    assert len(script.requests) == 2
    path = session.session_manager.path
    assert path is not None
    texts = [json.dumps(json.loads(line).get("message")) for line in Path(path).read_text().splitlines()]
    assert any("second" in t for t in texts) and any("later" in t for t in texts)


async def test_a_stray_cancellation_in_a_listener_of_a_session_event_is_contained(
    tmp_path: Path, agent_dir: Path
) -> None:
    """Events outside a run (compaction, model changes, errors) are dispatched by the session itself."""
    from pi_tui.runtime.events import ErrorEvent

    session = create_session(parse_args(["--provider", "faux"]), tmp_path).session
    seen: list[str] = []

    async def leaky(event: Any) -> None:
        cancelled = asyncio.ensure_future(asyncio.sleep(1))
        cancelled.cancel()
        await cancelled

    session.subscribe(leaky)
    session.subscribe(lambda event: seen.append(event.type))
    try:
        await session.emit(ErrorEvent("x"))
    finally:
        await session.close()
    assert seen == ["error"]  # the next listener still got it


async def test_cancelling_a_prompt_still_cancels_it_through_the_session_listeners(
    tmp_path: Path, agent_dir: Path
) -> None:
    script = FauxScript(faux_reply("first"))
    session = create_session(parse_args(["--provider", "faux"]), tmp_path, stream_fn=script.stream).session
    entered = asyncio.Event()

    async def slow(event: Any) -> None:
        if getattr(event, "type", "") == "message_end" and isinstance(event.message, AssistantMessage):
            entered.set()
            await asyncio.sleep(30)

    session.subscribe(slow)
    task = asyncio.ensure_future(session.prompt("go"))
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await session.close()
