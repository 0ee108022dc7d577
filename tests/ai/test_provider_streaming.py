from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import anthropic  # noqa: F401  # imported up front so timing checks below measure the stream, not the import
import openai  # noqa: F401
import pytest

from pi_tui.ai.errors import is_context_overflow, is_retryable_error
from pi_tui.ai.providers.anthropic import stream_anthropic
from pi_tui.ai.providers.openai_completions import stream_openai_completions
from pi_tui.ai.providers.openai_responses import stream_openai_responses
from pi_tui.ai.stream import (
    AbortSignal,
    Done,
    Error,
    LlmRequest,
    StreamEvent,
    StreamOptions,
    StreamStart,
    TextDelta,
    ToolCallDelta,
)
from pi_tui.ai.types import (
    AssistantMessage,
    Model,
    ModelCost,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolDefinition,
    UserMessage,
)
from pi_tui.testing import FakeLLM, Fault, Reply, text, thinking, tool_call

APIS = ["anthropic", "chat", "responses"]
_FNS = {
    "anthropic": stream_anthropic,
    "chat": stream_openai_completions,
    "responses": stream_openai_responses,
}
_API_NAMES = {
    "anthropic": "anthropic-messages",
    "chat": "openai-completions",
    "responses": "openai-responses",
}
TOOLS = [
    ToolDefinition(
        name="read",
        description="Read a file",
        parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    )
]


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    fake = FakeLLM()
    with fake.serve():
        yield fake


def model_for(fake: FakeLLM, api: str, **update: Any) -> Model:
    assert fake.server is not None
    base_url = fake.server.anthropic_base_url if api == "anthropic" else fake.server.openai_base_url
    model = Model(
        id="claude-opus-4-1" if api == "anthropic" else "gpt-5",
        api=_API_NAMES[api],
        provider="anthropic" if api == "anthropic" else "openai",
        base_url=base_url,
        reasoning=True,
        max_tokens=32_000,
    )
    return model.model_copy(update=update)


async def collect(api: str, model: Model, request: LlmRequest, **options: Any) -> list[StreamEvent]:
    options.setdefault("api_key", "fake-key")
    return [event async for event in _FNS[api](model, request, StreamOptions(**options))]


def final(events: list[StreamEvent]) -> AssistantMessage:
    last = events[-1]
    assert isinstance(last, Done | Error)
    assert sum(isinstance(e, Done | Error) for e in events) == 1
    return last.message if isinstance(last, Done) else last.error


def ask(text_: str = "hello") -> LlmRequest:
    return LlmRequest("You are terse.", [UserMessage(content=text_)], TOOLS)


@pytest.mark.parametrize("api", APIS)
async def test_text_thinking_and_tool_call_stream_as_ordered_blocks(fake: FakeLLM, api: str) -> None:
    fake.script(
        [Reply([thinking("let me look"), text("Reading it now."), tool_call("read", {"path": "a.txt"})])]
    )
    events = await collect(api, model_for(fake, api), ask(), thinking="low")
    assert isinstance(events[0], StreamStart)
    kinds = [(e.type, getattr(e, "content_index", None)) for e in events if not e.type.endswith("_delta")]
    blocks = [
        ("thinking_start", 0),
        ("thinking_end", 0),
        ("text_start", 1),
        ("text_end", 1),
        ("toolcall_start", 2),
        ("toolcall_end", 2),
    ]
    if api == "chat":  # pi's order on Chat Completions: every block ends with the answer, in content order
        blocks = [
            ("thinking_start", 0),
            ("text_start", 1),
            ("toolcall_start", 2),
            ("thinking_end", 0),
            ("text_end", 1),
            ("toolcall_end", 2),
        ]
    assert kinds == [("start", None), *blocks, ("done", None)]
    message = final(events)
    assert isinstance(events[-1], Done) and events[-1].reason == "toolUse"
    assert message.stop_reason == "toolUse"
    thinking_block, text_block, call = message.content
    assert isinstance(thinking_block, ThinkingContent) and thinking_block.thinking == "let me look"
    assert thinking_block.thinking_signature
    assert isinstance(text_block, TextContent) and text_block.text == "Reading it now."
    assert isinstance(call, ToolCall) and call.name == "read" and call.arguments == {"path": "a.txt"}
    deltas = "".join(e.delta for e in events if isinstance(e, TextDelta))
    assert deltas == "Reading it now."
    assert fake.violations == []
    fake.assert_script_consumed()


