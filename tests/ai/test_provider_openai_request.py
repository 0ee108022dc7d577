from __future__ import annotations

import json
from typing import Any

import pytest

from pi_tui.ai.providers import openai_completions, openai_responses
from pi_tui.ai.providers._common import IncompleteStreamError, MessageBuilder
from pi_tui.ai.providers._history import short_hash
from pi_tui.ai.providers.openai_completions import normalize_usage
from pi_tui.ai.stream import LlmRequest, StreamOptions
from pi_tui.ai.types import (
    AssistantMessage,
    ImageContent,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)

CHAT = Model(
    id="gpt-5",
    api="openai-completions",
    provider="openai",
    base_url="https://api.openai.com/v1",
    reasoning=True,
    input=["text", "image"],
)
RESP = CHAT.model_copy(update={"api": "openai-responses"})
TOOLS = [ToolDefinition(name="read", description="Read", parameters={"type": "object", "properties": {}})]


def _assistant(model: Model, *content: Any, stop: str = "toolUse") -> AssistantMessage:
    return AssistantMessage(
        content=list(content), api=model.api, provider=model.provider, model=model.id, stop_reason=stop
    )


def _history(model: Model) -> list[Any]:
    return [
        UserMessage(content="read a and b"),
        _assistant(
            model,
            ThinkingContent(thinking="plan", thinking_signature="reasoning_content"),
            TextContent(text="Reading."),
            ToolCall(id="call_1", name="read", arguments={"path": "a"}),
            ToolCall(id="call_2", name="read", arguments={"path": "b"}),
        ),
        ToolResultMessage(
            tool_call_id="call_1",
            tool_name="read",
            content=[TextContent(text="A"), ImageContent(data="QUJD", mime_type="image/png")],
        ),
        ToolResultMessage(tool_call_id="call_2", tool_name="read", content=[]),
        UserMessage(content="thanks"),
    ]


def test_chat_request_sends_a_cache_key_only_where_pi_does() -> None:
    local = CHAT.model_copy(update={"base_url": "http://127.0.0.1:8080/v1"})
    request = LlmRequest("sys", [UserMessage(content="hi")])
    body = openai_completions.build_request(local, request, StreamOptions(session_id="s"))
    assert "prompt_cache_key" not in body
    long = StreamOptions(session_id="s" * 80, cache_retention="long")
    body = openai_completions.build_request(local, request, long)
    assert (body["prompt_cache_key"], body["prompt_cache_retention"]) == ("s" * 64, "24h")
    body = openai_completions.build_request(
        CHAT, request, StreamOptions(session_id="s", cache_retention="none")
    )
    assert "prompt_cache_key" not in body


def test_chat_request_uses_developer_role_tool_messages_and_json_string_arguments() -> None:
    options = StreamOptions(session_id="sess-1", thinking="high", max_tokens=1000)
    body = openai_completions.build_request(CHAT, LlmRequest("sys", _history(CHAT), TOOLS), options)
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["developer", "user", "assistant", "tool", "tool", "user", "user"]
    assistant = body["messages"][2]
    assert assistant["content"] == "Reading."
    assert assistant["reasoning_content"] == "plan"
    # Compact, as pi's JSON.stringify writes them (the bytes are part of the cached prefix).
    assert [c["function"]["arguments"] for c in assistant["tool_calls"]] == ['{"path":"a"}', '{"path":"b"}']
    assert [json.loads(c["function"]["arguments"]) for c in assistant["tool_calls"]] == [
        {"path": "a"},
        {"path": "b"},
    ]
    assert body["messages"][3] == {"role": "tool", "tool_call_id": "call_1", "content": "A"}
    assert body["messages"][4]["content"] == "(no tool output)"  # pi's placeholder
    images = body["messages"][5]["content"]
    assert images[1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}}
    assert body["stream_options"] == {"include_usage": True}
    assert body["prompt_cache_key"] == "sess-1"  # OpenAI's own host
    assert "prompt_cache_retention" not in body
    assert body["max_completion_tokens"] == 1000
    assert body["reasoning_effort"] == "high"
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": "read",
            "description": "Read",
            "parameters": {"type": "object", "properties": {}},
        },
    }


