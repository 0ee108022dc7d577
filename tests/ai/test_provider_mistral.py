"""Mistral's chat API (``mistral-conversations``) on our wire client, against the fake server's Mistral
dialect (which checks every request against Mistral's rules: nine-character tool-call ids, no unknown
fields, every call answered, ...)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pi_tui.ai.errors import is_context_overflow, is_retryable_error
from pi_tui.ai.providers.mistral import build_request, mistral_tool_call_id, stream_mistral
from pi_tui.ai.stream import Error, LlmRequest, StreamEvent, StreamOptions, TextDelta
from pi_tui.ai.types import (
    AssistantMessage,
    ImageContent,
    LlmMessage,
    Model,
    ModelCost,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)
from pi_tui.testing import FakeLLM, Fault, Reply, text, thinking, tool_call

from .provider_streams import PIXEL, abort_a_slow_answer, collect, serve_checked

KEY = "mistral-test-key"
READ = ToolDefinition(
    name="read",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    yield from serve_checked(FakeLLM(api_key=KEY))


def _model(fake: FakeLLM, model_id: str = "devstral-medium-latest", **extra: Any) -> Model:
    assert fake.server is not None
    fields: dict[str, Any] = {
        "id": model_id,
        "api": "mistral-conversations",
        "provider": "mistral",
        "base_url": fake.server.mistral_base_url,
        "cost": ModelCost(input=0.4, output=2.0, cache_read=0.04),
        "context_window": 262_144,
        "max_tokens": 8192,
    }
    fields.update(extra)
    return Model(**fields)


async def _run(
    model: Model, messages: list[LlmMessage], **options: Any
) -> tuple[list[StreamEvent], AssistantMessage]:
    request = LlmRequest("You are terse.", messages, tools=[READ])
    return await collect(
        stream_mistral(model, request, StreamOptions(api_key=options.pop("key", KEY), **options))
    )


def test_tool_call_ids_follow_pis_nine_character_rule() -> None:
    assert mistral_tool_call_id("abcDEF123") == "abcDEF123"
    assert mistral_tool_call_id("ab-cD_EF1-23") == "abcDEF123"  # other characters dropped first
    long = mistral_tool_call_id("call_4f2a9c|fc_0123456789abcdef")
    assert len(long) == 9 and long.isalnum()
    assert long == mistral_tool_call_id("call_4f2a9c|fc_0123456789abcdef")  # stable across requests
    # pi's shortHash of the seed, letters and digits only, first nine: fixed for a session to move
    assert mistral_tool_call_id("toolu_01") == "1y41xc31h"  # pi 0.87.1 gives the same


async def test_a_tool_loop_with_thinking_parallel_calls_and_usage(fake: FakeLLM) -> None:
    fake.script(
        [
            Reply(
                [
                    thinking("Two files to read."),
                    text("Reading both."),
                    tool_call("read", {"path": "a.txt"}),
                    tool_call("read", {"path": "b.txt"}),
                ]
            ),
            Reply([text("Both say hi.")], usage={"input": 40, "output": 5, "cache_read": 100}),
        ]
    )
    model = _model(fake, "magistral-small", reasoning=True)
    events, first = await _run(
        model, [UserMessage(content="Read a and b")], thinking="high", session_id="s-1"
    )
    assert first.stop_reason == "toolUse"
    kinds = [type(p).__name__ for p in first.content if not (isinstance(p, TextContent) and not p.text)]
    assert kinds == ["ThinkingContent", "TextContent", "ToolCall", "ToolCall"]
    calls = [p for p in first.content if isinstance(p, ToolCall)]
    assert [c.arguments for c in calls] == [{"path": "a.txt"}, {"path": "b.txt"}]
    assert all(len(c.id) == 9 for c in calls)
    assert [e.type for e in events].count("toolcall_end") == 2 and events[-2].type == "toolcall_end"

    results: list[LlmMessage] = [
        ToolResultMessage(tool_call_id=c.id, tool_name="read", content=[TextContent(text=f"hi {i}")])
        for i, c in enumerate(calls)
    ]
    _, second = await _run(model, [UserMessage(content="Read a and b"), first, *results], session_id="s-1")
    assert second.stop_reason == "stop" and second.content[-1] == TextContent(text="Both say hi.")
    assert (second.usage.input, second.usage.output, second.usage.cache_read) == (40, 5, 100)
    assert second.usage.cost.cache_read == pytest.approx(100 * 0.04 / 1e6)

    body = fake.requests[1].body
    assert fake.requests[0].body["prompt_mode"] == "reasoning"
    assert body["prompt_cache_key"] == "s-1" and fake.requests[1].headers["x-affinity"] == "s-1"
    assistant = body["messages"][2]
    assert assistant["prefix"] is False
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": [{"type": "text", "text": "Two files to read."}],
    }
    assert [c["id"] for c in assistant["tool_calls"]] == [c.id for c in calls]
    assert body["messages"][3] == {
        "role": "tool",
        "name": "read",
        "content": [{"type": "text", "text": "hi 0"}],
        "tool_call_id": calls[0].id,
    }


async def test_another_models_history_is_replayed_with_mistral_ids_images_and_errors(fake: FakeLLM) -> None:
    fake.script([Reply([text("done")])])
    foreign = AssistantMessage(
        api="anthropic-messages",
        provider="anthropic",
        model="claude-sonnet-4-6",
        content=[
            ThinkingContent(thinking="plan", thinking_signature="sig"),
            ToolCall(id="toolu_01ABCDEFGHIJKLMNOP", name="read", arguments={"path": "x.png"}),
        ],
        stop_reason="toolUse",
    )
    image = ImageContent(data=PIXEL, mime_type="image/png")
    history: list[LlmMessage] = [
        UserMessage(content=[TextContent(text="look"), image]),
        foreign,
        ToolResultMessage(
            tool_call_id="toolu_01ABCDEFGHIJKLMNOP", tool_name="read", content=[image], is_error=True
        ),
    ]
    _, message = await _run(_model(fake, "mistral-medium-latest", input=["text", "image"]), history)
    assert message.stop_reason == "stop"
    sent = fake.requests[0].body["messages"]
    new_id = mistral_tool_call_id("toolu_01ABCDEFGHIJKLMNOP")
    assert sent[1]["content"][1] == {"type": "image_url", "image_url": f"data:image/png;base64,{PIXEL}"}
    assert sent[2]["content"] == [{"type": "text", "text": "plan"}]  # another model's thinking: text
    assert sent[2]["tool_calls"][0]["id"] == new_id
    assert sent[3]["tool_call_id"] == new_id
    assert sent[3]["content"][0] == {"type": "text", "text": "[tool error] (see attached image)"}
    assert sent[3]["content"][1]["type"] == "image_url"

    # Without image input the images become pi's placeholders.
    fake.script([Reply([text("done")])])
    await _run(_model(fake, "devstral-medium-latest"), history)
    sent = fake.requests[1].body["messages"]
    assert sent[1]["content"][1] == {"type": "text", "text": "(image omitted: model does not support images)"}
    assert sent[3]["content"] == [
        {"type": "text", "text": "[tool error] (tool image omitted: model does not support images)"}
    ]


def test_thinking_fields_follow_the_model() -> None:
    request = LlmRequest("", [UserMessage(content="hi")])

    def body(model_id: str, reasoning: bool, level: str) -> dict[str, Any]:
        model = Model(id=model_id, api="mistral-conversations", provider="mistral", reasoning=reasoning)
        return build_request(model, request, StreamOptions(api_key="k", thinking=level))  # type: ignore[arg-type]

    assert body("mistral-small-latest", True, "medium")["reasoning_effort"] == "high"
    assert body("mistral-medium-3.5", True, "low")["reasoning_effort"] == "high"
    assert "reasoning_effort" not in body("mistral-medium-3.5", True, "off")
    assert body("magistral-medium-latest", True, "low")["prompt_mode"] == "reasoning"
    plain = body("devstral-medium-latest", False, "high")
    assert "prompt_mode" not in plain and "reasoning_effort" not in plain
    assert list(plain) == ["model", "stream", "messages", "max_tokens"]  # no session: no cache key


@pytest.mark.parametrize(
    ("fault", "expected", "retryable"),
    [
        (Fault("rate_limit", retry_after_ms=2000), 'Mistral API error (429): {"object": "error"', True),
        (Fault("overloaded"), "Mistral API error (503):", True),
        (Fault("api_error"), "Mistral API error (500):", True),
        (Fault("context_overflow"), "Mistral API error (400):", False),
        (
            Fault("api_error", status=404, message="Invalid model: mistral-9"),
            "Mistral API error (404):",
            False,
        ),
    ],
)
async def test_http_errors_read_as_pis_with_mistrals_body(
    fake: FakeLLM, fault: Fault, expected: str, retryable: bool
) -> None:
    fake.script([fault])
    _, message = await _run(_model(fake), [UserMessage(content="hi")])
    error = message.error_message or ""
    assert message.stop_reason == "error" and error.startswith(expected), error
    assert is_retryable_error(message) is retryable
    if fault.kind == "rate_limit":
        assert error.endswith("(retry after 2000 ms)")
    if fault.kind == "context_overflow":
        assert is_context_overflow(message)
    if fault.status == 404:
        assert "Invalid model: mistral-9" in error and "check the model id" in error
    assert len(fake.requests) == 1  # no retry inside the provider, as pi


async def test_a_wrong_key_says_what_to_check(fake: FakeLLM) -> None:
    _, message = await _run(_model(fake), [UserMessage(content="hi")], key="wrong")
    assert (message.error_message or "").startswith('Mistral API error (401): {"message": "Unauthorized"')
    assert "MISTRAL_API_KEY" in (message.error_message or "")
    assert not is_retryable_error(message)


async def test_an_error_object_in_the_stream_ends_it_with_the_servers_words(fake: FakeLLM) -> None:
    fake.script([Fault("stream_error", after_frames=2, reply=Reply([text("partial answer that breaks")]))])
    events, message = await _run(_model(fake), [UserMessage(content="hi")])
    assert any(isinstance(e, TextDelta) for e in events)
    assert (message.error_message or "").startswith("Mistral stream error:")
    assert "overloaded" in (message.error_message or "") and is_retryable_error(message)


async def test_a_stream_without_finish_reason_is_an_error(fake: FakeLLM) -> None:
    fake.script([Fault("truncate", after_frames=2, reply=Reply([text("this answer is cut off early")]))])
    _, message = await _run(_model(fake), [UserMessage(content="hi")])
    assert message.stop_reason == "error"
    assert message.error_message == "Mistral stream ended without a finish reason"


async def test_length_stop(fake: FakeLLM) -> None:
    fake.script([Reply([text("cut")], stop_reason="max_tokens")])
    _, message = await _run(_model(fake), [UserMessage(content="hi")])
    assert message.stop_reason == "length"


async def test_abort_ends_the_stream_at_once(fake: FakeLLM) -> None:
    events = await abort_a_slow_answer(fake, stream_mistral, _model(fake), KEY)
    assert sum(isinstance(e, TextDelta) for e in events) < 5


async def test_the_fake_rejects_what_mistral_rejects() -> None:
    """The fake's rules bite: a Chat-Completions-shaped tool id and an unknown field are refused."""
    fake = FakeLLM(api_key=KEY)
    fake.script([Reply([text("never")])])
    bad = AssistantMessage(
        api="mistral-conversations",
        provider="mistral",
        model="devstral-medium-latest",
        content=[ToolCall(id="call_too_long_for_mistral", name="read", arguments={})],
        stop_reason="toolUse",
    )
    result = ToolResultMessage(tool_call_id="call_too_long_for_mistral", tool_name="read", content=[])
    request = LlmRequest("", [UserMessage(content="hi"), bad, result])

    def extra(body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "stream_options": {"include_usage": True}}

    options = StreamOptions(api_key=KEY, on_payload=extra)
    with fake.serve():
        events = [e async for e in stream_mistral(_model(fake), request, options)]
    final = events[-1]
    assert isinstance(final, Error)
    assert (final.error.error_message or "").startswith("Mistral API error (422):")
    assert {v.rule for v in fake.violations} == {"mistral.extra_field", "mistral.tool_call_id"}
