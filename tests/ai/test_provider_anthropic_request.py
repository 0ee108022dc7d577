from __future__ import annotations

from typing import Any

import pytest

from pi_tui.ai.providers.anthropic import build_request, map_stop_reason, uses_adaptive_thinking
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

MODEL = Model(
    id="claude-sonnet-4-5",
    api="anthropic-messages",
    provider="anthropic",
    base_url="https://api.anthropic.com",
    reasoning=True,
    input=["text", "image"],
    max_tokens=64_000,
)
TOOLS = [
    ToolDefinition(name="read", description="Read a file", parameters={"type": "object", "properties": {}})
]


def _assistant(*content: Any, stop: str = "toolUse") -> AssistantMessage:
    return AssistantMessage(
        content=list(content), api=MODEL.api, provider=MODEL.provider, model=MODEL.id, stop_reason=stop
    )


def _markers(body: dict[str, Any]) -> list[tuple[str, dict[str, str]]]:
    found = []
    for block in body.get("system", []):
        if "cache_control" in block:
            found.append(("system", block["cache_control"]))
    for tool in body.get("tools", []):
        if "cache_control" in tool:
            found.append(("tool", tool["cache_control"]))
    for i, message in enumerate(body["messages"]):
        if isinstance(message["content"], str):
            continue
        for j, block in enumerate(message["content"]):
            if "cache_control" in block:
                found.append((f"messages.{i}.{j}", block["cache_control"]))
    return found


def _tool_turn() -> list[Any]:
    return [
        UserMessage(content="read both"),
        _assistant(
            ThinkingContent(thinking="plan", thinking_signature="sig1"),
            ToolCall(id="toolu_1", name="read", arguments={"path": "a"}),
            ToolCall(id="toolu_2", name="read", arguments={"path": "b"}),
        ),
        ToolResultMessage(tool_call_id="toolu_1", tool_name="read", content=[TextContent(text="A")]),
        ToolResultMessage(
            tool_call_id="toolu_2", tool_name="read", content=[TextContent(text="B")], is_error=True
        ),
    ]


def test_system_and_last_cached_block_carry_the_only_markers() -> None:
    body = build_request(MODEL, LlmRequest("You are helpful.", _tool_turn(), TOOLS), StreamOptions())
    assert _markers(body) == [
        ("system", {"type": "ephemeral"}),
        ("tool", {"type": "ephemeral"}),
        ("messages.2.1", {"type": "ephemeral"}),
    ]
    assert body["system"] == [
        {"type": "text", "text": "You are helpful.", "cache_control": {"type": "ephemeral"}}
    ]


