from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest

from pi_tui.ai.providers.faux import (
    FAUX_MODEL,
    FauxCall,
    FauxScript,
    default_faux_response,
    faux_error,
    faux_reply,
    faux_thinking,
    faux_tool_call,
    set_faux_script,
    stream_faux,
)
from pi_tui.ai.stream import AbortSignal, LlmRequest, StreamOptions
from pi_tui.ai.types import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)


@pytest.fixture(autouse=True)
def no_installed_script() -> Iterator[None]:
    previous = set_faux_script(None)
    yield
    set_faux_script(previous)


def _request(text: str = "hi", tools: tuple[str, ...] = (), system: str = "") -> LlmRequest:
    return LlmRequest(
        system_prompt=system,
        messages=[UserMessage(content=text)],
        tools=[ToolDefinition(name=name) for name in tools],
    )


async def _collect(stream: Any) -> list[Any]:
    return [event async for event in stream]


async def test_scripted_text_streams_start_deltas_end_and_done():
    script = FauxScript(faux_reply("Hello there, world", chunk_size=5))
    events = await _collect(script.stream(FAUX_MODEL, _request(), StreamOptions()))
    assert [e.type for e in events] == [
        "start",
        "text_start",
        "text_delta",
        "text_delta",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    assert "".join(e.delta for e in events if e.type == "text_delta") == "Hello there, world"
    assert events[-2].content == "Hello there, world"
    done = events[-1]
    assert done.reason == "stop"
    assert done.message.text() == "Hello there, world"
    assert (done.message.provider, done.message.model, done.message.api) == ("faux", "faux-1", "faux")


async def test_partials_grow_and_earlier_snapshots_are_not_mutated():
    script = FauxScript(faux_reply("abcdef", chunk_size=2))
    events = await _collect(script.stream(FAUX_MODEL, _request(), StreamOptions()))
    deltas = [e for e in events if e.type == "text_delta"]
    assert [d.partial.text() for d in deltas] == ["ab", "abcd", "abcdef"]


async def test_tool_call_and_thinking_blocks_stream_with_their_events():
    call = faux_tool_call("read", {"path": "a.txt"}, id="call_1")
    script = FauxScript(faux_reply(faux_thinking("let me look"), call))
    events = await _collect(script.stream(FAUX_MODEL, _request(), StreamOptions()))
    types = [e.type for e in events]
    assert types[:2] == ["start", "thinking_start"]
    assert "toolcall_start" in types and "toolcall_delta" in types
    end = next(e for e in events if e.type == "toolcall_end")
    assert end.tool_call == ToolCall(id="call_1", name="read", arguments={"path": "a.txt"})
    assert "".join(e.delta for e in events if e.type == "toolcall_delta") == '{"path": "a.txt"}'
    done = events[-1]
    assert done.reason == "toolUse"
    assert isinstance(done.message.content[0], ThinkingContent)
    assert done.message.content[0].thinking == "let me look"


async def test_usage_is_estimated_at_four_characters_per_token():
    script = FauxScript(faux_reply("x" * 10))
    request = _request("y" * 20, system="s" * 3)
    done = (await _collect(script.stream(FAUX_MODEL, request, StreamOptions())))[-1]
    assert done.message.usage.input == math.ceil(23 / 4)
    assert done.message.usage.output == math.ceil(10 / 4)
    assert done.message.usage.total_tokens == done.message.usage.input + done.message.usage.output


async def test_error_response_streams_partial_text_then_an_error_event():
    script = FauxScript(faux_error("529 overloaded_error", "partial", retry_after_ms=1500))
    events = await _collect(script.stream(FAUX_MODEL, _request(), StreamOptions()))
    last = events[-1]
    assert last.type == "error" and last.reason == "error"
    assert last.error.stop_reason == "error"
    assert last.error.error_message == "529 overloaded_error"
    assert last.error.text() == "partial"
    assert last.error.to_json_dict()["retryAfterMs"] == 1500


async def test_exhausted_script_ends_with_a_clear_error():
    script = FauxScript(faux_reply("one"))
    await _collect(script.stream(FAUX_MODEL, _request(), StreamOptions()))
    events = await _collect(script.stream(FAUX_MODEL, _request(), StreamOptions()))
    assert events[-1].type == "error"
    assert "Faux script exhausted" in (events[-1].error.error_message or "")
    assert script.call_count == 2 and script.pending == 0


async def test_callable_step_answers_from_the_request():
    def answer(call: FauxCall) -> Any:
        last = call.request.messages[-1]
        assert isinstance(last, UserMessage)
        return faux_reply(f"#{call.index}: you said {last.content}")

    script = FauxScript(answer)
    events = await _collect(script.stream(FAUX_MODEL, _request("ping"), StreamOptions()))
    assert events[-1].message.text() == "#0: you said ping"
    assert script.requests[0].messages[0].content == "ping"


async def test_abort_between_deltas_ends_with_an_aborted_error():
    signal = AbortSignal()
    script = FauxScript(faux_reply("abcdefgh", chunk_size=1))
    seen: list[Any] = []
    async for event in script.stream(FAUX_MODEL, _request(), StreamOptions(signal=signal)):
        seen.append(event)
        if event.type == "text_delta" and len(seen) == 4:
            signal.abort()
    last = seen[-1]
    assert last.type == "error" and last.reason == "aborted"
    assert last.error.stop_reason == "aborted"
    assert last.error.text() == "ab"
    assert sum(1 for e in seen if e.type == "text_delta") == 2


async def test_already_aborted_request_yields_only_the_aborted_error():
    signal = AbortSignal()
    signal.abort()
    events = await _collect(
        FauxScript(faux_reply("x")).stream(FAUX_MODEL, _request(), StreamOptions(signal=signal))
    )
    assert [e.type for e in events] == ["error"]


async def test_default_answer_says_it_is_the_faux_provider_and_echoes_the_prompt():
    events = await _collect(stream_faux(FAUX_MODEL, _request("hi"), StreamOptions()))
    message = events[-1].message
    assert events[-1].type == "done"
    assert "faux provider" in message.text()
    assert "“hi”" in message.text()


async def test_default_answer_is_deterministic():
    first = default_faux_response(FAUX_MODEL, _request("hello"), StreamOptions())
    second = default_faux_response(FAUX_MODEL, _request("hello"), StreamOptions())
    assert first == second


async def test_default_read_prompt_becomes_a_read_tool_call_when_read_is_offered():
    events = await _collect(
        stream_faux(FAUX_MODEL, _request("read src/main.py", tools=("read",)), StreamOptions())
    )
    message = events[-1].message
    assert message.stop_reason == "toolUse"
    [call] = message.tool_calls()
    assert (call.name, call.arguments) == ("read", {"path": "src/main.py"})


async def test_default_read_prompt_without_the_tool_is_answered_in_text():
    events = await _collect(stream_faux(FAUX_MODEL, _request("read src/main.py"), StreamOptions()))
    assert events[-1].message.tool_calls() == []


async def test_default_run_prompt_becomes_a_bash_call():
    response = default_faux_response(FAUX_MODEL, _request("run ls -la", tools=("bash",)), StreamOptions())
    [call] = [b for b in response.content if isinstance(b, ToolCall)]
    assert call.arguments == {"command": "ls -la"}


async def test_default_answer_after_a_tool_result_summarizes_it():
    request = LlmRequest(
        system_prompt="",
        messages=[
            UserMessage(content="read a.txt"),
            AssistantMessage(content=[ToolCall(id="t1", name="read", arguments={"path": "a.txt"})]),
            ToolResultMessage(tool_call_id="t1", tool_name="read", content=[TextContent(text="one\ntwo")]),
        ],
    )
    response = default_faux_response(FAUX_MODEL, request, StreamOptions())
    text = response.content[0].text  # type: ignore[union-attr]
    assert "The `read` tool returned 2 lines" in text and "one\ntwo" in text


async def test_default_answer_thinks_when_thinking_is_on():
    response = default_faux_response(FAUX_MODEL, _request("hi"), StreamOptions(thinking="low"))
    assert isinstance(response.content[0], ThinkingContent)


async def test_installed_script_is_used_by_stream_faux():
    script = FauxScript(faux_reply("scripted"))
    set_faux_script(script)
    events = await _collect(stream_faux(FAUX_MODEL, _request(), StreamOptions()))
    assert events[-1].message.text() == "scripted"
    assert script.call_count == 1
