"""The ConverseStream body for histories the tool loop does not produce on its own: replayed reasoning on
Claude and on other models, encrypted reasoning, another model's turns, thinking levels and GovCloud."""

from __future__ import annotations

from typing import Any

import pytest

from pi_tui.ai.providers._bedrock_request import build_request
from pi_tui.ai.stream import LlmRequest, StreamOptions
from pi_tui.ai.types import AssistantMessage, Model, TextContent, ThinkingContent, ToolCall, UserMessage

CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
NOVA = "amazon.nova-2-lite-v1:0"


def _model(model_id: str, **extra: Any) -> Model:
    fields: dict[str, Any] = {
        "id": model_id,
        "api": "bedrock-converse-stream",
        "provider": "amazon-bedrock",
        "reasoning": True,
        "max_tokens": 64000,
    }
    fields.update(extra)
    return Model(**fields)


def _answer(model: Model, *content: Any) -> AssistantMessage:
    return AssistantMessage(
        api=model.api, provider=model.provider, model=model.id, content=list(content), stop_reason="stop"
    )


def _assistant_blocks(model: Model, *content: Any) -> list[dict[str, Any]]:
    history = [UserMessage(content="q"), _answer(model, *content), UserMessage(content="next")]
    body = build_request(model, LlmRequest("", history, []), StreamOptions(cache_retention="none"))
    return list(body["messages"][1]["content"])


def test_claude_reasoning_replays_signed_and_unsigned_as_text() -> None:
    model = _model(CLAUDE)
    blocks = _assistant_blocks(
        model,
        ThinkingContent(thinking="signed", thinking_signature="sig"),
        ThinkingContent(thinking="unsigned", thinking_signature=""),
        TextContent(text="answer"),
    )
    assert blocks == [
        {"reasoningContent": {"reasoningText": {"text": "signed", "signature": "sig"}}},
        {"text": "unsigned"},
        {"text": "answer"},
    ]


def test_other_models_get_reasoning_without_signature_and_encrypted_reasoning_as_it_came() -> None:
    model = _model(NOVA)
    blocks = _assistant_blocks(
        model,
        ThinkingContent(thinking="plain", thinking_signature="sig"),
        ThinkingContent(thinking="[Reasoning redacted]", thinking_signature="b3BhcXVl", redacted=True),
        ToolCall(id="call|1", name="read", arguments={"path": "a", "": "dropped"}),
    )
    assert blocks == [
        {"reasoningContent": {"reasoningText": {"text": "plain"}}},
        {"reasoningContent": {"redactedContent": "b3BhcXVl"}},
        {"toolUse": {"toolUseId": "call_1", "name": "read", "input": {"path": "a"}}},
    ]


def test_another_models_thinking_becomes_text_and_no_cache_points_off_claude() -> None:
    model = _model(NOVA)
    other = AssistantMessage(
        api="anthropic-messages",
        provider="anthropic",
        model="claude-x",
        content=[
            ThinkingContent(thinking="their thoughts", thinking_signature="theirs"),
            TextContent(text="hi"),
        ],
        stop_reason="stop",
    )
    body = build_request(
        model,
        LlmRequest("sys", [UserMessage(content="q"), other, UserMessage(content="n")], []),
        StreamOptions(),
    )
    assert body["messages"][1]["content"] == [{"text": "their thoughts"}, {"text": "hi"}]
    assert body["system"] == [{"text": "sys"}]  # Nova caches on its own: no cache points
    assert "additionalModelRequestFields" not in body


@pytest.mark.parametrize(
    ("model_id", "level", "fields"),
    [
        (
            "global.anthropic.claude-opus-4-7",
            "xhigh",
            {"thinking": {"type": "adaptive", "display": "summarized"}, "output_config": {"effort": "xhigh"}},
        ),
        (
            "us.anthropic.claude-opus-4-6-v1",
            "minimal",
            {"thinking": {"type": "adaptive", "display": "summarized"}, "output_config": {"effort": "low"}},
        ),
        (
            CLAUDE,
            "low",
            {
                "thinking": {"type": "enabled", "budget_tokens": 2048, "display": "summarized"},
                "anthropic_beta": ["interleaved-thinking-2025-05-14"],
            },
        ),
    ],
)
def test_thinking_levels_map_as_pi_maps_them(model_id: str, level: str, fields: dict[str, Any]) -> None:
    levels = {"xhigh": "xhigh"} if "opus-4-7" in model_id else None
    model = _model(model_id, compat={"thinkingLevelMap": levels} if levels else None)
    body = build_request(model, LlmRequest("", [UserMessage(content="q")], []), StreamOptions(thinking=level))  # type: ignore[arg-type]
    assert body["additionalModelRequestFields"] == fields


def test_govcloud_leaves_out_the_thinking_display(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_REGION", "us-gov-west-1")
    body = build_request(
        _model(CLAUDE), LlmRequest("", [UserMessage(content="q")], []), StreamOptions(thinking="high")
    )
    assert body["additionalModelRequestFields"]["thinking"] == {"type": "enabled", "budget_tokens": 16384}


def test_an_image_bedrock_cannot_take_is_a_clear_error() -> None:
    from pi_tui.ai.providers._bedrock_request import BedrockRequestError
    from pi_tui.ai.types import ImageContent

    message = UserMessage(content=[ImageContent(data="AAAA", mime_type="image/bmp")])
    with pytest.raises(BedrockRequestError, match="image/bmp"):
        build_request(_model(CLAUDE, input=["text", "image"]), LlmRequest("", [message], []), StreamOptions())