def test_the_last_tool_carries_a_marker_as_pi_puts_it_unless_compat_refuses() -> None:
    two = [*TOOLS, ToolDefinition(name="ls", description="List", parameters={"type": "object"})]
    body = build_request(MODEL, LlmRequest("s", [UserMessage(content="q")], two), StreamOptions())
    assert "cache_control" not in body["tools"][0]
    assert body["tools"][1]["cache_control"] == {"type": "ephemeral"}
    long = build_request(
        MODEL, LlmRequest("s", [UserMessage(content="q")], two), StreamOptions(cache_retention="long")
    )
    assert long["tools"][1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    off = MODEL.model_copy(update={"compat": {"supportsCacheControlOnTools": False}})
    body = build_request(off, LlmRequest("s", [UserMessage(content="q")], two), StreamOptions())
    assert all("cache_control" not in tool for tool in body["tools"])
    body = build_request(
        MODEL, LlmRequest("s", [UserMessage(content="q")], two), StreamOptions(cache_retention="none")
    )
    assert all("cache_control" not in tool for tool in body["tools"])


def test_consecutive_tool_results_merge_into_one_user_message() -> None:
    body = build_request(
        MODEL, LlmRequest("s", [*_tool_turn(), UserMessage(content="and now?")]), StreamOptions()
    )
    results = body["messages"][2]
    assert results["role"] == "user"
    assert [b["type"] for b in results["content"]] == ["tool_result", "tool_result"]
    assert results["content"][1]["is_error"] is True
    assert results["content"][0]["is_error"] is False  # pi always sends the flag
    # The next prompt is its own user message, as pi sends it (the API joins neighbours itself); a
    # plain-string prompt stays a string, and the last one carries the marker as pi's one text block.
    assert body["messages"][3] == {
        "role": "user",
        "content": [{"type": "text", "text": "and now?", "cache_control": {"type": "ephemeral"}}],
    }
    assert len(body["messages"]) == 4


def test_neighbouring_user_messages_stay_apart_as_pi_sends_them() -> None:
    summary = UserMessage(content="The following is a summary of a branch")
    body = build_request(MODEL, LlmRequest("s", [summary, UserMessage(content="next")]), StreamOptions())
    assert [m["role"] for m in body["messages"]] == ["user", "user"]
    assert body["messages"][0]["content"] == summary.content
    assert body["messages"][1]["content"][0]["text"] == "next"


def test_cache_boundary_moves_the_marker_to_the_end_of_the_cached_region() -> None:
    messages = [*_tool_turn(), _assistant(TextContent(text="done"), stop="stop"), UserMessage(content="tail")]
    body = build_request(MODEL, LlmRequest("s", messages, cache_boundary=4), StreamOptions())
    assert [m for m, _ in _markers(body)] == ["system", "messages.2.1"]
    body = build_request(MODEL, LlmRequest("s", messages, cache_boundary=5), StreamOptions())
    assert [m for m, _ in _markers(body)] == ["system", "messages.3.0"]
    body = build_request(MODEL, LlmRequest("s", messages, cache_boundary=0), StreamOptions())
    assert [m for m, _ in _markers(body)] == ["system"]


def test_retention_none_places_no_markers_and_long_adds_a_one_hour_ttl_where_compat_allows() -> None:
    request = LlmRequest("s", _tool_turn())
    assert _markers(build_request(MODEL, request, StreamOptions(cache_retention="none"))) == []
    long = _markers(build_request(MODEL, request, StreamOptions(cache_retention="long")))
    assert {m["ttl"] for _, m in long} == {"1h"}
    # pi 0.87.1: the model's compat decides (a proxy in front of Claude keeps the TTL), not the host
    proxy = MODEL.model_copy(update={"base_url": "http://127.0.0.1:9"})
    assert {
        m["ttl"] for _, m in _markers(build_request(proxy, request, StreamOptions(cache_retention="long")))
    } == {"1h"}
    no_long = MODEL.model_copy(update={"compat": {"supportsLongCacheRetention": False}})
    assert all(
        "ttl" not in m
        for _, m in _markers(build_request(no_long, request, StreamOptions(cache_retention="long")))
    )


def test_pi_cache_retention_long_makes_long_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    assert StreamOptions().cache_retention == "short"
    monkeypatch.setenv("PI_CACHE_RETENTION", "long")
    assert StreamOptions().cache_retention == "long"


def test_replay_keeps_signed_thinking_redacted_thinking_and_downgrades_unsigned_thinking() -> None:
    messages = [
        UserMessage(content="q"),
        _assistant(
            ThinkingContent(thinking="signed", thinking_signature="sig"),
            ThinkingContent(thinking="[Reasoning redacted]", thinking_signature="opaque", redacted=True),
            ThinkingContent(thinking="no signature"),
            TextContent(text="   "),
            TextContent(text="answer"),
            stop="stop",
        ),
        UserMessage(content=[TextContent(text=""), TextContent(text="next")]),
    ]
    body = build_request(MODEL, LlmRequest("s", messages), StreamOptions())
    assert body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "signed", "signature": "sig"},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "text", "text": "no signature"},
        {"type": "text", "text": "answer"},
    ]
    assert body["messages"][2]["content"] == [
        {"type": "text", "text": "next", "cache_control": {"type": "ephemeral"}}
    ]


def test_tool_call_ids_are_sanitised_the_same_way_in_use_and_result() -> None:
    weird = "call_abc|fc_" + "z" * 300
    messages = [
        UserMessage(content="q"),
        _assistant(ToolCall(id=weird, name="read", arguments={})),
        ToolResultMessage(tool_call_id=weird, tool_name="read", content=[TextContent(text="ok")]),
    ]
    body = build_request(MODEL, LlmRequest("s", messages), StreamOptions())
    use_id = body["messages"][1]["content"][0]["id"]
    assert body["messages"][2]["content"][0]["tool_use_id"] == use_id
    assert len(use_id) <= 64 and "|" not in use_id


def test_images_become_base64_blocks_and_are_omitted_for_text_only_models() -> None:
    messages = [
        UserMessage(content=[TextContent(text="see"), ImageContent(data="QUJD", mime_type="image/png")])
    ]
    body = build_request(MODEL, LlmRequest("s", messages), StreamOptions())
    assert body["messages"][0]["content"][1]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": "QUJD",
    }
    text_only = MODEL.model_copy(update={"input": ["text"]})
    body = build_request(text_only, LlmRequest("s", messages), StreamOptions())
    assert body["messages"][0]["content"][1]["type"] == "text"


