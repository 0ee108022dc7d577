from __future__ import annotations

import asyncio
import json
import threading

import pytest

from pi_tui.ai.cost import calculate_cost
from pi_tui.ai.providers._common import (
    IncompleteStreamError,
    MessageBuilder,
    describe_error,
    parse_arguments,
    read_sdk_stream,
)
from pi_tui.ai.providers._history import prepare_messages, sanitize_tool_call_id
from pi_tui.ai.providers._partial_json import PartialJson, parse_partial_json
from pi_tui.ai.stream import AbortedError, AbortSignal
from pi_tui.ai.types import (
    AssistantMessage,
    Model,
    ModelCost,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

MODEL = Model(id="m1", api="anthropic-messages", provider="anthropic")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"path": "a.t', {"path": "a.t"}),
        ('{"path": "a.txt", "lim', {"path": "a.txt"}),
        ('{"path": "a.txt", "limit": 1', {"path": "a.txt", "limit": 1}),
        ('{"path": "a.txt", "flag": tr', {"path": "a.txt"}),
        ('{"a": {"b": [1, 2', {"a": {"b": [1, 2]}}),
        ('{"a": "x\\', {"a": "x"}),
        ('{"a": "\\u00', {"a": ""}),
        ('{"a": "line\\nnext', {"a": "line\nnext"}),
        ('{"a":', {}),
        ("{", {}),
        ("", None),
    ],
)
def test_partial_json_reads_the_longest_sensible_prefix(text: str, expected: object) -> None:
    assert parse_partial_json(text) == expected


def test_partial_json_fed_in_fragments_matches_the_whole_text() -> None:
    whole = json.dumps({"path": "src/x.py", "content": "def f():\n    return {'a': [1, 2]}\n" * 50, "n": 3})
    parser = PartialJson()
    seen = []
    for i in range(0, len(whole), 7):
        parser.feed(whole[i : i + 7])
        value = parser.value()
        assert value is None or isinstance(value, dict)
        seen.append(value)
    assert parser.value() == json.loads(whole)
    # Arguments grow as they stream: the content field is visible long before the end.
    assert any(isinstance(v, dict) and "content" in v and v != json.loads(whole) for v in seen)


def test_final_arguments_that_are_not_a_json_object_become_empty_and_flagged() -> None:
    assert parse_arguments("") == ({}, True)
    assert parse_arguments('{"a": 1}') == ({"a": 1}, True)
    assert parse_arguments('{"a": ') == ({}, False)
    assert parse_arguments("[1, 2]") == ({}, False)


def test_invalid_final_tool_json_keeps_the_raw_text_on_the_block() -> None:
    out = MessageBuilder(MODEL)
    index, _ = out.begin_tool_call("toolu_1", "bash")
    out.tool_call_delta(index, '{"command": "ls')
    assert out.tool_call(index).arguments == {"command": "ls"}
    end = out.end_tool_call(index)
    assert end.tool_call.arguments == {}
    assert end.tool_call.to_json_dict()["rawArguments"] == '{"command": "ls'


@pytest.mark.parametrize(
    "raw",
    ["toolu_01ABCdef", "call_abc|fc_" + "x" * 400, "weird id/with:chars", "", "a" * 64, "a" * 65],
)
def test_sanitized_tool_call_ids_fit_the_anthropic_pattern(raw: str) -> None:
    clean = sanitize_tool_call_id(raw)
    assert 1 <= len(clean) <= 64
    assert all(c.isalnum() or c in "_-" for c in clean)
    assert sanitize_tool_call_id(raw) == clean


def test_long_ids_with_a_shared_prefix_stay_distinct() -> None:
    a = sanitize_tool_call_id("p" * 100 + "a")
    b = sanitize_tool_call_id("p" * 100 + "b")
    assert a != b
    assert sanitize_tool_call_id("short_id") == "short_id"


def _assistant(*content: object, stop: str = "toolUse", model: str = "m1") -> AssistantMessage:
    return AssistantMessage(
        content=list(content), api="anthropic-messages", provider="anthropic", model=model, stop_reason=stop
    )


def test_prepare_drops_failed_turns_and_their_orphan_results() -> None:
    messages = [
        UserMessage(content="hi"),
        _assistant(ToolCall(id="t1", name="read", arguments={}), stop="aborted"),
        ToolResultMessage(tool_call_id="t1", tool_name="read", content=[TextContent(text="x")]),
        UserMessage(content="again"),
    ]
    out, boundary = prepare_messages(messages, MODEL, None)
    assert [m.role for m in out] == ["user", "user"]
    assert boundary == 2


