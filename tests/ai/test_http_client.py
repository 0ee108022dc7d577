"""pi-tui's own HTTP/1.1 client (`pi_tui.ai.http`) behind `WireClient`, against tiny loopback servers
that write exact bytes: keep-alive, framing, connections the server closes, aborts, timeouts, errors."""

from __future__ import annotations

import asyncio
import gzip
import json
import shutil
import socket
import ssl
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from pi_tui.ai import http, http_env
from pi_tui.ai.errors import is_retryable_error
from pi_tui.ai.providers._common import describe_error, http_failure
from pi_tui.ai.types import AssistantMessage
from pi_tui.ai.wire import HttpStatusError, SseStream, WireClient, encode_body

BODY = encode_body({"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]})
HEADERS = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
EVENTS = b"event: a\ndata: 1\n\nevent: b\ndata: 2\n\n"

Handler = Callable[["TinyServer", asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class TinyServer:
    """A loopback asyncio server; ``handler`` serves each connection with raw bytes."""

    def __init__(self, handler: Handler, tls: ssl.SSLContext | None = None) -> None:
        self.handler = handler
        self.tls = tls
        self.connections = 0
        self.requests: list[bytes] = []  # each request's head and body, as received
        self.closed = asyncio.Event()  # set when the handler closed a connection itself
        self.client_gone = asyncio.Event()  # set when the client closed a connection
        self.alpn: list[str | None] = []
        self.port = 0

    async def __aenter__(self) -> TinyServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        ssl_object = writer.get_extra_info("ssl_object")
        if ssl_object is not None:
            self.alpn.append(ssl_object.selected_alpn_protocol())
        try:
            await self.handler(self, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def request(self, reader: asyncio.StreamReader) -> bytes | None:
        """The next request (head + body), or None when the client closed the connection."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None
        length = 0
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        raw = head + await reader.readexactly(length)
        self.requests.append(raw)
        return raw

    async def wait_for_client_close(self, reader: asyncio.StreamReader) -> None:
        while await reader.read(1024):
            pass
        self.client_gone.set()


def sse_response(body: bytes = EVENTS, extra: bytes = b"") -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
        + extra
        + b"\r\n"
        + b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    )


async def serve_forever(
    server: TinyServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    while await server.request(reader) is not None:
        writer.write(sse_response())
        await writer.drain()


async def read_all(stream: SseStream) -> list[tuple[str | None, str]]:
    try:
        return [event async for event in stream]
    finally:
        await stream.close()


async def events_of(client: WireClient, timeout: float | None = None) -> list[tuple[str | None, str]]:
    return await read_all(await client.stream("/v1/messages", BODY, timeout))


@pytest.fixture
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


@pytest.fixture
async def client_for() -> AsyncIterator[Callable[[str], WireClient]]:
    clients: list[WireClient] = []

    def make(url: str) -> WireClient:
        client = WireClient(url, HEADERS)
        assert not client.proxied
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.close()


def _retryable(exc: BaseException) -> bool:
    return is_retryable_error(AssistantMessage(stop_reason="error", error_message=describe_error(exc)))


async def test_consecutive_requests_share_one_connection_and_send_the_expected_head(
    no_proxy: None, client_for: Callable[[str], WireClient]
) -> None:
    async with TinyServer(serve_forever) as server:
        client = client_for(server.url + "/v1/")  # a path prefix and a trailing slash
        for _ in range(3):
            assert await events_of(client) == [("a", "1"), ("b", "2")]
    assert server.connections == 1 and len(server.requests) == 3
    head, _, body = server.requests[0].partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /v1/v1/messages HTTP/1.1"
    fields = {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip() for line in lines[1:]}
    assert fields["host"] == f"127.0.0.1:{server.port}"
    assert fields["user-agent"].startswith("pi-tui/")
    assert fields["content-type"] == "application/json"
    assert fields["content-length"] == str(len(BODY)) and body == BODY
    assert fields["x-api-key"] == "k" and fields["anthropic-version"] == "2023-06-01"


async def test_chunked_bodies_split_at_odd_places_decode_the_same(
    no_proxy: None, client_for: Callable[[str], WireClient]
) -> None:
    sizes = [1, 3, 7, 2, 11, 5, 100]
    wire = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    rest = EVENTS + "event: c\ndata: ünï 😀\n\n".encode()
    for size in sizes:
        piece, rest = rest[:size], rest[size:]
        if piece:
            wire += b"%x;ext=1\r\n%s\r\n" % (len(piece), piece)
    wire += b"0\r\nx-trailer: yes\r\n\r\n"

    async def handler(server: TinyServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await server.request(reader) is not None:
            for start in range(0, len(wire), 4):  # cuts inside sizes, CRLFs and UTF-8 sequences
                writer.write(wire[start : start + 4])
                await writer.drain()

    async with TinyServer(handler) as server:
        client = client_for(server.url)
        first = await events_of(client)
        second = await events_of(client)
    assert first == second == [("a", "1"), ("b", "2"), ("c", "ünï 😀")]
    assert server.connections == 1


async def test_a_content_length_body_is_read_to_its_length(
    no_proxy: None, client_for: Callable[[str], WireClient]
) -> None:
    async def handler(server: TinyServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await server.request(reader) is not None:
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(EVENTS), EVENTS))
            await writer.drain()

    async with TinyServer(handler) as server:
        client = client_for(server.url)
        assert await events_of(client) == await events_of(client) == [("a", "1"), ("b", "2")]
    assert server.connections == 1


async def test_a_body_larger_than_the_socket_buffer_reaches_a_slow_server_byte_for_byte(
    no_proxy: None, client_for: Callable[[str], WireClient]
) -> None:
    """A long conversation's body (megabytes) can't go out in one send: the rest is queued, possibly
    several times, while the server reads slowly; every byte must arrive once and in order."""
    big = bytes(range(256)) * (6 * 4096)  # 6 MiB, no repeating line structure to hide a reordering
    received: list[bytes] = []

    async def handler(server: TinyServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.partition(b":")[2])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
        body = bytearray()
        while len(body) < length:
            body += await reader.read(min(32768, length - len(body)))
            await asyncio.sleep(0)  # let the client's transport fill its buffer between reads
        received.append(bytes(body))
        writer.write(sse_response())
        await writer.drain()

    async with TinyServer(handler) as server:
        client = client_for(server.url)
        stream = await client.stream("/v1/messages", big)
        assert await read_all(stream) == [("a", "1"), ("b", "2")]
    assert received == [big]


async def test_a_body_ended_by_connection_close_is_read_and_its_connection_not_reused(
    no_proxy: None, client_for: Callable[[str], WireClient]
) -> None:
    async def handler(server: TinyServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n" + EVENTS)  # no length: ends at EOF
        await writer.drain()

    async with TinyServer(handler) as server:
        client = client_for(server.url)
        assert await events_of(client) == await events_of(client) == [("a", "1"), ("b", "2")]
    assert server.connections == 2 and client._transport.idle_connections == 0


async def test_a_gzip_body_is_decoded(no_proxy: None, client_for: Callable[[str], WireClient]) -> None:
    packed = gzip.compress(EVENTS)

    async def handler(server: TinyServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: %d\r\n\r\n" % len(packed))
        for start in range(0, len(packed), 7):
            writer.write(packed[start : start + 7])
            await writer.drain()

    async with TinyServer(handler) as server:
        client = client_for(server.url)
        assert await events_of(client) == [("a", "1"), ("b", "2")]
    assert b"accept-encoding" not in server.requests[0].lower()  # never asked for, still understood


@pytest.mark.parametrize("chunked", [False, True])
async def test_a_response_cut_mid_body_is_a_retryable_protocol_error(
    no_proxy: None, client_for: Callable[[str], WireClient], chunked: bool
) -> None:
    async def handler(server: TinyServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.request(reader)
        if chunked:
            writer.write(sse_response()[:-12])  # stops inside the last chunk
        else:
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n" + EVENTS[:20])
        await writer.drain()

    async with TinyServer(handler) as server:
        client = client_for(server.url)
        stream = await client.stream("/v1/messages", BODY)
        with pytest.raises(http.RemoteProtocolError) as caught:
            await read_all(stream)
    assert "peer closed connection without sending complete message body" in str(caught.value)
    assert describe_error(caught.value).startswith("Connection error (RemoteProtocolError: peer closed")
    assert _retryable(caught.value)
    assert client._transport.idle_connections == 0


async def test_a_kept_alive_connection_the_server_closed_is_replaced_before_sending(
    no_proxy: None, client_for: Callable[[str], WireClient]
) -> None:
    async def handler(server: TinyServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.request(reader)
        writer.write(sse_response())  # keep-alive by default, but the server closes right after
        await writer.drain()
        writer.close()
        await writer.wait_closed()
        server.closed.set()

    async with TinyServer(handler) as server:
        client = client_for(server.url)
        assert await events_of(client) == [("a", "1"), ("b", "2")]
        await server.closed.wait()
        assert await events_of(client) == [("a", "1"), ("b", "2")]
    assert server.connections == 2 and len(server.requests) == 2


async def test_a_request_that_reached_the_server_is_never_sent_again(
    no_proxy: None, client_for: Callable[[str], WireClient]
) -> None:
    async def handler(server: TinyServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.request(reader)
        writer.write(sse_response())
        await writer.drain()
        await server.request(reader)  # the second request arrives on the kept-alive connection ...
        # ... and the server goes away without answering it

    async with TinyServer(handler) as server:
        client = client_for(server.url)
        await events_of(client)
        with pytest.raises(http.RemoteProtocolError, match="Server disconnected without sending a response"):
            await events_of(client)
    assert len(server.requests) == 2 and server.connections == 1


async def test_closing_a_stream_early_closes_its_connection_at_once(
    no_proxy: None, client_for: Callable[[str], WireClient]
) -> None:
    async def handler(server: TinyServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.request(reader)
        writer.write(
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n%x\r\n%s\r\n" % (len(EVENTS), EVENTS)
        )
        await writer.drain()
        await server.wait_for_client_close(reader)  # never finishes the answer on its own

    async with TinyServer(handler) as server:
        client = client_for(server.url)
        stream = await client.stream("/v1/messages", BODY)
        events = aiter(stream)
        assert await anext(events) == ("a", "1")
        await stream.close()
        await asyncio.wait_for(server.client_gone.wait(), 10)
        assert client._transport.idle_connections == 0


async def test_cancelling_a_read_closes_its_connection_at_once(
    no_proxy: None, client_for: Callable[[str], WireClient]
) -> None:
    async def handler(server: TinyServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        await writer.drain()
        server.closed.set()  # headers sent; the body never comes
        await server.wait_for_client_close(reader)

    async with TinyServer(handler) as server:
        client = client_for(server.url)

        async def consume() -> None:
            await read_all(await client.stream("/v1/messages", BODY))

        task = asyncio.create_task(consume())
        await server.closed.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.wait_for(server.client_gone.wait(), 10)


async def test_a_refused_connection_is_a_retryable_connection_error(
    no_proxy: None, client_for: Callable[[str], WireClient]
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = client_for(f"http://127.0.0.1:{port}")
    with pytest.raises(http.ConnectError) as caught:
        await client.stream("/v1/messages", BODY)
    text = describe_error(caught.value)
    assert text.startswith("Connection error (ConnectError: ")
    # which address could not be reached, and what to check, in the one line the user sees
    assert f"127.0.0.1:{port}" in text
    assert "check the network" in text and "baseUrl" in text
    assert _retryable(caught.value)


@pytest.mark.parametrize("headers_sent", [False, True])
async def test_silence_longer_than_the_timeout_is_a_read_timeout(
    no_proxy: None, client_for: Callable[[str], WireClient], headers_sent: bool
) -> None:
    async def handler(server: TinyServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.request(reader)
        if headers_sent:
            writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\n: hi\n\r\n")
            await writer.drain()
        await server.wait_for_client_close(reader)

    async with TinyServer(handler) as server:
        client = client_for(server.url)
        # The timeout bounds the connect too (the smaller of the two): long enough that a loopback
        # connect on a loaded machine never runs out, so what runs out is the wait for the answer.
        with pytest.raises(http.ReadTimeout) as caught:
            await events_of(client, timeout=2.0)
        await asyncio.wait_for(server.client_gone.wait(), 10)  # the stalled connection was dropped
    assert type(caught.value).__name__ == "ReadTimeout"  # what the providers turn into IdleTimeoutError
    assert describe_error(caught.value) == "Request timed out (ReadTimeout: The read operation timed out)"


async def test_a_429_keeps_status_body_and_retry_after_and_the_connection(
    no_proxy: None, client_for: Callable[[str], WireClient]
) -> None:
    error = json.dumps(
        {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}}
    ).encode()

    async def handler(server: TinyServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.request(reader)
        writer.write(
            b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\ncontent-type: application/json\r\n"
            b"content-length: %d\r\n\r\n%s" % (len(error), error)
        )
        await serve_forever(server, reader, writer)

    async with TinyServer(handler) as server:
        client = client_for(server.url)
        with pytest.raises(HttpStatusError) as caught:
            await client.stream("/v1/messages", BODY)
        assert await events_of(client) == [("a", "1"), ("b", "2")]  # the error body was read: reused
    failure = caught.value
    assert failure.status_code == 429 and failure.response.status_code == 429
    assert failure.response.headers.get("retry-after") == failure.response.headers.get("RETRY-AFTER") == "3"
    assert failure.response.text == error.decode()
    assert failure.body["error"]["type"] == "rate_limit_error"
    assert describe_error(failure) == "429 rate_limit_error: Slow down (retry after 3000 ms)"
    assert _retryable(failure)
    assert server.connections == 1


async def test_a_429_through_a_proxy_reads_as_the_same_http_failure(
    no_proxy: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    error = json.dumps({"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}})

    async def handler(server: TinyServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.request(reader)
        writer.write(
            b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\ncontent-type: application/json\r\n"
            b"content-length: %d\r\n\r\n%s" % (len(error), error.encode())
        )
        await writer.drain()
        writer.close()

    async with TinyServer(handler) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        client = WireClient("http://llm.invalid:8080/v1", HEADERS)
        try:
            assert client.proxied
            with pytest.raises(HttpStatusError) as caught:
                await client.stream("/v1/messages", BODY)
        finally:
            await client.close()
    failure = http_failure(caught.value)
    assert failure is not None and failure.status == 429
    assert failure.body == json.loads(error) and failure.text == error
    assert failure.header("RETRY-AFTER") == "3" and failure.retry_after_ms() == 3000
    assert describe_error(caught.value) == "429 rate_limit_error: Slow down (retry after 3000 ms)"


async def test_a_configured_proxy_sends_requests_through_httpx2_and_no_proxy_goes_direct(
    no_proxy: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with TinyServer(serve_forever) as proxy:  # answers as the origin would, recording the target
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        client = WireClient("http://llm.invalid:8080/v1", HEADERS)
        try:
            assert client.proxied
            assert await events_of(client) == [("a", "1"), ("b", "2")]
        finally:
            await client.close()
    assert proxy.requests[0].startswith(b"POST http://llm.invalid:8080/v1/v1/messages HTTP/1.1\r\n")
    monkeypatch.setenv("NO_PROXY", "localhost,.invalid")
    direct = WireClient("http://llm.invalid:8080/v1", HEADERS)
    assert not direct.proxied
    await direct.close()


@pytest.mark.parametrize(
    ("env", "url", "expected"),
    [
        ({}, "https://api.example.com", None),
        ({"HTTPS_PROXY": "http://p:1"}, "https://api.example.com", "http://p:1"),
        ({"HTTPS_PROXY": "http://p:1"}, "http://api.example.com", None),
        ({"HTTP_PROXY": "http://p:1"}, "http://api.example.com", "http://p:1"),
        ({"ALL_PROXY": "socks5://p:1"}, "https://api.example.com", "socks5://p:1"),
        ({"HTTPS_PROXY": "http://upper:1", "https_proxy": "http://lower:1"}, "https://a.b", "http://lower:1"),
        ({"HTTPS_PROXY": "http://upper:1", "https_proxy": ""}, "https://a.b", None),
        ({"HTTP_PROXY": "http://p:1", "REQUEST_METHOD": "GET"}, "http://a.b", None),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "*"}, "https://api.example.com", None),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "example.com"}, "https://api.example.com", None),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "example.com"}, "https://apiexample.com", "http://p:1"),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": ".example.com"}, "https://example.com", "http://p:1"),
        ({"HTTPS_PROXY": "http://p:1", "no_proxy": "a, 127.0.0.1"}, "https://127.0.0.1:8443", None),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "::1"}, "https://[::1]:8443", None),
        # Forms only httpx2 matches exactly (ports, ranges) keep the proxy path, which applies them.
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "a.b:443"}, "https://a.b", "http://p:1"),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "10.0.0.0/8"}, "https://10.1.2.3", "http://p:1"),
    ],
)
def test_the_proxy_choice_follows_the_environment(
    no_proxy: None, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], url: str, expected: str | None
) -> None:
    monkeypatch.delenv("REQUEST_METHOD", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert http_env.proxy_for(url) == expected


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True,
        capture_output=True,
        timeout=30,
    )  # fmt: skip
    return cert, key


async def test_https_verifies_the_server_against_ssl_cert_file_and_speaks_http_1_1(
    no_proxy: None,
    monkeypatch: pytest.MonkeyPatch,
    certificate: tuple[Path, Path],
    client_for: Callable[[str], WireClient],
) -> None:
    cert, key = certificate
    server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_tls.load_cert_chain(cert, key)
    server_tls.set_alpn_protocols(["h2", "http/1.1"])
    async with TinyServer(serve_forever, tls=server_tls) as server:
        monkeypatch.setattr(http_env, "_verified", None)
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        client = client_for(server.url)
        assert await events_of(client) == await events_of(client) == [("a", "1"), ("b", "2")]
        assert server.alpn == ["http/1.1"]  # one connection, HTTP/1.1 by ALPN

        monkeypatch.setattr(http_env, "_verified", None)
        monkeypatch.delenv("SSL_CERT_FILE")  # the system store does not trust the test certificate
        monkeypatch.delenv("SSL_CERT_DIR", raising=False)
        untrusting = client_for(server.url)
        with pytest.raises(http.ConnectError, match="CERTIFICATE_VERIFY_FAILED") as caught:
            await untrusting.stream("/v1/messages", BODY)
    assert describe_error(caught.value).startswith("Connection error (ConnectError: ")