@pytest.mark.parametrize(
    ("level", "budget", "max_tokens"),
    [("minimal", 1024, 33_024), ("low", 2048, 34_048), ("medium", 8192, 40_192), ("high", 16384, 48_384)],
)
def test_budget_thinking_levels_add_the_budget_to_max_tokens(
    level: str, budget: int, max_tokens: int
) -> None:
    # a requested cap of 32,000 is widened by the budget, as pi widens it
    options = StreamOptions(thinking=level, temperature=0.2, max_tokens=32_000)  # type: ignore[arg-type]
    body = build_request(MODEL, LlmRequest("s", [UserMessage(content="q")]), options)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": budget, "display": "summarized"}
    assert body["max_tokens"] == max_tokens
    # without one the cap is the model's maximum, the budget inside it
    body = build_request(MODEL, LlmRequest("s", [UserMessage(content="q")]), StreamOptions(thinking=level))  # type: ignore[arg-type]
    assert body["max_tokens"] == 64_000 and body["thinking"]["budget_tokens"] == budget


def test_the_default_cap_is_the_model_maximum_cut_to_the_room_the_window_leaves() -> None:
    # pi: min(maxTokens, contextWindow - estimated prompt - 4096); the estimate is a token per 4 characters
    narrow = MODEL.model_copy(update={"context_window": 50_000})
    prompt = "x" * 40_000  # 10,000 tokens
    body = build_request(narrow, LlmRequest("", [UserMessage(content=prompt)]), StreamOptions())
    assert body["max_tokens"] == 50_000 - 10_000 - 4096
    body = build_request(
        narrow, LlmRequest("", [UserMessage(content=prompt)]), StreamOptions(thinking="high")
    )  # type: ignore[arg-type]
    assert body["max_tokens"] == 50_000 - 10_000 - 4096 and body["thinking"]["budget_tokens"] == 16_384
    assert "temperature" not in body


def test_budget_is_capped_by_the_model_limit_and_overridable() -> None:
    small = MODEL.model_copy(update={"max_tokens": 8192})
    body = build_request(small, LlmRequest("s", [UserMessage(content="q")]), StreamOptions(thinking="high"))
    assert body["max_tokens"] == 8192
    assert body["thinking"]["budget_tokens"] < 8192
    options = StreamOptions(thinking="low", thinking_budgets={"low": 4000})
    body = build_request(MODEL, LlmRequest("s", [UserMessage(content="q")]), options)
    assert body["thinking"]["budget_tokens"] == 4000


def test_thinking_off_keeps_temperature_and_sends_thinking_disabled() -> None:
    body = build_request(MODEL, LlmRequest("s", [UserMessage(content="q")]), StreamOptions(temperature=0.5))
    assert body["temperature"] == 0.5
    assert body["thinking"] == {"type": "disabled"}  # said out loud on a model that can think, as pi does
    plain = MODEL.model_copy(update={"reasoning": False})
    assert "thinking" not in build_request(
        plain, LlmRequest("s", [UserMessage(content="q")]), StreamOptions()
    )
    cannot_stop = MODEL.model_copy(update={"thinking_level_map": {"off": None}})
    assert "thinking" not in build_request(
        cannot_stop, LlmRequest("s", [UserMessage(content="q")]), StreamOptions()
    )
    assert body["max_tokens"] == 64_000  # the model's maximum, as pi sends it


@pytest.mark.parametrize(
    ("model_id", "adaptive"),
    [
        ("claude-opus-4-6", True),
        ("claude-sonnet-4-6", True),
        ("claude-haiku-4-5", False),
        ("claude-sonnet-4-5-20250929", False),
        ("claude-sonnet-4-20250514", False),
        ("claude-opus-4-7", True),
        ("claude-opus-5-5", True),
        ("claude-mythos-5-x", True),
        ("claude-3-7-sonnet-20250219", False),
    ],
)
def test_adaptive_thinking_is_used_for_4_6_opus_sonnet_and_newer(model_id: str, adaptive: bool) -> None:
    assert uses_adaptive_thinking(model_id) is adaptive


def test_adaptive_models_send_an_effort_instead_of_a_budget() -> None:
    opus = MODEL.model_copy(update={"id": "claude-opus-4-6"})
    body = build_request(opus, LlmRequest("s", [UserMessage(content="q")]), StreamOptions(thinking="xhigh"))
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["output_config"] == {"effort": "max"}
    body = build_request(opus, LlmRequest("s", [UserMessage(content="q")]), StreamOptions(thinking="minimal"))
    assert body["output_config"] == {"effort": "low"}


