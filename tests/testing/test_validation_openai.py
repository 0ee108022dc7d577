from __future__ import annotations

from typing import Any

import httpx2
import openai
import pytest

from pi_tui.testing import FakeLLM, Reply

from ._helpers import API_KEY, OPENAI_MODEL, openai_for, user

TOOL = {"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}


def _call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "read", "arguments": "{}"}}


def _assistant_calls(*ids: str) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [_call(i) for i in ids]}


def _tool(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "result"}


CHAT_CASES: list[tuple[str, dict[str, Any], str, str, str | None]] = [
    (
        "missing_tool_response",
        {"messages": [user("hi"), _assistant_calls("call_a", "call_b"), _tool("call_a"), user("next")]},
        "openai.tool_response_missing",
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_b",
        None,
    ),
    (
        "missing_tool_response_at_end",
        {"messages": [user("hi"), _assistant_calls("call_a")]},
        "openai.tool_response_missing",
        "The following tool_call_ids did not have response messages: call_a",
        None,
    ),
    (
        "orphan_tool_message",
        {"messages": [user("hi"), _tool("call_x")]},
        "openai.tool_message_orphan",
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
        None,
    ),
    (
        "wrong_tool_call_id",
        {"messages": [user("hi"), _assistant_calls("call_a"), _tool("call_a"), _tool("call_zz")]},
        "openai.tool_message_orphan",
        "must be a response to a preceeding message with 'tool_calls'",
        None,
    ),
    (
        "empty_assistant",
        {"messages": [user("hi"), {"role": "assistant", "content": None}, user("again")]},
        "openai.assistant_empty",
        "Invalid value for 'content': expected a string, got null.",
        None,
    ),
    (
        "stream_options_without_stream",
        {"stream_options": {"include_usage": True}},
        "openai.stream_options",
        "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
        "invalid_value",
    ),
    (
        "unknown_role",
        {"messages": [{"role": "robot", "content": "beep"}]},
        "openai.invalid_role",
        "Invalid value: 'robot'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.",
        "invalid_value",
    ),
    (
        "tool_name",
        {"tools": [{"type": "function", "function": {"name": "read file", "parameters": {}}}]},
        "openai.tool_name",
        "Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
        "invalid_value",
    ),
]


@pytest.mark.parametrize(
    ("overrides", "rule", "message", "code"), [c[1:] for c in CHAT_CASES], ids=[c[0] for c in CHAT_CASES]
)
def test_chat_rule_violation_is_rejected_with_the_real_text_and_recorded(
    fake_llm: FakeLLM,
    gpt: openai.OpenAI,
    overrides: dict[str, Any],
    rule: str,
    message: str,
    code: str | None,
) -> None:
    fake_llm.script([Reply("never sent")])
    body: dict[str, Any] = {"messages": [user("hi")], **overrides}
    rest = {k: v for k, v in body.items() if k != "messages"}

    with pytest.raises(openai.BadRequestError) as caught:
        gpt.chat.completions.create(model=OPENAI_MODEL, messages=body["messages"], extra_body=rest)

    assert message in caught.value.message
    assert caught.value.type == "invalid_request_error"
    assert caught.value.code == code
    assert fake_llm.violations[0].rule == rule
    assert fake_llm.remaining_turns == 1


def test_chat_tool_loop_with_every_call_answered_is_accepted(fake_llm: FakeLLM, gpt: openai.OpenAI) -> None:
    fake_llm.script([Reply("ok")])
    messages = [
        user("hi"),
        _assistant_calls("call_a", "call_b"),
        _tool("call_b"),
        _tool("call_a"),
        user("thanks"),
    ]
    gpt.chat.completions.create(model=OPENAI_MODEL, messages=messages, tools=[TOOL])  # type: ignore[arg-type]

    assert fake_llm.violations == []


def test_chat_missing_messages_is_a_missing_required_parameter(fake_llm: FakeLLM, raw: httpx2.Client) -> None:
    response = raw.post(
        "/v1/chat/completions", json={"model": OPENAI_MODEL}, headers={"authorization": f"Bearer {API_KEY}"}
    )

    assert response.status_code == 400
    assert response.json()["error"] == {
        "message": "Missing required parameter: 'messages'.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "missing_required_parameter",
    }


def test_chat_prompt_over_the_window_is_context_length_exceeded() -> None:
    fake = FakeLLM(context_window=20)
    messages = [user("word " * 50)]
    with fake.serve(), openai_for(fake) as client:
        with pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(model=OPENAI_MODEL, messages=messages)  # type: ignore[arg-type]

    tokens = fake.count_tokens({"messages": messages}, api="openai-chat")
    assert caught.value.code == "context_length_exceeded"
    assert caught.value.body["message"] == (  # type: ignore[index]
        f"This model's maximum context length is 20 tokens. However, your messages resulted in {tokens} tokens. "
        "Please reduce the length of the messages."
    )


def _fc(call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": "read", "arguments": "{}"}


def _fco(call_id: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": "body"}


RESPONSES_CASES: list[tuple[str, list[dict[str, Any]], str, str]] = [
    (
        "unknown_call_id",
        [user("hi"), _fc("call_a"), _fco("call_a"), _fco("call_b")],
        "responses.call_id_unknown",
        "No tool call found for function call output with call_id call_b.",
    ),
    (
        "output_before_call",
        [user("hi"), _fco("call_a"), _fc("call_a")],
        "responses.call_id_unknown",
        "call_id call_a.",
    ),
    (
        "missing_output",
        [user("hi"), _fc("call_a")],
        "responses.call_output_missing",
        "No tool output found for function call call_a.",
    ),
    ("bad_role", [{"role": "tool", "content": "x"}], "responses.invalid_role", "Invalid value: 'tool'."),
]


@pytest.mark.parametrize(
    ("items", "rule", "message"), [c[1:] for c in RESPONSES_CASES], ids=[c[0] for c in RESPONSES_CASES]
)
def test_responses_rule_violation_is_rejected_with_the_real_text(
    fake_llm: FakeLLM, gpt: openai.OpenAI, items: list[dict[str, Any]], rule: str, message: str
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        gpt.responses.create(model=OPENAI_MODEL, input=items)  # type: ignore[arg-type]

    assert message in caught.value.message
    assert (caught.value.param or "").startswith("input")
    assert fake_llm.violations[0].rule == rule


def test_responses_tool_loop_with_matching_call_ids_is_accepted(
    fake_llm: FakeLLM, gpt: openai.OpenAI
) -> None:
    fake_llm.script([Reply("ok")])
    gpt.responses.create(model=OPENAI_MODEL, input=[user("hi"), _fc("call_a"), _fco("call_a")])  # type: ignore[arg-type]

    assert fake_llm.violations == []


def test_responses_input_over_the_window_is_rejected() -> None:
    fake = FakeLLM(context_window=10)
    with fake.serve(), openai_for(fake) as client:
        with pytest.raises(openai.BadRequestError) as caught:
            client.responses.create(model=OPENAI_MODEL, input="word " * 40)

    assert caught.value.code == "context_length_exceeded"
    assert (
        caught.value.body["message"]
        == "Your input exceeds the context window of this model. Please adjust your input and try again."
    )
    assert fake.violations[0].rule == "responses.context_window"