def test_chat_compat_flags_switch_role_token_field_and_tool_result_name() -> None:
    local = CHAT.model_copy(
        update={
            "base_url": "http://127.0.0.1:8080/v1",
            "compat": {
                "supportsDeveloperRole": False,
                "maxTokensField": "max_tokens",
                "requiresToolResultName": True,
                "requiresAssistantAfterToolResult": True,
                "thinkingFormat": "qwen",
            },
        }
    )
    body = openai_completions.build_request(
        local, LlmRequest("sys", _history(local)), StreamOptions(max_tokens=50)
    )
    assert body["messages"][0]["role"] == "system"
    assert body["max_tokens"] == 50 and "max_completion_tokens" not in body
    assert body["messages"][3]["name"] == "read"
    assert [m["role"] for m in body["messages"]][-4:] == ["tool", "assistant", "user", "user"]
    assert body["enable_thinking"] is False
    assert body["store"] is False  # pi 0.87 sends it to every server it does not know to reject it


def test_chat_usage_excludes_cached_tokens_from_input() -> None:
    usage = {"prompt_tokens": 2000, "completion_tokens": 50, "prompt_tokens_details": {"cached_tokens": 1536}}
    assert normalize_usage(usage) == {
        "input": 464,
        "output": 50,
        "cache_read": 1536,
        "cache_write": 0,
        "reasoning": 0,
    }
    assert normalize_usage(
        {"prompt_tokens": 10, "completion_tokens": 2, "completion_tokens_details": {"reasoning_tokens": 1}}
    ) == {"input": 10, "output": 2, "cache_read": 0, "cache_write": 0, "reasoning": 1}


def test_chat_replay_of_another_models_history_turns_responses_ids_into_short_call_ids() -> None:
    other = Model(id="x", api="openai-responses", provider="openai")
    long_id = "call_abc|fc_" + "9" * 300
    messages = [
        UserMessage(content="q"),
        _assistant(other, ToolCall(id=long_id, name="read")),
        ToolResultMessage(tool_call_id=long_id, tool_name="read", content=[TextContent(text="r")]),
    ]
    body = openai_completions.build_request(CHAT, LlmRequest("", messages), StreamOptions())
    call_id = body["messages"][1]["tool_calls"][0]["id"]
    assert (
        call_id == f"call_abc_{short_hash(long_id)[:8]}"
    )  # as pi shortens it: call part + hash of the whole
    assert body["messages"][2]["tool_call_id"] == call_id
    short = "call_1|fc_2"
    messages = [messages[0], _assistant(other, ToolCall(id=short, name="read")), messages[2]]
    messages[2] = messages[2].model_copy(update={"tool_call_id": short})
    body = openai_completions.build_request(CHAT, LlmRequest("", messages), StreamOptions())
    assert body["messages"][1]["tool_calls"][0]["id"] == body["messages"][2]["tool_call_id"] == "call_1_fc_2"


def test_responses_input_items_pair_calls_with_outputs() -> None:
    options = StreamOptions(session_id="sess-9", thinking="medium")
    body = openai_responses.build_request(RESP, LlmRequest("sys", _history(RESP), TOOLS), options)
    types = [item.get("type", "message") for item in body["input"]]
    assert types == [
        "message",
        "message",
        "message",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
        "message",
    ]
    assert body["input"][0] == {"role": "developer", "content": "sys"}
    assert body["input"][1] == {"role": "user", "content": [{"type": "input_text", "text": "read a and b"}]}
    assert body["input"][2]["id"] == "msg_pi_1"  # a text without an item id gets pi's positional one
    image = {"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,QUJD"}
    assert body["input"][5]["output"] == [{"type": "input_text", "text": "A"}, image]  # images go along
    assert body["input"][6]["output"] == "(no tool output)"
    calls = [i for i in body["input"] if i.get("type") == "function_call"]
    outputs = [i for i in body["input"] if i.get("type") == "function_call_output"]
    assert [c["call_id"] for c in calls] == [o["call_id"] for o in outputs] == ["call_1", "call_2"]
    assert all("id" not in c for c in calls)
    assert body["store"] is False
    assert body["prompt_cache_key"] == "sess-9"
    assert body["reasoning"] == {"effort": "medium", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]
    assert "strict" not in body["tools"][0]  # pi sends it only when the model's compat supports it


