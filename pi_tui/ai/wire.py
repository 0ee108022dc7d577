"""A lean HTTP + server-sent-events client for the provider wire APIs.

The official SDKs cost about a second of CPU to import (they build ~2,000 pydantic models) and only do
three things for pi-tui, which builds the wire bodies and classifies errors itself: post the body, decode
the SSE stream, and turn HTTP failures into exceptions. This module does those three things.

- `WireClient` posts a JSON body and returns an `SseStream`; a non-2xx answer raises `HttpStatusError`
  with the status, the parsed error body and the response (for ``retry-after``).
- `decode_sse` turns a byte stream into ``(event, data)`` pairs the way the SDKs' decoder does
  (WHATWG event-stream rules: lines end with CR, LF or CRLF; a blank line dispatches; ``:`` comments).

The HTTP itself goes over `pi_tui.ai.http`, pi-tui's small HTTP/1.1 client on asyncio streams and
``h11`` (keep-alive, timeouts, TLS with the system trust store). When the environment routes the base
URL through a proxy (``HTTPS_PROXY``, ``ALL_PROXY``, ... minus ``NO_PROXY``), a client uses ``httpx2``
instead (`pi_tui.ai.http_proxied`), which speaks to proxies as before; it is imported only then.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Protocol

from pi_tui.util import json_safe
from pi_tui.util.json_types import JsonObject, JsonValue

if TYPE_CHECKING:
    from .http import HttpClient
    from .http_proxied import ProxiedTransport

__all__ = [
    "CONNECT_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "ErrorResponse",
    "HeaderLookup",
    "HttpStatusError",
    "SseStream",
    "WireClient",
    "WireResponse",
    "decode_sse",
    "encode_body",
    "preload",
    "without_deleted",
]

DEFAULT_TIMEOUT = 600.0  # the SDKs' default read/write timeout, seconds
CONNECT_TIMEOUT = 5.0


class HeaderLookup(Protocol):
    """Response headers as an error reads them: ``get`` by name (case-insensitive on real responses)."""

    def get(self, name: str, /) -> str | None: ...


class ErrorResponse(Protocol):
    """The answer an error keeps: `pi_tui.ai.http.Response`, or ``httpx2.Response`` on the proxied path."""

    @property
    def headers(self) -> HeaderLookup: ...

    @property
    def text(self) -> str: ...


class WireResponse(ErrorResponse, Protocol):
    """A response whose headers have arrived and whose body is read with `aiter_bytes` or `aread`."""

    @property
    def status_code(self) -> int: ...

    def aiter_bytes(self) -> AsyncIterator[bytes]: ...

    async def aread(self) -> bytes: ...

    async def aclose(self) -> None: ...


class HttpStatusError(Exception):
    """The server answered with an error: an HTTP status ≥ 400, or an error event inside a 200 stream.

    Attributes mirror the SDKs' ``APIStatusError`` so one error describer serves both: ``status_code``
    (``200`` for an in-stream error event, ``None`` when the server gave none), ``body`` (the parsed JSON
    error, or its text) and ``response`` (``headers`` with a case-insensitive ``get`` for
    ``retry-after``, ``text``; ``None`` when there is no answer to keep).
    """

    def __init__(
        self, message: str, *, status_code: int | None, body: JsonValue, response: ErrorResponse | None
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.body = body
        self.response = response


def encode_body(body: JsonObject) -> bytes:
    """Compact UTF-8 JSON, as sent on the wire."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


async def decode_sse(chunks: AsyncIterable[bytes]) -> AsyncIterator[tuple[str | None, str]]:
    """Yield ``(event name or None, data)`` for each dispatched server-sent event.

    Lines are split on bytes (CR, LF, CRLF only), so a U+2028 inside JSON text or a multi-byte
    character cut between two network reads cannot break a line. Fields other than ``event`` and
    ``data`` (``id``, ``retry``) do not matter to these APIs and are ignored.
    """
    pending = b""
    event: str | None = None
    data: list[str] = []
    async for chunk in chunks:
        if not chunk:
            continue
        pending += chunk
        lines = pending.splitlines(keepends=True)
        last = lines[-1]
        # An unterminated last line, or one ending in CR (its LF may be in the next read), waits.
        if last.endswith(b"\n"):
            pending = b""
        else:
            pending = lines.pop()
        for raw in lines:
            line = raw.rstrip(b"\r\n").decode("utf-8")
            if not line:
                if event is not None or data:
                    yield event, "\n".join(data)
                    event, data = None, []
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if name == "event":
                event = value or None
            elif name == "data":
                data.append(value)
    # A final blank line that ended with a bare CR is still a dispatch.
    if pending in (b"\r",) and (event is not None or data):
        yield event, "\n".join(data)


