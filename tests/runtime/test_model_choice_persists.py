"""A model or thinking level picked in a session that already has a file is written to it at once, as pi
writes it: quitting (or switching sessions) right after the pick must not bring the old model back when
the session is continued."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.testing import FakeLLM, Reply, text

from .helpers import ANTHROPIC, OPENAI_CHAT, open_session


async def test_a_model_picked_after_the_last_answer_is_the_one_the_session_continues_with(
    fake: FakeLLM, project: Path
) -> None:
    fake.script([Reply([text("hello")])])
    async with open_session(["--model", ANTHROPIC], project) as session:
        await session.prompt("hi")
        provider, model_id = OPENAI_CHAT.split("/")
        other = session.registry.find(provider, model_id)
        assert other is not None
        session.set_model(other)
        session.set_thinking_level("high")
        path = session.session_manager.path
    assert path is not None
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(e["type"], e.get("modelId"), e.get("thinkingLevel")) for e in entries[-2:]] == [
        ("model_change", model_id, None),
        ("thinking_level_change", None, "high"),
    ]
    async with open_session(["--session", str(path)], project) as again:
        assert (again.model.provider, again.model.id) == (provider, model_id)


async def test_a_model_picked_in_a_new_session_waits_for_its_first_message(
    fake: FakeLLM, project: Path
) -> None:
    async with open_session(["--model", ANTHROPIC], project) as session:
        provider, model_id = OPENAI_CHAT.split("/")
        other = session.registry.find(provider, model_id)
        assert other is not None
        session.set_model(other)
        path = session.session_manager.path
    assert path is None or not path.exists()