@pytest.mark.parametrize("api", APIS)
async def test_partial_tool_arguments_grow_while_streaming(fake: FakeLLM, api: str) -> None:
    content = "line one\nline two\n" * 20
    fake.script([Reply([tool_call("write", {"path": "out.txt", "content": content})], chunk=16)])
    seen: list[dict[str, Any]] = []
    async for event in stream_fn(api)(model_for(fake, api), ask(), StreamOptions(api_key="k")):
        if isinstance(event, ToolCallDelta):
            block = event.partial.content[event.content_index]
            assert isinstance(block, ToolCall)
            seen.append(dict(block.arguments))
        last = event
    assert isinstance(last, Done)
    call = last.message.content[0]
    assert isinstance(call, ToolCall) and call.arguments == {"path": "out.txt", "content": content}
    partial_contents = [a.get("content", "") for a in seen if "content" in a]
    assert len(partial_contents) > 3
    assert any(0 < len(c) < len(content) for c in partial_contents)


def stream_fn(api: str) -> Any:
    return _FNS[api]


@pytest.mark.parametrize("api", APIS)
async def test_invalid_final_tool_json_gives_empty_arguments_and_keeps_the_raw_text(
    fake: FakeLLM, api: str
) -> None:
    fake.script([Reply([tool_call("read", '{"path": "a.txt", ')])])
    message = final(await collect(api, model_for(fake, api), ask()))
    call = message.content[0]
    assert isinstance(call, ToolCall)
    assert call.arguments == {}
    assert call.to_json_dict()["rawArguments"] == '{"path": "a.txt", '


@pytest.mark.parametrize("api", APIS)
async def test_usage_matches_what_the_server_reported(fake: FakeLLM, api: str) -> None:
    fake.script([Reply([text("ok")], usage={"input": 120, "output": 7, "cache_read": 30, "cache_write": 0})])
    message = final(await collect(api, model_for(fake, api), ask()))
    reported = fake.last_request.response
    assert reported is not None and reported.usage is not None
    assert (message.usage.input, message.usage.output, message.usage.cache_read) == (120, 7, 30)
    assert message.usage.total_tokens == 120 + 7 + 30


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(
    ("kind", "status"), [("rate_limit", "429"), ("overloaded", None), ("api_error", "500")]
)
async def test_http_failures_end_in_a_retryable_error_event(
    fake: FakeLLM, api: str, kind: str, status: str | None
) -> None:
    fake.script([Fault(kind)])
    events = await collect(api, model_for(fake, api), ask())
    assert isinstance(events[0], StreamStart)
    message = final(events)
    assert isinstance(events[-1], Error) and events[-1].reason == "error"
    assert message.stop_reason == "error"
    text_ = message.error_message or ""
    expected_status = status or ("529" if api == "anthropic" else "503")
    assert text_.startswith(expected_status + " "), text_
    assert is_retryable_error(message), text_
    assert not is_context_overflow(message)


@pytest.mark.parametrize("api", APIS)
async def test_context_overflow_text_is_recognised(fake: FakeLLM, api: str) -> None:
    fake.script([Fault("context_overflow")])
    message = final(await collect(api, model_for(fake, api), ask()))
    assert message.stop_reason == "error"
    assert (message.error_message or "").startswith("400 ")
    assert is_context_overflow(message), message.error_message
    assert not is_retryable_error(message)


@pytest.mark.parametrize("api", APIS)
async def test_real_overflow_from_the_fake_window_is_recognised(api: str) -> None:
    fake = FakeLLM(context_window=50)
    fake.script([Reply([text("never sent")])])
    with fake.serve():
        message = final(await collect(api, model_for(fake, api), ask("x" * 800)))
    assert is_context_overflow(message), message.error_message


@pytest.mark.parametrize("api", APIS)
async def test_a_cut_stream_is_an_error_not_a_success(fake: FakeLLM, api: str) -> None:
    fake.script([Fault("truncate", after_frames=3, reply=Reply([text("this answer will be cut off early")]))])
    events = await collect(api, model_for(fake, api), ask())
    message = final(events)
    assert isinstance(events[-1], Error)
    assert "stream ended without a stop reason" in (message.error_message or "")
    assert is_retryable_error(message)


@pytest.mark.parametrize("api", APIS)
async def test_a_dropped_connection_is_a_retryable_error(fake: FakeLLM, api: str) -> None:
    fake.script([Fault("drop", after_frames=3)])
    message = final(await collect(api, model_for(fake, api), ask()))
    assert message.stop_reason == "error"
    assert is_retryable_error(message), message.error_message


@pytest.mark.parametrize("api", APIS)
async def test_a_mid_stream_error_event_keeps_the_partial_text_and_is_retryable(
    fake: FakeLLM, api: str
) -> None:
    fake.script([Fault("stream_error", after_frames=7, reply=Reply([text("partial answer that breaks")]))])
    events = await collect(api, model_for(fake, api), ask())
    message = final(events)
    assert isinstance(events[-1], Error)
    assert "overloaded" in (message.error_message or "").lower()
    assert is_retryable_error(message), message.error_message
    assert any(isinstance(e, TextDelta) for e in events)