class SseStream:
    """The server-sent events of one streamed answer; `close` drops the connection at once
    (unless the answer was read to its end: then the connection is kept for the next request)."""

    def __init__(self, response: WireResponse) -> None:
        self.response = response

    def __aiter__(self) -> AsyncIterator[tuple[str | None, str]]:
        return decode_sse(self.response.aiter_bytes())

    async def close(self) -> None:
        await self.response.aclose()


def preload(tls: bool = True, base_url: str | None = None) -> None:
    """Import what the first request needs and, with ``tls``, load the system CA store: e.g. from a
    worker thread while the UI starts, so the first request does not pay for it. ``base_url`` (default:
    an https one) picks the transport to warm: the direct one, or ``httpx2`` when a proxy applies."""
    from .http_env import proxy_for, verified_tls_context

    if proxy_for(base_url or "https://api.invalid") is not None:
        from . import http_proxied

        http_proxied.preload(tls)
        return
    from . import http  # noqa: F401  (and h11 with it)

    if tls:
        verified_tls_context()


def _user_agent() -> str:
    from pi_tui import __version__

    return f"pi-tui/{__version__}"


def without_deleted(headers: Mapping[str, str | None]) -> dict[str, str]:
    """``headers`` without the ones set to ``None``: a ``None`` deletes every header of that name,
    whatever its case (pi's ``null`` in a header merge, e.g. ``Authorization`` behind Cloudflare's gateway)."""
    deleted = {name.lower() for name, value in headers.items() if value is None}
    return {
        name: value for name, value in headers.items() if value is not None and name.lower() not in deleted
    }


class WireClient:
    """One keep-alive connection pool for one base URL, key and header set.

    Built lazily per event loop by the providers (connections belong to the loop that opened them).
    Requests go direct over `pi_tui.ai.http`, or over ``httpx2`` when the environment configures a proxy
    for the base URL (decided once, when the client is built).
    """

    def __init__(self, base_url: str, headers: Mapping[str, str | None]) -> None:
        from .http_env import proxy_for

        headers = without_deleted(headers)
        self.base_url = base_url.rstrip("/")
        self.proxied = proxy_for(self.base_url) is not None
        self._transport: HttpClient | ProxiedTransport
        if self.proxied:
            from .http_proxied import ProxiedTransport

            self._transport = ProxiedTransport(
                self.base_url, headers, timeout=DEFAULT_TIMEOUT, connect_timeout=CONNECT_TIMEOUT
            )
        else:
            from .http import HttpClient
            from .http_env import verified_tls_context

            self._transport = HttpClient(
                self.base_url,
                headers,
                tls_context=verified_tls_context,
                connect_timeout=CONNECT_TIMEOUT,
                user_agent=_user_agent(),
            )

    async def stream(
        self,
        path: str,
        body: bytes,
        timeout: float | None = None,
        *,
        after_write: Callable[[], None] | None = None,
    ) -> SseStream:
        """POST ``body`` (JSON bytes) to ``path`` and return its event stream once the headers arrived.

        ``timeout`` (default `DEFAULT_TIMEOUT`) bounds each wait for the server; ``after_write`` is
        called once the whole body has been written (work that can wait for the server). Raises `HttpStatusError`
        for a status ≥ 400 (after reading the error body) and the transport's errors as they are
        (``ConnectError``, ``ReadTimeout``, ``RemoteProtocolError``, ...: `pi_tui.ai.http`'s, or
        ``httpx2``'s on the proxied path).
        """
        return SseStream(await self.post(path, body, _JSON_HEADERS, timeout, after_write=after_write))

    async def post(
        self,
        path: str,
        body: bytes,
        headers: dict[str, str],
        timeout: float | None = None,
        *,
        after_write: Callable[[], None] | None = None,
    ) -> WireResponse:
        """POST ``body`` with these request ``headers`` and return the response once its headers arrived
        (its body unread: ``aiter_bytes``, ``aclose``), for APIs whose answer is not server-sent events
        or whose headers change per request (a signature). Raises as `stream` does."""
        response: WireResponse = await self._transport.post(
            path,
            body,
            headers,
            timeout if timeout is not None or self.proxied else DEFAULT_TIMEOUT,
            after_write=after_write,
        )
        if response.status_code >= 400:
            try:
                await response.aread()
            finally:
                await response.aclose()
            raise status_error(response)
        return response

    async def close(self) -> None:
        await self._transport.aclose()


_JSON_HEADERS = {"content-type": "application/json"}


def status_error(response: WireResponse) -> HttpStatusError:
    """The error for a failed HTTP answer whose body has been read (JSON error body when there is one)."""
    text = response.text.strip()
    body: JsonValue = text
    try:
        body = json_safe.loads(text)
        message = f"Error code: {response.status_code} - {body}"
    except ValueError:
        message = text or f"Error code: {response.status_code}"
    return HttpStatusError(message, status_code=response.status_code, body=body, response=response)
