from __future__ import annotations

import openai
import pytest

from pi_tui.testing import FakeLLM, Reply, count_tokens, fake_signature, text, thinking, tool_call

from ._helpers import OPENAI_MODEL, openai_for, user


def _chunks(client: openai.OpenAI, **kwargs: object) -> list[openai.types.chat.ChatCompletionChunk]:
    params = {"model": OPENAI_MODEL, "messages": [user("hi")], "stream": True, **kwargs}
    with client.chat.completions.create(**params) as stream:  # type: ignore[call-overload]
        return list(stream)


def test_chat_stream_with_include_usage_ends_with_a_choiceless_usage_chunk(
    fake_llm: FakeLLM, gpt: openai.OpenAI
) -> None:
    fake_llm.script([Reply("hello there")])
    chunks = _chunks(gpt, stream_options={"include_usage": True})

    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "hello there"
    assert all(c.usage is None for c in chunks[:-1])
    finish = chunks[-2]
    assert finish.choices[0].finish_reason == "stop"
    last = chunks[-1]
    assert last.choices == []
    prompt = count_tokens({"messages": [user("hi")]}, api="openai-chat")
    assert last.usage is not None
    assert (last.usage.prompt_tokens, last.usage.completion_tokens) == (prompt, count_tokens("hello there"))
    assert last.usage.total_tokens == prompt + count_tokens("hello there")
    assert last.usage.prompt_tokens_details.cached_tokens == 0


def test_chat_stream_without_include_usage_has_no_usage_chunk(fake_llm: FakeLLM, gpt: openai.OpenAI) -> None:
    fake_llm.script([Reply("hi")])
    chunks = _chunks(gpt)

    assert chunks[-1].choices[0].finish_reason == "stop"
    assert all(c.usage is None for c in chunks)


def test_interleaved_tool_call_fragments_alternate_indices_and_assemble(
    fake_llm: FakeLLM, gpt: openai.OpenAI
) -> None:
    calls = [tool_call("read", {"path": "first.py"}), tool_call("grep", {"pattern": "needle", "path": "src"})]
    fake_llm.script(
        [Reply(calls, interleave_tool_calls=True, chunk=6), Reply(calls, interleave_tool_calls=True, chunk=6)]
    )
    chunks = _chunks(gpt)
    indices = [tc.index for c in chunks for tc in (c.choices[0].delta.tool_calls or [])]
    with gpt.chat.completions.stream(model=OPENAI_MODEL, messages=[user("hi")]) as stream:
        final = stream.get_final_completion()

    assert indices[:4] == [0, 1, 0, 1]
    message = final.choices[0].message
    assert [(c.id, c.function.name) for c in message.tool_calls] == [
        ("call_fake_0003", "read"),
        ("call_fake_0004", "grep"),
    ]
    assert message.tool_calls[1].function.arguments == '{"pattern":"needle","path":"src"}'
    assert final.choices[0].finish_reason == "tool_calls"


def test_chat_thinking_goes_to_the_configured_reasoning_field(fake_llm: FakeLLM, gpt: openai.OpenAI) -> None:
    fake_llm.script([Reply([thinking("ponder"), text("answer")])])
    chunks = _chunks(gpt)

    reasoning = [getattr(c.choices[0].delta, "reasoning_content", None) for c in chunks]
    assert "ponder" in reasoning
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_chat_thinking_is_omitted_without_a_reasoning_field() -> None:
    fake = FakeLLM(reasoning_field=None)
    fake.script([Reply([thinking("ponder"), text("answer")])])
    with fake.serve(), openai_for(fake) as client:
        chunks = _chunks(client)

    assert all(getattr(c.choices[0].delta, "reasoning_content", None) is None for c in chunks if c.choices)