@pytest.mark.parametrize("api", APIS)
async def test_a_stalled_server_hits_the_read_timeout(fake: FakeLLM, api: str) -> None:
    fake.script([Fault("stall", after_frames=2, stall_seconds=10)])
    started = time.monotonic()
    message = final(await collect(api, model_for(fake, api), ask(), timeout=0.3))
    assert time.monotonic() - started < 5
    assert message.stop_reason == "error"
    assert is_retryable_error(message), message.error_message
    # Says what happened and which setting sets the limit (not "ReadTimeout: no detail").
    assert message.error_message == (
        "No data from the provider for 0.3 s (httpIdleTimeoutMs = 300): request timed out"
    )


@pytest.mark.parametrize("api", APIS)
async def test_a_server_silent_before_its_headers_names_the_idle_timeout(fake: FakeLLM, api: str) -> None:
    fake.script([Fault("stall", after_frames=0, stall_seconds=10)])
    message = final(await collect(api, model_for(fake, api), ask(), timeout=0.25))
    assert message.stop_reason == "error"
    assert is_retryable_error(message), message.error_message
    assert "for 0.25 s (httpIdleTimeoutMs = 250)" in (message.error_message or "")


@pytest.mark.parametrize("api", APIS)
async def test_abort_mid_stream_closes_the_stream_promptly(fake: FakeLLM, api: str) -> None:
    fake.script([Reply([text(" ".join(f"word{i}" for i in range(200)))], frame_delay=0.05)])
    signal = AbortSignal()
    events: list[StreamEvent] = []
    started = time.monotonic()
    async for event in stream_fn(api)(model_for(fake, api), ask(), StreamOptions(api_key="k", signal=signal)):
        events.append(event)
        if isinstance(event, TextDelta) and len(events) > 3:
            signal.abort()
    assert time.monotonic() - started < 5  # the whole answer would take ~10 s
    message = final(events)
    assert isinstance(events[-1], Error) and events[-1].reason == "aborted"
    assert message.stop_reason == "aborted"
    assert message.text().startswith("word0")


@pytest.mark.parametrize("api", APIS)
async def test_abort_while_the_server_is_silent(fake: FakeLLM, api: str) -> None:
    fake.script([Fault("stall", after_frames=0, stall_seconds=20)])
    signal = AbortSignal()
    loop = asyncio.get_running_loop()
    loop.call_later(0.2, signal.abort)
    started = time.monotonic()
    events = await collect(api, model_for(fake, api), ask(), signal=signal)
    assert time.monotonic() - started < 5
    assert isinstance(events[-1], Error) and events[-1].reason == "aborted"


@pytest.mark.parametrize("api", APIS)
async def test_on_payload_can_replace_the_body_and_headers_reach_the_server(fake: FakeLLM, api: str) -> None:
    fake.script([Reply([text("ok")])])
    seen: list[dict[str, Any]] = []

    def hook(body: dict[str, Any]) -> dict[str, Any]:
        seen.append(body)
        return {**body, "metadata": {"user_id": "u-1"}} if api == "anthropic" else {**body, "user": "u-1"}

    model = model_for(fake, api, headers={"x-model-header": "m"})
    message = final(await collect(api, model, ask(), on_payload=hook, headers={"x-call-header": "c"}))
    assert message.stop_reason == "stop"
    recorded = fake.last_request
    assert seen and seen[0]["model"] == model.id
    if api == "anthropic":
        assert recorded.body["metadata"] == {"user_id": "u-1"}
    else:
        assert recorded.body["user"] == "u-1"
    assert recorded.headers["x-model-header"] == "m"
    assert recorded.headers["x-call-header"] == "c"


@pytest.mark.parametrize("api", APIS)
async def test_length_stop_maps_to_length(fake: FakeLLM, api: str) -> None:
    fake.script([Reply([text("cut")], stop_reason="max_tokens")])
    events = await collect(api, model_for(fake, api), ask())
    assert isinstance(events[-1], Done) and events[-1].reason == "length"


async def test_anthropic_refusal_is_an_error(fake: FakeLLM) -> None:
    fake.script([Reply([text("no")], stop_reason="refusal")])
    events = await collect("anthropic", model_for(fake, "anthropic"), ask())
    assert isinstance(events[-1], Error)
    assert "refusal" in (events[-1].error.error_message or "")


async def test_chat_tool_calls_interleaved_by_index_are_kept_apart(fake: FakeLLM) -> None:
    fake.script(
        [
            Reply(
                [tool_call("read", {"path": "first.txt"}), tool_call("read", {"path": "second.txt"})],
                interleave_tool_calls=True,
                chunk=4,
            )
        ]
    )
    message = final(await collect("chat", model_for(fake, "chat"), ask()))
    calls = message.tool_calls()
    assert [c.arguments for c in calls] == [{"path": "first.txt"}, {"path": "second.txt"}]
    assert len({c.id for c in calls}) == 2


