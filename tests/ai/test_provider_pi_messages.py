"""pi's own protocol (``pi-messages``, the Radius gateway's) on our wire client, against the fake server's
pi-messages dialect (which checks the transcript: roles, every tool call answered by its result)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pi_tui.ai.catalog import provider_models
from pi_tui.ai.errors import is_retryable_error
from pi_tui.ai.providers.pi_messages import build_request, stream_pi_messages
from pi_tui.ai.registry import resolve_stream_fn
from pi_tui.ai.stream import LlmRequest, StreamEvent, StreamOptions, TextDelta, ToolCallEnd
from pi_tui.ai.types import (
    AssistantMessage,
    LlmMessage,
    Model,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from pi_tui.testing import FakeLLM, Fault, Reply, text, thinking, tool_call

from .provider_streams import READ_TOOLS, abort_at_first_text, collect, serve_checked

KEY = "radius-test-key"


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    yield from serve_checked(FakeLLM(api_key=KEY, context_window=2_000_000, max_output_tokens=400_000))


def _model(fake: FakeLLM, model_id: str = "balanced") -> Model:
    assert fake.server is not None
    model = next(m for m in provider_models("radius") if m.id == model_id)
    return model.model_copy(update={"base_url": fake.server.pi_messages_base_url})


async def _run(
    model: Model, messages: list[LlmMessage], **options: Any
) -> tuple[list[StreamEvent], AssistantMessage]:
    request = LlmRequest("You are terse.", messages, tools=READ_TOOLS)
    settings = StreamOptions(api_key=options.pop("key", KEY), **options)
    return await collect(stream_pi_messages(model, request, settings))


def test_radius_models_have_a_wire_api() -> None:
    assert resolve_stream_fn("pi-messages") is stream_pi_messages


async def test_a_tool_loop_replays_pis_transcript_and_keeps_the_servers_usage(fake: FakeLLM) -> None:
    fake.script(
        [
            Reply([thinking("Look first."), text("Reading."), tool_call("read", {"path": "a.txt"})]),
            Reply([text("It says hi.")]),
        ]
    )
    model = _model(fake)
    prompt = UserMessage(content="What is in a.txt?", timestamp=5)
    events, first = await _run(model, [prompt], thinking="medium", session_id="s-1")
    assert first.stop_reason == "toolUse" and first.response_id == "resp_fake_0001"
    thought, said, call = first.content
    assert isinstance(thought, ThinkingContent) and thought.thinking == "Look first."
    assert thought.thinking_signature  # the backend's signature, to be replayed
    assert isinstance(call, ToolCall) and call.arguments == {"path": "a.txt"} and call.id
    assert any(isinstance(e, ToolCallEnd) for e in events)
    assert first.usage.output > 0 and first.usage.total_tokens > 0
    assert first.usage.cost.total == 0  # the backend's price (the fake charges nothing), not ours

    result = ToolResultMessage(tool_call_id=call.id, tool_name="read", content=[], timestamp=7)
    result.content.append(said.model_copy(update={"text": "hi"}))  # type: ignore[union-attr]
    _, second = await _run(model, [prompt, first, result], thinking="medium", session_id="s-1")
    assert second.stop_reason == "stop" and second.content[0].text == "It says hi."  # type: ignore[union-attr]

    body = fake.requests[1].body
    assert list(body) == ["model", "context", "options"]
    assert body["model"] == "balanced"
    # "medium" is mapped to null on this model: clamped upwards, as pi does, and sent as the level
    assert body["options"] == {"reasoning": "high", "sessionId": "s-1"}
    system, user, assistant, tool_result = body["context"]["messages"]
    assert system == {
        "role": "system",
        "content": "You are terse.",
        "toolsAdded": [t.to_json_dict() for t in READ_TOOLS],
        "timestamp": 0,
    }
    assert user == {"role": "user", "content": "What is in a.txt?", "timestamp": 5}
    assert assistant == first.to_json_dict()  # replayed as pi stores it: signatures, usage, response id
    assert tool_result["toolCallId"] == call.id and tool_result["role"] == "toolResult"
    assert fake.requests[0].headers["accept"] == "text/event-stream"


def test_only_the_options_that_are_set_are_sent() -> None:
    model = next(m for m in provider_models("radius") if m.id == "cheap")
    request = LlmRequest("", [UserMessage(content="hi", timestamp=1)])
    body = build_request(model, request, StreamOptions(api_key=KEY, thinking="off"))
    assert body == {
        "model": "cheap",
        "context": {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]},
        "options": {},
    }
    full = StreamOptions(api_key=KEY, thinking="low", temperature=0.2, max_tokens=100, cache_retention="long")
    options = build_request(model, request, full)["options"]
    assert options == {"temperature": 0.2, "maxTokens": 100, "reasoning": "low", "cacheRetention": "long"}


@pytest.mark.parametrize(
    ("fault", "expected", "retryable"),
    [
        (
            Fault("auth"),
            "401 Unauthorized: Invalid or expired API key (unauthorized) (check RADIUS_API_KEY",
            False,
        ),
        (Fault("rate_limit", retry_after_ms=1500), "429 Too Many Requests: Rate limit exceeded", True),
        (Fault("api_error"), "500 Internal Server Error: Internal server error (internal_error)", True),
        (Fault("stream_error", after_frames=2), "The upstream model is overloaded, retry later", True),
        (Fault("truncate", after_frames=2), "radius stream ended without a terminal event", True),
    ],
    ids=["401", "429", "500", "error-event", "cut"],
)
async def test_failures_read_as_pi_words_them_with_what_to_check(
    fake: FakeLLM, fault: Fault, expected: str, retryable: bool
) -> None:
    fake.script([fault])
    key = "wrong" if fault.kind == "auth" else KEY
    _, message = await _run(_model(fake), [UserMessage(content="hi")], key=key)
    assert message.stop_reason == "error"
    assert message.error_message is not None and message.error_message.startswith(expected)
    if fault.kind == "auth":
        assert "/login radius" in message.error_message
    if fault.kind == "rate_limit":
        assert message.error_message.endswith("(retry after 1500 ms)")
    assert is_retryable_error(message) == retryable


async def test_abort_stops_the_answer(fake: FakeLLM) -> None:
    fake.script([Reply([text("one two three four five six")], frame_delay=0.05)])
    model = _model(fake)
    events = await abort_at_first_text(
        lambda signal: stream_pi_messages(
            model, LlmRequest("", [UserMessage(content="hi")]), StreamOptions(api_key=KEY, signal=signal)
        )
    )
    assert any(isinstance(e, TextDelta) for e in events)
    final = events[-1]
    assert final.type == "error" and final.error.stop_reason == "aborted"  # type: ignore[union-attr]