def test_prepare_answers_tool_calls_left_without_results() -> None:
    messages = [
        UserMessage(content="hi"),
        _assistant(ToolCall(id="t1", name="read"), ToolCall(id="t2", name="ls")),
        ToolResultMessage(tool_call_id="t1", tool_name="read", content=[TextContent(text="x")]),
        UserMessage(content="stop that"),
    ]
    out, _ = prepare_messages(messages, MODEL, None)
    assert [m.role for m in out] == ["user", "assistant", "toolResult", "toolResult", "user"]
    synthetic = out[3]
    assert isinstance(synthetic, ToolResultMessage)
    assert synthetic.tool_call_id == "t2" and synthetic.is_error


def test_prepare_maps_the_cache_boundary_onto_the_new_list() -> None:
    messages = [
        UserMessage(content="one"),
        _assistant(TextContent(text="bad"), stop="error"),
        UserMessage(content="two"),
        _assistant(TextContent(text="ok"), stop="stop"),
        UserMessage(content="three"),
    ]
    out, boundary = prepare_messages(messages, MODEL, 3)
    assert [getattr(m, "content", None) for m in out[:boundary]] == ["one", "two"]
    assert prepare_messages(messages, MODEL, 0)[1] == 0


def test_thinking_from_another_model_is_replayed_as_text() -> None:
    other = _assistant(
        ThinkingContent(thinking="hmm", thinking_signature="sig"),
        ThinkingContent(thinking="", thinking_signature="opaque", redacted=True),
        TextContent(text="answer"),
        stop="stop",
        model="other-model",
    )
    out, _ = prepare_messages([UserMessage(content="q"), other], MODEL, None)
    converted = out[1]
    assert isinstance(converted, AssistantMessage)
    assert [(type(b).__name__, getattr(b, "text", None)) for b in converted.content] == [
        ("TextContent", "hmm"),
        ("TextContent", "answer"),
    ]
    same = _assistant(ThinkingContent(thinking="hmm", thinking_signature="sig"), stop="stop")
    assert prepare_messages([UserMessage(content="q"), same], MODEL, None)[0][1] is same


def test_cost_prices_one_hour_cache_writes_at_twice_the_input_price() -> None:
    model = Model(
        id="m",
        api="anthropic-messages",
        provider="anthropic",
        cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75),
    )
    usage = Usage(input=1_000_000, output=2_000_000, cache_read=1_000_000, cache_write=2_000_000)
    short = calculate_cost(model, usage)
    assert (short.input, short.output, short.cache_read, short.cache_write) == pytest.approx(
        (3, 30, 0.3, 7.5)
    )
    assert short.total == pytest.approx(40.8)
    mixed = calculate_cost(model, usage, cache_write_1h=1_000_000)
    assert mixed.cache_write == pytest.approx(3.75 + 6)


def test_incomplete_stream_error_text_is_retryable_wording() -> None:
    assert "stream ended without a stop reason" in describe_error(IncompleteStreamError())


class _StallingStream:
    def __init__(self) -> None:
        self.closed = False
        self.sent = 0

    def __aiter__(self) -> _StallingStream:
        return self

    async def __anext__(self) -> int:
        if self.sent == 0:
            self.sent += 1
            return 1
        await asyncio.Event().wait()  # never comes: a stalled server
        raise StopAsyncIteration

    async def close(self) -> None:
        self.closed = True


async def test_abort_from_another_thread_stops_a_stalled_stream_and_closes_it() -> None:
    stream = _StallingStream()
    signal = AbortSignal()

    async def open_stream() -> _StallingStream:
        return stream

    received = []
    with pytest.raises(AbortedError):
        async for item in read_sdk_stream(open_stream, signal):
            received.append(item)
            threading.Thread(target=signal.abort).start()
    assert received == [1]
    assert stream.closed


async def test_failures_of_the_sdk_call_surface_in_the_consumer() -> None:
    async def open_stream() -> object:
        raise ConnectionRefusedError("connection refused")

    with pytest.raises(ConnectionRefusedError):
        async for _ in read_sdk_stream(open_stream, None):
            pass