def test_responses_sends_strict_tools_where_the_model_supports_strict_mode() -> None:
    """OpenAI's own models (compat supportsStrictMode): a tool asking for constrained sampling goes with
    ``strict: true`` and pi's strict schema, the others with ``strict: false``, as pi 0.87.1 sends them."""
    constrained = ToolDefinition(
        name="read",
        description="Read",
        parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        constrainedSampling={"type": "json_schema", "strict": "prefer"},
    )
    plain = ToolDefinition(name="ls", description="List", parameters={"type": "object", "properties": {}})
    request = LlmRequest("sys", [UserMessage(content="hi")], tools=[constrained, plain])
    model = Model(
        id="gpt-5.5", api="openai-responses", provider="openai", compat={"supportsStrictMode": True}
    )
    read, ls = openai_responses.build_request(model, request, StreamOptions(api_key="k"))["tools"]
    assert read["strict"] is True
    assert read["parameters"] == {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
        "additionalProperties": False,
    }
    assert ls["strict"] is False and ls["parameters"] == plain.parameters
    no_strict = model.model_copy(update={"compat": None})
    tools = openai_responses.build_request(no_strict, request, StreamOptions(api_key="k"))["tools"]
    assert "strict" not in tools[0] and tools[0]["parameters"] == constrained.parameters


def test_responses_replays_reasoning_items_with_their_item_ids() -> None:
    reasoning = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "plan"}],
        "encrypted_content": "enc",
    }
    messages = [
        UserMessage(content="q"),
        _assistant(
            RESP,
            ThinkingContent(thinking="plan", thinking_signature=json.dumps(reasoning)),
            TextContent(text="ok", text_signature="msg_1"),
            ToolCall(id="call_7|fc_7", name="read"),
        ),
        ToolResultMessage(tool_call_id="call_7|fc_7", tool_name="read", content=[TextContent(text="r")]),
    ]
    body = openai_responses.build_request(RESP, LlmRequest("", messages), StreamOptions())
    assert body["input"][1] == reasoning
    assert body["input"][2]["id"] == "msg_1"
    assert body["input"][3]["id"] == "fc_7" and body["input"][3]["call_id"] == "call_7"
    assert body["input"][4]["call_id"] == "call_7"
    assert body["reasoning"] == {"effort": "none"}  # thinking off, as pi asks for it


def _chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "delta": delta or {}, "finish_reason": finish, **extra}
    return {"choices": [choice], "usage": None}


def _read(chunks: list[dict[str, Any]]) -> tuple[AssistantMessage, str]:
    out = MessageBuilder(CHAT)
    reader = openai_completions._Reader(out)
    for chunk in chunks:
        reader.handle(chunk)
    stop, _ = reader.result()
    return out.message, stop


def test_chat_reader_follows_servers_that_omit_tool_call_indices() -> None:
    message, stop = _read(
        [
            _chunk(
                {"tool_calls": [{"id": "call_a", "function": {"name": "read", "arguments": '{"path": '}}]}
            ),
            _chunk({"tool_calls": [{"function": {"arguments": '"a.txt"}'}}]}),
            _chunk({"tool_calls": [{"id": "call_b", "function": {"name": "ls", "arguments": "{}"}}]}),
            _chunk(finish="tool_calls"),
        ]
    )
    assert stop == "toolUse"
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls()] == [
        ("call_a", "read", {"path": "a.txt"}),
        ("call_b", "ls", {}),
    ]


def test_chat_reader_takes_usage_from_the_choice_when_the_chunk_has_none() -> None:
    usage = {"prompt_tokens": 100, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 64}}
    message, stop = _read([_chunk({"content": "hi"}), _chunk(finish="stop", usage=usage)])
    assert stop == "stop"
    assert (message.usage.input, message.usage.cache_read, message.usage.output) == (36, 64, 5)


def test_chat_reader_without_a_finish_reason_is_incomplete() -> None:
    with pytest.raises(IncompleteStreamError):
        _read([_chunk({"content": "cut"})])