def test_non_stream_chat_completion_has_content_tool_calls_and_usage(
    fake_llm: FakeLLM, gpt: openai.OpenAI
) -> None:
    fake_llm.script([Reply([text("Let me check."), tool_call("read", {"path": "x"})])])
    completion = gpt.chat.completions.create(model=OPENAI_MODEL, messages=[user("hi")])

    message = completion.choices[0].message
    assert message.content == "Let me check."
    assert message.tool_calls[0].id == "call_fake_0001"
    assert completion.choices[0].finish_reason == "tool_calls"
    assert completion.usage.prompt_tokens == count_tokens({"messages": [user("hi")]}, api="openai-chat")


@pytest.mark.parametrize(
    ("stop", "finish"), [("max_tokens", "length"), ("refusal", "content_filter"), ("stop_sequence", "stop")]
)
def test_stop_reasons_map_to_finish_reasons(
    fake_llm: FakeLLM, gpt: openai.OpenAI, stop: str, finish: str
) -> None:
    fake_llm.script([Reply("partial", stop_reason=stop)])
    chunks = _chunks(gpt)

    assert chunks[-1].choices[0].finish_reason == finish
    assert fake_llm.requests[0].response.stop_reason == finish


def test_responses_stream_assembles_reasoning_text_and_function_call(
    fake_llm: FakeLLM, gpt: openai.OpenAI
) -> None:
    fake_llm.script([Reply([thinking("plan it"), text("On it."), tool_call("read", {"path": "a.py"})])])
    with gpt.responses.stream(
        model=OPENAI_MODEL, input="hi", include=["reasoning.encrypted_content"]
    ) as stream:
        events = list(stream)
        response = stream.get_final_response()

    types = [e.type for e in events]
    assert types[:2] == ["response.created", "response.in_progress"]
    assert types[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    reasoning, message, call = response.output
    assert reasoning.summary[0].text == "plan it"
    assert reasoning.encrypted_content == fake_signature("plan it")
    assert message.content[0].text == "On it."
    assert (call.call_id, call.name, call.arguments) == ("call_fake_0001", "read", '{"path":"a.py"}')
    assert response.usage.input_tokens == count_tokens({"input": "hi"}, api="openai-responses")
    assert response.usage.output_tokens_details.reasoning_tokens == count_tokens("plan it")


def test_responses_reasoning_has_no_encrypted_content_unless_included(
    fake_llm: FakeLLM, gpt: openai.OpenAI
) -> None:
    fake_llm.script([Reply([thinking("plan it"), text("ok")])])
    response = gpt.responses.create(model=OPENAI_MODEL, input="hi")

    assert response.output[0].encrypted_content is None
    assert response.output_text == "ok"


def test_responses_max_tokens_stop_is_reported_as_incomplete(fake_llm: FakeLLM, gpt: openai.OpenAI) -> None:
    fake_llm.script([Reply("trunc", stop_reason="max_tokens")])
    with gpt.responses.stream(model=OPENAI_MODEL, input="hi") as stream:
        events = list(stream)

    assert events[-1].type == "response.incomplete"
    assert events[-1].response.incomplete_details.reason == "max_output_tokens"


def test_one_script_renders_to_all_three_apis(fake_llm: FakeLLM, claude: object, gpt: openai.OpenAI) -> None:
    import anthropic

    assert isinstance(claude, anthropic.Anthropic)
    fake_llm.script([Reply([text("same"), tool_call("t", {"a": 1})])] * 3)
    message = claude.messages.create(model="claude-sonnet-4-6", max_tokens=50, messages=[user("hi")])
    chat = gpt.chat.completions.create(model=OPENAI_MODEL, messages=[user("hi")])
    response = gpt.responses.create(model=OPENAI_MODEL, input="hi")

    assert (
        message.content[0].text
        == chat.choices[0].message.content
        == response.output[0].content[0].text
        == "same"
    )
    assert message.content[1].input == {"a": 1}
    assert (
        chat.choices[0].message.tool_calls[0].function.arguments == response.output[1].arguments == '{"a":1}'
    )
    assert [r.api for r in fake_llm.requests] == ["anthropic", "openai-chat", "openai-responses"]
