from __future__ import annotations

import anthropic
import openai
import pytest

from pi_tui.testing import FakeLLM, Fault, Reply, text, tool_call

from ._helpers import ANTHROPIC_MODEL, API_KEY, OPENAI_MODEL, user


async def test_async_anthropic_client_streams_a_scripted_tool_call(fake_llm: FakeLLM) -> None:
    fake_llm.script([Reply([text("checking"), tool_call("read", {"path": "a.py"})])])
    assert fake_llm.server is not None
    async with anthropic.AsyncAnthropic(
        api_key=API_KEY,
        base_url=fake_llm.server.anthropic_base_url,
        max_retries=0,
        _strict_response_validation=True,
    ) as client:
        async with client.messages.stream(
            model=ANTHROPIC_MODEL, max_tokens=100, messages=[user("hi")]
        ) as stream:  # type: ignore[list-item]
            message = await stream.get_final_message()

    assert [b.type for b in message.content] == ["text", "tool_use"]
    assert message.content[1].input == {"path": "a.py"}


async def test_async_openai_client_sees_a_dropped_stream_as_a_connection_error(fake_llm: FakeLLM) -> None:
    fake_llm.script([Fault("drop", after_frames=2)])
    assert fake_llm.server is not None
    async with openai.AsyncOpenAI(
        api_key=API_KEY,
        base_url=fake_llm.server.openai_base_url,
        max_retries=0,
        _strict_response_validation=True,
    ) as client:
        with pytest.raises(openai.APIConnectionError):
            stream = await client.chat.completions.create(
                model=OPENAI_MODEL, messages=[user("hi")], stream=True
            )  # type: ignore[list-item]
            async for _ in stream:
                pass