@pytest.mark.parametrize("api", APIS)
async def test_missing_api_key_is_an_error_event(fake: FakeLLM, api: str) -> None:
    events = [e async for e in stream_fn(api)(model_for(fake, api), ask(), StreamOptions())]
    assert isinstance(events[-1], Error)
    assert "No API key" in (events[-1].error.error_message or "")
    assert fake.requests == []


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning", "reasoning_text"])
async def test_chat_reasoning_text_is_read_from_each_compatible_field(field: str) -> None:
    fake = FakeLLM(reasoning_field=field)
    fake.script([Reply([thinking("considering"), text("answer")])])
    with fake.serve():
        message = final(await collect("chat", model_for(fake, "chat"), ask(), thinking="high"))
    block = message.content[0]
    assert isinstance(block, ThinkingContent)
    assert block.thinking == "considering"
    assert block.thinking_signature == field
    assert message.text() == "answer"


@pytest.mark.parametrize("api", APIS)
async def test_an_already_aborted_signal_ends_at_once_without_an_answer(fake: FakeLLM, api: str) -> None:
    fake.script([Reply([text("never read")], first_byte_delay=5)])
    signal = AbortSignal()
    signal.abort()
    started = time.monotonic()
    events = await collect(api, model_for(fake, api), ask(), signal=signal)
    assert time.monotonic() - started < 3
    assert [e.type for e in events] == ["start", "error"]
    assert final(events).stop_reason == "aborted"


@pytest.mark.parametrize("api", APIS)
async def test_a_consumer_that_stops_early_can_close_the_stream_promptly(fake: FakeLLM, api: str) -> None:
    fake.script([Reply([text(" ".join(f"w{i}" for i in range(200)))], frame_delay=0.05)])
    stream = stream_fn(api)(model_for(fake, api), ask(), StreamOptions(api_key="k"))
    async for event in stream:
        if isinstance(event, TextDelta):
            break
    started = time.monotonic()
    await stream.aclose()  # type: ignore[attr-defined]
    assert time.monotonic() - started < 3


@pytest.mark.parametrize(
    ("api", "raw"), [("anthropic", "tool_use"), ("chat", "tool_calls"), ("responses", "completed")]
)
async def test_answers_carry_the_provider_response_id_and_raw_stop_reason(
    fake: FakeLLM, api: str, raw: str
) -> None:
    fake.script([Reply([text("Reading."), tool_call("read", {"path": "a"})])])
    message = final(await collect(api, model_for(fake, api), ask()))
    assert message.stop_reason == "toolUse"
    assert message.raw_stop_reason == raw  # pi 0.87's rawStopReason: the provider's word, unmapped
    assert message.response_id  # pi's responseId: the provider's id for the answer
    stored = message.to_json_dict()
    assert (stored["responseId"], stored["rawStopReason"]) == (message.response_id, raw)


async def test_anthropic_usage_is_known_while_the_answer_streams(fake: FakeLLM) -> None:
    """As pi: message_start's counts (input, cache) with their total and cost are on the partial message
    from the first delta on, so a live usage display (RPC ``message_update.usage``) is not zero."""
    fake.script([Reply([text("one two three four")])])
    prices = ModelCost(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)
    model = model_for(fake, "anthropic").model_copy(update={"cost": prices})
    seen = None
    async for event in stream_fn("anthropic")(model, ask(), StreamOptions(api_key="k")):
        if seen is None and isinstance(event, TextDelta):
            seen = event.partial.usage.model_copy(deep=True)  # the partial keeps changing: copy it now
        last = event
    assert seen is not None and seen.input > 0
    assert seen.total_tokens == seen.input + seen.output + seen.cache_read + seen.cache_write
    assert seen.cost.input > 0
    assert isinstance(last, Done) and last.message.usage.total_tokens >= seen.total_tokens


async def test_chat_text_ends_with_the_answer_after_the_tool_calls_start_as_in_pi(fake: FakeLLM) -> None:
    fake.script(
        [Reply([text("Reading."), tool_call("read", {"path": "a"}), tool_call("read", {"path": "b"})])]
    )
    events = await collect("chat", model_for(fake, "chat"), ask())
    kinds = [e.type for e in events if e.type.endswith(("_start", "_end")) and e.type != "start"]
    assert kinds == [
        "text_start",
        "toolcall_start",
        "toolcall_start",
        "text_end",
        "toolcall_end",
        "toolcall_end",
    ]
    message = final(events)
    assert message.text() == "Reading." and [c.arguments for c in message.tool_calls()] == [
        {"path": "a"},
        {"path": "b"},
    ]