@pytest.mark.parametrize(
    ("reason", "mapped"),
    [
        ("end_turn", "stop"),
        ("pause_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "toolUse"),
        ("refusal", "error"),
        ("model_context_window_exceeded", "error"),
        ("something_new", "error"),
    ],
)
def test_stop_reasons_map_like_pi(reason: str, mapped: str) -> None:
    assert map_stop_reason(reason)[0] == mapped


PNG = ImageContent(data="iVBORw0KGgo=", mime_type="image/png")


def _result_of(*content: Any, model: Model = MODEL) -> dict[str, Any]:
    call = _assistant(ToolCall(id="toolu_9", name="read", arguments={"path": "x"}))
    result = ToolResultMessage(tool_call_id="toolu_9", tool_name="read", content=list(content))
    body = build_request(model, LlmRequest("s", [UserMessage(content="go"), call, result]), StreamOptions())
    block: dict[str, Any] = body["messages"][2]["content"][0]
    return {k: v for k, v in block.items() if k != "cache_control"}


def test_a_text_only_tool_result_is_one_string_of_its_blocks_joined_by_newlines_as_pi_sends_it() -> None:
    block = _result_of(TextContent(text="line 1\nline 2"), TextContent(text="more"))
    assert block == {
        "type": "tool_result",
        "tool_use_id": "toolu_9",
        "content": "line 1\nline 2\nmore",
        "is_error": False,
    }
    assert _result_of()["content"] == ""


def test_a_tool_result_with_an_image_is_a_block_list_led_by_a_placeholder_when_it_has_no_text() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    assert _result_of(TextContent(text="Read image file [image/png]"), PNG)["content"] == [
        {"type": "text", "text": "Read image file [image/png]"},
        image,
    ]
    assert _result_of(PNG)["content"] == [{"type": "text", "text": "(see attached image)"}, image]


def test_images_for_a_model_without_image_input_become_pis_placeholders() -> None:
    blind = MODEL.model_copy(update={"input": ["text"]})
    block = _result_of(TextContent(text="Read image file"), PNG, PNG, model=blind)
    assert block["content"] == "Read image file\n(tool image omitted: model does not support images)"
    prompt = UserMessage(content=[TextContent(text="look"), PNG, PNG])
    body = build_request(blind, LlmRequest("s", [prompt]), StreamOptions())
    texts = [b["text"] for b in body["messages"][0]["content"]]
    assert texts == ["look", "(image omitted: model does not support images)"]


def test_lone_surrogates_are_dropped_from_sent_text_and_ids_of_other_models_are_cut_as_pi_cuts_them() -> None:
    other = AssistantMessage(
        content=[
            TextContent(text="half \ud83d emoji"),
            ToolCall(id="call|" + "x" * 80, name="read", arguments={}),
        ],
        api="openai-responses",
        provider="openai",
        model="gpt-5",
        stop_reason="toolUse",
    )
    result = ToolResultMessage(
        tool_call_id="call|" + "x" * 80, tool_name="read", content=[TextContent(text="ok")]
    )
    body = build_request(MODEL, LlmRequest("s", [UserMessage(content="go"), other, result]), StreamOptions())
    text, use = body["messages"][1]["content"]
    assert text["text"] == "half  emoji"
    assert use["id"] == ("call_" + "x" * 80)[:64]
    assert body["messages"][2]["content"][0]["tool_use_id"] == use["id"]


def test_catalog_models_forcing_adaptive_thinking_get_it_with_the_mapped_effort() -> None:
    from pi_tui.ai.catalog import provider_models
    from pi_tui.ai.thinking import clamp_thinking_level

    kimi = next(m for m in provider_models("kimi-coding") if m.id == "kimi-for-coding")
    level = clamp_thinking_level(kimi, "medium")  # Kimi has no medium: pi and pi-tui move up to high
    body = build_request(kimi, LlmRequest("sys", [UserMessage(content="hi")]), StreamOptions(thinking=level))
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["output_config"] == {"effort": "high"}
    body = build_request(kimi, LlmRequest("sys", [UserMessage(content="hi")]), StreamOptions(thinking="low"))
    assert body["output_config"] == {"effort": "low"}


def test_tools_asking_for_constrained_sampling_go_strict_where_compat_supports_strict_tools() -> None:
    params = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "limit": {"type": "number"}},
        "required": ["path"],
    }
    read = ToolDefinition(
        name="read", description="Read", parameters=params, constrained_sampling={"type": "json_schema"}
    )
    strict_model = MODEL.model_copy(update={"compat": {"supportsStrictTools": True}})
    body = build_request(strict_model, LlmRequest("s", [UserMessage(content="q")], [read]), StreamOptions())
    tool = body["tools"][0]
    assert tool["strict"] is True
    assert tool["input_schema"]["additionalProperties"] is False
    assert tool["input_schema"]["required"] == ["path", "limit"]
    assert tool["input_schema"]["properties"]["limit"] == {"anyOf": [{"type": "number"}, {"type": "null"}]}
    body = build_request(MODEL, LlmRequest("s", [UserMessage(content="q")], [read]), StreamOptions())
    assert "strict" not in body["tools"][0] and body["tools"][0]["input_schema"] == params
