from __future__ import annotations

import asyncio
import time

import pytest

from pi_tui.ai.providers._common import parse_arguments
from pi_tui.ai.providers._partial_json import PartialJson
from pi_tui.ai.providers.google import stream_google
from pi_tui.ai.stream import Error, LlmRequest, StreamOptions
from pi_tui.ai.types import Model, UserMessage
from pi_tui.util.json_safe import MAX_DEPTH, MAX_RECORD_DEPTH

from .test_http_client import TinyServer, sse_response
from .test_provider_streaming import _API_NAMES, _FNS

HOSTILE = "[" * 100_000 + "]" * 100_000

# One well-formed event, then one nested far too deeply, then what would have followed.
EVENTS = {
    "anthropic": (
        'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message",'
        '"role":"assistant","model":"claude-x","content":[],"stop_reason":null,'
        '"usage":{"input_tokens":1,"output_tokens":1}}}\n\n'
        f"event: content_block_start\ndata: {HOSTILE}\n\n"
        'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    ),
    "chat": (
        'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-x",'
        '"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}\n\n'
        f"data: {HOSTILE}\n\n"
        "data: [DONE]\n\n"
    ),
    "responses": f"event: response.created\ndata: {HOSTILE}\n\ndata: [DONE]\n\n",
    "google": (
        'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]}}]}\n\n'
        f"data: {HOSTILE}\n\n"
    ),
}
STREAMS = {**_FNS, "google": stream_google}
API_NAMES = {**_API_NAMES, "google": "google-generative-ai"}


@pytest.mark.parametrize("api", list(EVENTS))
async def test_a_deep_server_sent_event_ends_the_answer_with_a_clear_error(api: str) -> None:
    body = EVENTS[api].encode()

    async def handler(server: TinyServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.request(reader)
        writer.write(sse_response(body))
        await writer.drain()

    async with TinyServer(handler) as server:
        base_url = {"anthropic": server.url, "google": f"{server.url}/v1beta"}.get(api, f"{server.url}/v1")
        model = Model(
            id="gemini-2.5-flash", api=API_NAMES[api], provider="p", base_url=base_url, max_tokens=100
        )
        request = LlmRequest("sys", [UserMessage(content="hi")], [])
        events = [event async for event in STREAMS[api](model, request, StreamOptions(api_key="k"))]
    last = events[-1]
    assert isinstance(last, Error)
    assert f"JSON nested deeper than {MAX_RECORD_DEPTH} levels" in (last.error.error_message or "")


def test_streamed_arguments_nested_too_deeply_are_followed_in_linear_time_and_rejected() -> None:
    text = '{"path":"a","tree":' + HOSTILE + "}"
    parser = PartialJson()
    start = time.process_time()  # CPU time: a loaded machine's wall clock counts other processes' turns
    for i in range(0, len(text), 24):  # the pieces a provider streams
        parser.feed(text[i : i + 24])
        value = parser.value()
    assert time.process_time() - start < 1.0  # ~0.01 s here; quadratic would be minutes
    assert value is None
    assert parser.text == text
    assert parse_arguments(text) == ({}, False)


def test_streamed_arguments_at_the_limit_are_parsed_while_they_arrive_and_at_the_end() -> None:
    inner = "[" * (MAX_DEPTH - 1) + "1" + "]" * (MAX_DEPTH - 1)
    text = '{"tree":' + inner + ',"path":"a.txt"}'
    parser = PartialJson()
    partial_trees = 0
    for i in range(0, len(text) - 7, 7):
        parser.feed(text[i : i + 7])
        value = parser.value()
        partial_trees += isinstance(value, dict) and "tree" in value and "path" not in value
    parser.feed(text[i + 7 :])
    arguments, ok = parse_arguments(text)
    assert ok and arguments["path"] == "a.txt" and parser.value() == arguments
    assert partial_trees > 0  # the partial value was there while the text arrived


async def test_deep_signatures_from_a_session_are_ignored_when_the_history_is_replayed() -> None:
    from pi_tui.ai.types import AssistantMessage, TextContent, ThinkingContent
    from pi_tui.testing import FakeLLM, Reply, text

    deep_text = '{"v":1,"id":"msg_1","x":' + HOSTILE + "}"
    deep_reasoning = '{"type":"reasoning","id":"rs_1","x":' + HOSTILE + "}"
    history = [
        UserMessage(content="hi"),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="hmm", thinking_signature=deep_reasoning),
                TextContent(text="hello", text_signature=deep_text),
            ],
            api="openai-responses",
            provider="openai",
            model="gpt-5",
            stop_reason="stop",
        ),
        UserMessage(content="again"),
    ]
    fake = FakeLLM()
    fake.script([Reply([text("fine")])])
    with fake.serve() as server:
        model = Model(id="gpt-5", api="openai-responses", provider="openai", base_url=server.openai_base_url)
        request = LlmRequest("sys", history, [])
        events = [e async for e in STREAMS["responses"](model, request, StreamOptions(api_key="k"))]
    assert events[-1].type == "done"
    assert fake.violations == []
