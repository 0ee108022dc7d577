"""A small HTTP/1.1 client on asyncio streams: the direct transport of `pi_tui.ai.wire`.

``httpx2`` with ``httpcore2`` and anyio's asyncio backend costs ~80 ms of CPU to import, a third of a
one-turn answer, for work pi-tui needs little of: POST one JSON body to one origin and read the streamed
answer. This client does exactly that:

- ``h11`` does the HTTP/1.1 framing (the request, content-length and chunked bodies, the keep-alive
  state machine); asyncio streams do the sockets and TLS.
- `HttpClient` keeps idle connections to its origin for reuse. A connection goes back to the pool only
  when its response was read to the end; an aborted, failed or unfinished one is dropped at once (the
  server sees the close immediately, as it did with ``httpx2``). An idle connection the server has
  closed (or one idle longer than `KEEPALIVE_EXPIRY`) is replaced before anything is sent; a request
  that may have reached the server is never sent again.
- Timeouts: the connect timeout bounds DNS, TCP and TLS; the read timeout bounds each wait for the next
  bytes (an idle timeout, not a total one), and each write.
- Failures are `TransportError` subclasses named after ``httpx``'s (``ConnectError``, ``ReadTimeout``,
  ``RemoteProtocolError``, ...). They are ``OSError``\\ s (the timeouts ``TimeoutError``\\ s), so the
  providers' error description and classification treat them as they treated ``httpx2``'s.
"""

from __future__ import annotations

import asyncio
import select
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any

import h11

if TYPE_CHECKING:
    import ssl

    from _typeshed import FileDescriptorLike

__all__ = [
    "ConnectError",
    "ConnectTimeout",
    "Headers",
    "HttpClient",
    "KEEPALIVE_EXPIRY",
    "LocalProtocolError",
    "ReadError",
    "ReadTimeout",
    "RemoteProtocolError",
    "Response",
    "TransportError",
    "WriteError",
    "WriteTimeout",
]

KEEPALIVE_EXPIRY = 5.0  # seconds an idle connection is kept (httpx's default): servers close idle ones
_MAX_IDLE = 20
_READ_SIZE = 64 * 1024


class TransportError(OSError):
    """The request failed below HTTP (connecting, reading, writing, or a malformed answer)."""


class ConnectError(TransportError):
    """The connection (DNS, TCP or TLS) could not be established."""


class ConnectTimeout(TimeoutError, TransportError):
    """The connection was not established within the connect timeout."""


class ReadTimeout(TimeoutError, TransportError):
    """The server sent nothing for the read timeout (no headers, or no next bytes of the body)."""


class WriteTimeout(TimeoutError, TransportError):
    """The request could not be written within the timeout."""


class ReadError(TransportError):
    """Reading from the connection failed (for example it was reset)."""


class WriteError(TransportError):
    """Writing the request failed (for example the server closed the connection)."""


class RemoteProtocolError(TransportError):
    """The server broke HTTP/1.1: closed mid-answer, or sent something that is not HTTP."""


class LocalProtocolError(TransportError):
    """The request could not be expressed in HTTP/1.1 (for example an invalid header)."""


