"""pi-tui's wire client on its own: environment proxies, keep-alive, error bodies, SSE framing."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator

import pytest

from pi_tui.ai.providers._common import describe_error
from pi_tui.ai.wire import HttpStatusError, WireClient, decode_sse, encode_body
from pi_tui.testing import FakeLLM, Fault, Reply, text

BODY = {
    "model": "claude-opus-4-1",
    "max_tokens": 64,
    "stream": True,
    "messages": [{"role": "user", "content": "hi"}],
}
HEADERS = {"x-api-key": "k", "anthropic-version": "2023-06-01"}


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    fake = FakeLLM()
    with fake.serve():
        yield fake


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _events(client: WireClient) -> list[tuple[str | None, str]]:
    stream = await client.stream("/v1/messages", encode_body(BODY))
    try:
        return [event async for event in stream]
    finally:
        await stream.close()


async def test_requests_go_through_the_proxy_the_environment_names(
    fake: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert fake.server is not None
    fake.script([Reply([text("direct")])])
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{_closed_port()}")
    monkeypatch.setenv("NO_PROXY", "")
    client = WireClient(fake.server.anthropic_base_url, HEADERS)
    try:
        with pytest.raises(Exception) as caught:  # the (closed) proxy, not the reachable server
            await _events(client)
        assert "Connection error" in describe_error(caught.value)
        assert fake.requests == []
    finally:
        await client.close()
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")  # the same proxy, bypassed for this host
    client = WireClient(fake.server.anthropic_base_url, HEADERS)
    try:
        events = await _events(client)
    finally:
        await client.close()
    assert events[0][0] == "message_start" and len(fake.requests) == 1


async def test_one_connection_serves_consecutive_requests(fake: FakeLLM) -> None:
    assert fake.server is not None
    fake.script([Reply([text("one")]), Reply([text("two")])])
    client = WireClient(fake.server.anthropic_base_url, HEADERS)
    try:
        await _events(client)
        await _events(client)
        transport = client._transport
        assert transport.connections_opened == 1 and transport.idle_connections == 1
    finally:
        await client.close()


async def test_an_http_error_carries_status_body_and_retry_after(fake: FakeLLM) -> None:
    assert fake.server is not None
    fake.script([Fault("rate_limit", retry_after_ms=250)])
    client = WireClient(fake.server.anthropic_base_url, HEADERS)
    try:
        with pytest.raises(HttpStatusError) as caught:
            await client.stream("/v1/messages", encode_body(BODY))
    finally:
        await client.close()
    error = caught.value
    assert error.status_code == 429
    assert error.body["error"]["type"] == "rate_limit_error"
    assert describe_error(error).startswith("429 rate_limit_error: ")
    assert describe_error(error).endswith("(retry after 250 ms)")


async def _chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


@pytest.mark.parametrize(
    "parts",
    [
        (b"event: a\ndata: 1\n\n", b"event: b\r\ndata: 2\r\n\r\n"),
        (b"event: a\rdata: 1\r", b"\r", b"event: b\ndata: 2\n", b"\n"),
        (b"event: a\ndata: 1\n\nevent: b\nda", b"ta: 2\n\n"),
        (b": comment\nevent: a\ndata: 1\n\n", b"id: 7\nretry: 5\nevent: b\ndata:2\n\n"),
    ],
)
async def test_sse_framing_across_reads_and_line_endings(parts: tuple[bytes, ...]) -> None:
    assert [e async for e in decode_sse(_chunks(*parts))] == [("a", "1"), ("b", "2")]


async def test_sse_keeps_multi_byte_characters_and_unicode_line_separators_whole() -> None:
    data = '{"t":"Zeile\u2028zwei 😀"}'.encode()
    cut = data.index("😀".encode()) + 2  # inside the emoji's four bytes
    events = [e async for e in decode_sse(_chunks(b"data: " + data[:cut], data[cut:] + b"\n\n"))]
    assert events == [(None, data.decode())]


async def test_multi_line_data_is_joined_with_newlines() -> None:
    events = [e async for e in decode_sse(_chunks(b"data: one\ndata: two\n\n"))]
    assert events == [(None, "one\ntwo")]
