from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_tui.args import parse_args
from pi_tui.runtime.factory import create_session
from pi_tui.testing import FakeLLM, Reply, text, tool_call


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(str(b.get("text") or b.get("content") or "") for b in content if isinstance(b, dict))


@pytest.mark.parametrize("model", ["fake-anthropic/claude-fake", "fake-openai/gpt-fake"])
async def test_a_steer_queued_while_a_tool_call_streams_is_delivered_after_the_tool_ran(
    fake: FakeLLM, tmp_path: Path, model: str
) -> None:
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    fake.script(
        [
            # the arguments arrive in many small pieces, so the steer is queued mid-call
            Reply([tool_call("read", {"path": "notes.txt", "offset": 1, "limit": 50})], chunk=4),
            Reply([text("Read it; switching to the new question.")]),
        ]
    )
    session = create_session(parse_args(["--model", model]), tmp_path).session
    steered_during: list[str] = []

    def steer_mid_call(event: Any) -> None:
        delta = getattr(event, "assistant_message_event", None)
        if getattr(delta, "type", None) == "toolcall_delta" and not steered_during:
            steered_during.append(delta.delta)
            session.steer("actually, what is 2 + 2?")

    session.subscribe(steer_mid_call)
    await session.prompt("read my notes")
    await session.close()

    assert steered_during  # the steer was queued before the call's arguments were complete
    assert fake.violations == []
    fake.assert_script_consumed()
    results = [m for m in session.agent.messages if m.role == "toolResult"]
    assert len(results) == 1 and not results[0].is_error
    assert "remember the milk" in results[0].content[0].text
    # the second request carries the call, its real result, and then the steer
    sent = fake.requests[1].body["messages"]
    tail = [_texts(m["content"]) for m in sent[-2:]] if model.startswith("fake-openai") else None
    if tail is not None:
        assert sent[-2]["role"] == "tool" and "remember the milk" in tail[0]
        assert sent[-1]["role"] == "user" and tail[1] == "actually, what is 2 + 2?"
    else:
        blocks = [block for message in sent[-2:] for block in message["content"]]
        kinds = [block["type"] for block in blocks]
        assert kinds[-2:] == ["tool_result", "text"]
        assert "remember the milk" in _texts(blocks[-2]["content"])
        assert blocks[-1]["text"] == "actually, what is 2 + 2?"