class Headers:
    """Response headers: case-insensitive `get`, repeated names kept in order."""

    __slots__ = ("_items",)

    def __init__(self, items: list[tuple[str, str]]) -> None:
        self._items = items  # names lower-case

    def get(self, name: str, default: str | None = None) -> str | None:
        """The first value of ``name`` (any case), or ``default``."""
        key = name.lower()
        for item_name, value in self._items:
            if item_name == key:
                return value
        return default

    def get_list(self, name: str) -> list[str]:
        key = name.lower()
        return [value for item_name, value in self._items if item_name == key]

    def items(self) -> list[tuple[str, str]]:
        return list(self._items)

    def __getitem__(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter([name for name, _ in self._items])

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Headers({self._items!r})"


class _Connection:
    """One TCP (or TLS) connection and its HTTP/1.1 state."""

    __slots__ = ("reader", "writer", "protocol", "idle_since")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.protocol = h11.Connection(h11.CLIENT)
        self.idle_since = 0.0

    def reusable(self, now: float) -> bool:
        """True when this idle connection can carry the next request: fresh enough, still open, and the
        server has sent nothing since (data or EOF on an idle connection means it is closing it)."""
        if now - self.idle_since > KEEPALIVE_EXPIRY:
            return False
        if self.reader.at_eof() or self.writer.transport.is_closing():
            return False
        sock = self.writer.get_extra_info("socket")
        return sock is None or not _readable_now(sock)

    async def write(self, parts: list[bytes], timeout: float | None) -> None:
        try:
            # One write per part, not writelines: on 3.11 writelines joins the parts (a copy of the whole
            # body), and a part the socket can't take at once is sliced (another copy); a memoryview slices
            # for free, so a megabyte body is copied at most once (into the transport's buffer).
            write = self.writer.write
            for part in parts:
                if part:
                    write(memoryview(part) if len(part) > 65536 else part)
            async with asyncio.timeout(timeout):
                await self.writer.drain()
        except TimeoutError:
            raise WriteTimeout("The write operation timed out") from None
        except OSError as exc:
            raise WriteError(str(exc) or type(exc).__name__) from exc

    async def next_event(self, timeout: float | None) -> Any:
        """The next h11 event of the answer, reading from the socket as needed."""
        protocol = self.protocol
        while True:
            try:
                event = protocol.next_event()
            except h11.RemoteProtocolError as exc:
                raise RemoteProtocolError(str(exc)) from exc
            if event is not h11.NEED_DATA:
                return event
            try:
                async with asyncio.timeout(timeout):
                    data = await self.reader.read(_READ_SIZE)
            except TimeoutError:
                raise ReadTimeout("The read operation timed out") from None
            except OSError as exc:
                raise ReadError(str(exc) or type(exc).__name__) from exc
            if not data and protocol.their_state is h11.SEND_RESPONSE:
                raise RemoteProtocolError("Server disconnected without sending a response.")
            protocol.receive_data(data)

    def drop(self) -> None:
        """Close at once, without flushing or a TLS goodbye: the server sees the close immediately."""
        self.writer.transport.abort()


class Response:
    """A response whose status and headers have arrived; the body is read with `aiter_bytes` or `aread`.

    Reading the body to its end returns the connection to its client's pool; `aclose` before that drops
    the connection.
    """

    def __init__(
        self,
        status_code: int,
        reason_phrase: str,
        headers: Headers,
        http_version: str,
        connection: _Connection,
        release: Callable[[_Connection], None],
        timeout: float | None,
    ) -> None:
        self.status_code = status_code
        self.reason_phrase = reason_phrase
        self.headers = headers
        self.http_version = http_version
        self._connection: _Connection | None = connection
        self._release = release
        self._timeout = timeout
        self._content: bytes | None = None
        self._started = False

    @property
    def is_closed(self) -> bool:
        return self._connection is None

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive (``gzip``/``deflate`` content decoded)."""
        if self._content is not None:
            if self._content:
                yield self._content
            return
        if self._started:
            raise RuntimeError("the response body has already been read")
        self._started = True
        connection = self._connection
        if connection is None:
            raise RuntimeError("the response is closed")
        decompress = _decompressor(self.headers.get("content-encoding"))
        try:
            while True:
                event = await connection.next_event(self._timeout)
                if type(event) is h11.Data:
                    chunk = bytes(event.data)
                    if decompress is not None:
                        chunk = decompress(chunk)
                    if chunk:
                        yield chunk
                elif type(event) is h11.EndOfMessage:
                    break
                else:  # ConnectionClosed before the end: h11 raises for that, so this is unexpected
                    raise RemoteProtocolError(f"unexpected {type(event).__name__} inside a response body")
        except BaseException:
            self._drop()
            raise
        self._finish(connection)

    async def aread(self) -> bytes:
        """The whole body (read once, then kept)."""
        if self._content is None:
            self._content = b"".join([chunk async for chunk in self.aiter_bytes()])
        return self._content

    @property
    def content(self) -> bytes:
        if self._content is None:
            raise RuntimeError("the response body has not been read (await aread() first)")
        return self._content

    @property
    def text(self) -> str:
        return self.content.decode(_charset(self.headers.get("content-type")), errors="replace")

    async def aclose(self) -> None:
        """Drop the connection unless the body was read to its end (then it is already pooled)."""
        self._drop()

    def _finish(self, connection: _Connection) -> None:
        self._connection = None
        protocol = connection.protocol
        if protocol.our_state is h11.DONE and protocol.their_state is h11.DONE:
            protocol.start_next_cycle()
            self._release(connection)
        else:  # "connection: close", HTTP/1.0, ...
            connection.drop()

    def _drop(self) -> None:
        if self._connection is not None:
            self._connection.drop()
            self._connection = None


class HttpClient:
    """POSTs to one origin (scheme, host, port) over a pool of keep-alive connections.

    Args:
        base_url: ``http(s)://host[:port][/prefix]``; request paths are appended to it.
        headers: sent with every request (after ``Host`` and ``User-Agent``).
        tls_context: a factory for the TLS context of ``https`` connections, called on the first one.
        connect_timeout: seconds for DNS, TCP and TLS together.
        user_agent: the ``User-Agent`` unless ``headers`` carries one.
    """

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str],
        *,
        tls_context: Callable[[], ssl.SSLContext],
        connect_timeout: float,
        user_agent: str,
    ) -> None:
        from urllib.parse import urlsplit

        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"Unsupported base URL {base_url!r}: expected http(s)://host[:port][/path]")
        self.tls = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.tls else 80)
        self._prefix = parts.path.rstrip("/")
        host = f"[{self.host}]" if ":" in self.host else self.host
        authority = host if parts.port is None else f"{host}:{self.port}"
        names = {name.lower() for name in headers}
        fixed = [("host", authority)]
        if "user-agent" not in names:
            fixed.append(("user-agent", user_agent))
        pairs = [*fixed, *((name, value) for name, value in headers.items() if name.lower() != "host")]
        self._headers = [(_header_bytes(name), _header_bytes(value)) for name, value in pairs]
        self._tls_context = tls_context
        self._connect_timeout = connect_timeout
        self._idle: list[_Connection] = []
        self._open: set[_Connection] = set()
        self._closed = False
        self.connections_opened = 0  # how many connections this client has made (keep-alive shows here)

    async def post(
        self,
        path: str,
        body: bytes,
        headers: dict[str, str],
        timeout: float | None,
        *,
        after_write: Callable[[], None] | None = None,
    ) -> Response:
        """Send ``body`` to ``path`` and return once the response headers arrived.

        ``timeout`` bounds each read and write; the connect timeout is the smaller of it and the client's.
        ``after_write`` is called once the whole request has been written, before the answer is awaited.
        Raises `TransportError` subclasses; an HTTP error status is returned like any other.
        """
        if self._closed:
            raise RuntimeError("the HTTP client is closed")
        request_headers = [
            *self._headers,
            *((_header_bytes(name), _header_bytes(value)) for name, value in headers.items()),
            (b"content-length", b"%d" % len(body)),
        ]
        connect_timeout = self._connect_timeout if timeout is None else min(timeout, self._connect_timeout)
        connection = self._reuse() or await self._connect(connect_timeout)
        try:
            protocol = connection.protocol
            try:
                head = protocol.send(
                    h11.Request(method="POST", target=self._prefix + path, headers=request_headers)
                )
                parts = [head or b"", *(protocol.send_with_data_passthrough(h11.Data(data=body)) or [])]
                parts.append(protocol.send(h11.EndOfMessage()) or b"")
            except h11.LocalProtocolError as exc:
                raise LocalProtocolError(str(exc)) from exc
            await connection.write(parts, timeout)
            if after_write is not None:
                after_write()
            while True:
                event = await connection.next_event(timeout)
                if type(event) is h11.Response:
                    break
                if type(event) is not h11.InformationalResponse:  # e.g. 100 Continue
                    raise RemoteProtocolError(f"expected a response, got {type(event).__name__}")
        except BaseException:
            self._forget(connection)
            connection.drop()
            raise
        headers_out = Headers(
            [(name.decode("latin-1"), value.decode("latin-1")) for name, value in event.headers]
        )
        return Response(
            event.status_code,
            event.reason.decode("latin-1", errors="replace"),
            headers_out,
            "HTTP/" + event.http_version.decode("ascii"),
            connection,
            self._release,
            timeout,
        )

    def _reuse(self) -> _Connection | None:
        now = time.monotonic()
        while self._idle:
            connection = self._idle.pop()  # the most recently used: the likeliest still open
            if connection.reusable(now):
                return connection
            self._forget(connection)
            connection.drop()
        return None

    async def _connect(self, timeout: float) -> _Connection:
        context = self._tls_context() if self.tls else None
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(
                    self.host,
                    self.port,
                    ssl=context,
                    server_hostname=self.host if context is not None else None,
                    limit=_READ_SIZE,
                )
        except TimeoutError:
            raise ConnectTimeout(f"no connection to {self.host}:{self.port} within {timeout:g} s") from None
        except OSError as exc:  # refused, unreachable, DNS (socket.gaierror), TLS (ssl.SSLError)
            # the OS's text names no host for a DNS or TLS failure: say which address it was
            raise ConnectError(
                f"cannot connect to {self.host}:{self.port}: {exc or type(exc).__name__}"
            ) from exc
        connection = _Connection(reader, writer)
        self.connections_opened += 1
        if self._closed:  # closed while connecting
            connection.drop()
            raise RuntimeError("the HTTP client is closed")
        self._open.add(connection)
        return connection

    def _release(self, connection: _Connection) -> None:
        if self._closed or len(self._idle) >= _MAX_IDLE:
            self._forget(connection)
            connection.drop()
            return
        connection.idle_since = time.monotonic()
        self._idle.append(connection)

    def _forget(self, connection: _Connection) -> None:
        self._open.discard(connection)

    @property
    def idle_connections(self) -> int:
        return len(self._idle)

    async def aclose(self) -> None:
        """Close every connection, idle or in use; later requests raise."""
        self._closed = True
        connections = list(self._open)
        self._open.clear()
        self._idle.clear()
        for connection in connections:
            connection.drop()


def _readable_now(sock: FileDescriptorLike) -> bool:
    """Whether the socket has bytes or an EOF waiting (poll: no FD_SETSIZE limit, unlike select)."""
    try:
        if hasattr(select, "poll"):
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            return bool(poller.poll(0))
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable)
    except (OSError, ValueError):  # a closed or odd socket: do not reuse it
        return True


def _header_bytes(text: str) -> bytes:
    """ASCII, or UTF-8 for a value that is not (as ``httpx`` sends it)."""
    try:
        return text.encode("ascii")
    except UnicodeEncodeError:
        return text.encode("utf-8")


def _charset(content_type: str | None) -> str:
    if content_type:
        for param in content_type.split(";")[1:]:
            name, _, value = param.strip().partition("=")
            if name.lower() == "charset" and value:
                charset = value.strip("\"' ")
                try:
                    "".encode(charset)
                except LookupError:
                    break
                return charset
    return "utf-8"


def _decompressor(encoding: str | None) -> Callable[[bytes], bytes] | None:
    """Not asked for (no ``accept-encoding`` is sent), but decoded if a server or gateway does it anyway."""
    if not encoding or encoding.strip().lower() in ("identity", ""):
        return None
    import zlib

    kind = encoding.strip().lower()
    if kind in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress
    if kind == "deflate":
        return zlib.decompressobj().decompress
    raise RemoteProtocolError(f"unsupported content-encoding {encoding!r}")
