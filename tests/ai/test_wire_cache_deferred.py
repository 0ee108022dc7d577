"""A long first conversion (a resumed session's first request) keeps its conversions for later requests
only once its body has been written, while the server reads it: the body itself, and every later one,
is byte for byte what it was when they were kept at once."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from pi_tui.ai.providers import anthropic, openai_completions
from pi_tui.ai.providers._wire_cache import DEFER_KEEPING_FROM, keep_deferred
from pi_tui.ai.stream import Done, LlmRequest, StreamOptions
from pi_tui.ai.types import AssistantMessage, Model, TextContent, ToolCall, ToolResultMessage, UserMessage
from pi_tui.ai.wire import WireClient
from pi_tui.testing import FakeLLM, Reply, text

from .test_http_client import HEADERS, TinyServer, read_all, sse_response

MODELS = {
    "anthropic": Model(id="claude-opus-4-1", api="anthropic-messages", provider="anthropic"),
    "chat": Model(id="gpt-5", api="openai-completions", provider="openai"),
}
MODULES: dict[str, Any] = {"anthropic": anthropic, "chat": openai_completions}


def _history(model: Model, turns: int, floats_every: int = 0) -> list[Any]:
    """A tool loop of ``turns`` calls and results; every ``floats_every``-th call has a float argument
    (JSON that orjson writes differently from the stdlib, so never encoded in a plain run)."""
    messages: list[Any] = [UserMessage(content="read them all")]
    for i in range(turns):
        arguments: dict[str, Any] = {"path": f"f{i}.py"}
        if floats_every and i % floats_every == 0:
            arguments["tolerance"] = [1e-05, 2.5e-07, 1e16][i % 3]
        messages.append(
            AssistantMessage(
                content=[
                    TextContent(text=f"step {i} ü"),
                    ToolCall(id=f"toolu_{i}", name="read", arguments=arguments),
                ],
                api=model.api,
                provider=model.provider,
                model=model.id,
                stop_reason="toolUse",
            )
        )
        messages.append(
            ToolResultMessage(
                tool_call_id=f"toolu_{i}", tool_name="read", content=[TextContent(text=f"data {i}")]
            )
        )
    return messages


def _plain(api: str, request: LlmRequest) -> bytes:
    """The body as the stdlib encodes it when built without any cache (an on_payload hook turns it off)."""
    body = MODULES[api].build_request(MODELS[api], request, StreamOptions(on_payload=lambda body: None))
    ordered = {"messages": body["messages"], **{k: v for k, v in body.items() if k != "messages"}}
    return json.dumps(ordered, ensure_ascii=False, separators=(",", ":")).encode()


def _sent(api: str, request: LlmRequest) -> tuple[bytes, list[Any]]:
    body = MODULES[api].build_request(MODELS[api], request, StreamOptions())
    return MODULES[api]._encode(body), body["messages"]


def test_a_long_first_conversion_is_kept_after_its_body_and_then_serves_the_next_ones() -> None:
    model = MODELS["anthropic"]
    history = _history(model, DEFER_KEEPING_FROM // 2 + 10)
    assert len(history) > DEFER_KEEPING_FROM
    request = LlmRequest("s", [*history, UserMessage(content="hi")], cache_boundary=len(history))
    keep_deferred()  # whatever earlier tests left
    body, wire = _sent("anthropic", request)
    assert body == _plain("anthropic", request)
    assert anthropic._CACHE.pending >= len(history) - 1  # converted, not yet kept
    # Another request over the same messages (not an extension of the first: another first message)
    # before the body is written converts them again: nothing of the first was kept yet.
    shifted = LlmRequest("s", history[1:], cache_boundary=len(history) - 1)
    _, before = _sent("anthropic", shifted)
    assert not any(a is b for a, b in zip(wire[1:50], before[:49], strict=True))

    keep_deferred()  # what the HTTP layer calls once the body is written
    assert anthropic._CACHE.pending == 0
    _, again = _sent("anthropic", LlmRequest("s", history[3:], cache_boundary=len(history) - 3))
    # kept now, in the order converted: the first request's wire messages come back
    assert all(a is b for a, b in zip(again[:100], wire[3:103], strict=True))


@pytest.mark.parametrize("api", list(MODELS))
def test_bodies_stay_the_stdlib_bytes_whether_or_not_the_deferred_keeping_has_run(api: str) -> None:
    """Float arguments make some messages not plain: their JSON is kept only by the deferred keeping,
    and a message converted again before it ran is kept once (its plain mark must not outlive it)."""
    model = MODELS[api]
    history = _history(model, DEFER_KEEPING_FROM // 2 + 40, floats_every=7)
    keep_deferred()
    requests = [
        LlmRequest("s", [*history, UserMessage(content="hi")], cache_boundary=len(history)),  # deferred
        LlmRequest("s", history[-300:], cache_boundary=300),  # a short first conversion, kept at once
        LlmRequest("s", history[-700:], cache_boundary=690),
    ]
    for index, request in enumerate(requests):
        body, _ = _sent(api, request)
        assert body == _plain(api, request), index
        assert b"1e-05" in body
        if index == 1:
            keep_deferred()  # the long conversion is kept after a short one converted the same messages
    keep_deferred()
    for request in requests[::-1]:  # every message now kept: bodies from the kept JSON
        assert _sent(api, request)[0] == _plain(api, request)
    assert MODULES[api]._CACHE.pending == 0


@pytest.fixture
async def client_for() -> AsyncIterator[Callable[[str], WireClient]]:
    clients: list[WireClient] = []

    def make(url: str) -> WireClient:
        client = WireClient(url, HEADERS)
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.close()


async def test_after_write_runs_once_the_body_is_sent_and_before_the_answer(
    monkeypatch: pytest.MonkeyPatch, client_for: Callable[[str], WireClient]
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    body = b'{"messages":[' + b",".join(b'{"role":"user","content":"%d"}' % i for i in range(50_000)) + b"]}"
    written = asyncio.Event()
    received: list[int] = []  # the length of the request the server read

    async def answer_when_told(
        server: TinyServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        raw = await server.request(reader)
        assert raw is not None
        received.append(len(raw))
        await written.wait()  # the answer only comes after the client said its body was written
        writer.write(sse_response())
        await writer.drain()
        await server.wait_for_client_close(reader)

    async with TinyServer(answer_when_told) as server:
        # Without the call the server never answers, and the wait times out.
        stream = await asyncio.wait_for(
            client_for(server.url).stream("/v1/messages", body, 10, after_write=written.set), 20
        )
        assert await read_all(stream) == [("a", "1"), ("b", "2")]
    assert written.is_set() and received[0] > len(body)


async def test_a_streamed_long_first_request_is_kept_by_the_time_its_answer_is_read() -> None:
    model = MODELS["anthropic"]
    history = _history(model, DEFER_KEEPING_FROM // 2 + 10)
    fake = FakeLLM()
    fake.script([Reply([text("Done.")])])
    keep_deferred()
    with fake.serve() as server:
        served = model.model_copy(update={"base_url": server.anthropic_base_url})
        request = LlmRequest("s", [*history, UserMessage(content="hi")], cache_boundary=len(history))
        events = [e async for e in anthropic.stream_anthropic(served, request, StreamOptions(api_key="k"))]
    assert isinstance(events[-1], Done), events[-1]
    assert anthropic._CACHE.pending == 0
    assert len(fake.requests[0].body["messages"]) == len(history) + 1