def test_responses_replay_of_other_models_ids_and_text_signatures_follows_pi() -> None:
    copilot = Model(id="gpt-5", api="openai-responses", provider="github-copilot")
    foreign = "call_x|item+/=="
    messages = [
        UserMessage(content="q"),
        _assistant(
            copilot,
            TextContent(text="ok", text_signature='{"v":1,"id":"msg_9","phase":"commentary"}'),
            ToolCall(id=foreign, name="read"),
        ),
        ToolResultMessage(tool_call_id=foreign, tool_name="read", content=[TextContent(text="r")]),
    ]
    body = openai_responses.build_request(RESP, LlmRequest("", messages), StreamOptions())
    text, call, output = body["input"][1:]
    assert text["id"] == "msg_pi_1" and "phase" not in text  # another model's text loses its signature
    assert call["call_id"] == output["call_id"] == "call_x"
    assert call["id"] == f"fc_{short_hash('item+/==')}"  # another provider's item id, hashed as pi does
    assert short_hash("rs_123|fc_abc") == "356w3smnpfs3"  # the value pi's shortHash gives
    own = [UserMessage(content="q"), _assistant(RESP, messages[1].content[0], stop="stop")]
    body = openai_responses.build_request(RESP, LlmRequest("", own), StreamOptions())
    assert (body["input"][1]["id"], body["input"][1]["phase"]) == ("msg_9", "commentary")


def test_responses_text_keeps_its_item_id_and_phase_as_pi_stores_them_and_sends_them_back() -> None:
    out = MessageBuilder(RESP)
    reader = openai_responses._Reader(out)
    item = {"type": "message", "id": "msg_5", "role": "assistant", "content": []}
    reader.handle({"type": "response.output_item.added", "output_index": 0, "item": item})
    reader.handle({"type": "response.output_text.delta", "output_index": 0, "delta": "Checking."})
    done = {**item, "phase": "commentary", "content": [{"type": "output_text", "text": "Checking."}]}
    reader.handle({"type": "response.output_item.done", "output_index": 0, "item": done})
    reader.handle({"type": "response.completed", "response": {"status": "completed"}})
    [block] = out.message.content
    assert isinstance(block, TextContent)
    assert block.text_signature == '{"v":1,"id":"msg_5","phase":"commentary"}'
    answer = out.message.model_copy(update={"stop_reason": "stop"})
    body = openai_responses.build_request(
        RESP, LlmRequest("", [UserMessage(content="q"), answer]), StreamOptions()
    )
    assert (body["input"][1]["id"], body["input"][1]["phase"]) == ("msg_5", "commentary")


@pytest.mark.parametrize(
    ("provider", "level_map", "expected"),
    [
        ("openai", None, {"effort": "none"}),  # without it OpenAI's reasoning models think at medium
        ("openai", {"off": "minimal"}, {"effort": "minimal"}),
        ("openai", {"off": None}, None),  # the model cannot turn reasoning off: nothing is sent
        ("github-copilot", None, None),
    ],
)
def test_responses_thinking_off_on_a_reasoning_model_asks_for_no_reasoning_as_pi(
    provider: str, level_map: dict[str, str | None] | None, expected: dict[str, str] | None
) -> None:
    """pi 0.87.1, side by side on gpt-5.5 with ``--thinking off``: ``reasoning: {effort: "none"}`` (or the
    model's ``thinkingLevelMap`` ``off`` value), no summary and no encrypted-content include."""
    model = RESP.model_copy(update={"provider": provider, "thinking_level_map": level_map})
    request = LlmRequest("sys", [UserMessage(content="hi")])
    body = openai_responses.build_request(model, request, StreamOptions(api_key="k", thinking="off"))
    assert body.get("reasoning") == expected
    assert "include" not in body
    plain = RESP.model_copy(update={"reasoning": False})
    assert "reasoning" not in openai_responses.build_request(plain, request, StreamOptions(api_key="k"))


def test_responses_reasoning_item_is_stored_as_compact_json_as_pi_stores_it() -> None:
    """pi keeps the finished reasoning item as ``JSON.stringify`` writes it (no spaces); side by side its
    session and ``message_end`` carry ``{"type":"reasoning","id":…}``, where pi-tui's had ``{"type": …}``."""
    out = MessageBuilder(RESP)
    reader = openai_responses._Reader(out)
    item = {"type": "reasoning", "id": "rs_1", "summary": []}
    reader.handle({"type": "response.output_item.added", "output_index": 0, "item": item})
    summary = [{"type": "summary_text", "text": "plan"}]
    done = {**item, "summary": summary, "encrypted_content": "enc"}
    reader.handle({"type": "response.output_item.done", "output_index": 0, "item": done})
    reader.handle({"type": "response.completed", "response": {"status": "completed"}})
    [block] = out.message.content
    assert isinstance(block, ThinkingContent)
    assert block.thinking_signature == (
        '{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"plan"}],"encrypted_content":"enc"}'
    )
