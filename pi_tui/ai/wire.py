"""A lean HTTP + server-sent-events client for the provider wire APIs.

The official SDKs cost about a second of CPU to import (they build ~2,000 pydantic models) and only do
three things for pi-tui, which builds the wire bodies and classifies errors itself: post the body, decode
the SSE stream, and turn HTTP failures into exceptions. This module does those three things on
``httpx2``, the HTTP library the SDKs themselves use, so connection pooling (keep-alive), timeouts,
proxies from the environment (``HTTPS_PROXY``, ``NO_PROXY``, ...) and TLS behave as they did.

- `WireClient` posts a JSON body and returns an `SseStream`; a non-2xx answer raises `HttpStatusError`
  with the status, the parsed error body and the response (for ``retry-after``).
- `decode_sse` turns a byte stream into ``(event, data)`` pairs the way the SDKs' decoder does
  (WHATWG event-stream rules: lines end with CR, LF or CRLF; a blank line dispatches; ``:`` comments).

``httpx2`` itself is imported on first use, not with this module.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import AsyncIterable, AsyncIterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "CONNECT_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "HttpStatusError",
    "SseStream",
    "WireClient",
    "decode_sse",
    "encode_body",
    "preload",
]

DEFAULT_TIMEOUT = 600.0  # the SDKs' default read/write timeout, seconds
CONNECT_TIMEOUT = 5.0


class HttpStatusError(Exception):
    """The server answered with an error: an HTTP status ≥ 400, or an error event inside a 200 stream.

    Attributes mirror the SDKs' ``APIStatusError`` so one error describer serves both: ``status_code``
    (``200`` for an in-stream error event, ``None`` when the server gave none), ``body`` (the parsed JSON
    error, or its text) and ``response`` (whose headers carry ``retry-after``).
    """

    def __init__(
        self, message: str, *, status_code: int | None, body: Any, response: httpx2.Response | None
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.body = body
        self.response = response


def encode_body(body: dict[str, Any]) -> bytes:
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
    """The server-sent events of one streamed answer; `close` drops the connection at once."""

    def __init__(self, response: httpx2.Response) -> None:
        self.response = response

    def __aiter__(self) -> AsyncIterator[tuple[str | None, str]]:
        return decode_sse(self.response.aiter_bytes())

    async def close(self) -> None:
        await self.response.aclose()


_tls_lock = threading.Lock()
_verified_tls: Any = None  # one verified context for every client: loading the CA store costs ~25 ms


def _verified_tls_context() -> Any:
    global _verified_tls
    with _tls_lock:
        if _verified_tls is None:
            import httpx2

            _verified_tls = httpx2.create_ssl_context(verify=True)
        return _verified_tls


def preload(tls: bool = True) -> None:
    """Import what the first request needs (httpx2, httpcore2, h11, anyio's asyncio backend) and, with
    ``tls``, load the system CA store: e.g. from a worker thread while the UI starts, so the first
    request does not pay for it."""
    import anyio._backends._asyncio  # noqa: F401  (imported by httpcore2 on the first connection)
    import h11  # noqa: F401
    import httpcore2  # noqa: F401
    import httpx2  # noqa: F401

    if tls:
        _verified_tls_context()


def _needs_verified_tls(base_url: str) -> bool:
    """False only when no request of this client can use TLS (plain http, no https proxy)."""
    if base_url.startswith("https:"):
        return True
    proxies = (os.environ.get(name, "") for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"))
    return any(p.startswith("https:") for p in proxies) or os.environ.get("HTTP_PROXY", "").startswith(
        "https:"
    )


class WireClient:
    """One keep-alive connection pool for one base URL, key and header set.

    Built lazily per event loop by the providers (connections belong to the loop that opened them).
    """

    def __init__(self, base_url: str, headers: dict[str, str]) -> None:
        import httpx2  # lazy: a run that never talks to a provider must not load it

        self._httpx2 = httpx2
        self.base_url = base_url.rstrip("/")
        # Loading the system CA store costs ~25 ms; a plain-http server (a local model, a test server)
        # never uses it, so such a client gets an unverified context it can never exercise.
        verify: Any = _verified_tls_context() if _needs_verified_tls(self.base_url) else _unused_tls_context()
        self._client = httpx2.AsyncClient(
            headers=headers,
            timeout=httpx2.Timeout(DEFAULT_TIMEOUT, connect=CONNECT_TIMEOUT),
            trust_env=True,
            verify=verify,
            follow_redirects=False,
        )

    async def stream(self, path: str, body: bytes, timeout: float | None = None) -> SseStream:
        """POST ``body`` (JSON bytes) to ``path`` and return its event stream once the headers arrived.

        Raises `HttpStatusError` for a status ≥ 400 (after reading the error body) and ``httpx2``'s
        transport errors (``ConnectError``, ``ReadTimeout``, ...) as they are.
        """
        httpx2 = self._httpx2
        request = self._client.build_request(
            "POST",
            self.base_url + path,
            content=body,
            headers={"content-type": "application/json"},
            timeout=httpx2.Timeout(timeout) if timeout is not None else httpx2.USE_CLIENT_DEFAULT,
        )
        response = await self._client.send(request, stream=True)
        if response.status_code >= 400:
            try:
                await response.aread()
            finally:
                await response.aclose()
            raise status_error(response)
        return SseStream(response)

    async def close(self) -> None:
        await self._client.aclose()


def status_error(response: httpx2.Response) -> HttpStatusError:
    """The error for a failed HTTP answer whose body has been read (JSON error body when there is one)."""
    text = response.text.strip()
    body: Any = text
    try:
        body = json.loads(text)
        message = f"Error code: {response.status_code} - {body}"
    except ValueError:
        message = text or f"Error code: {response.status_code}"
    return HttpStatusError(message, status_code=response.status_code, body=body, response=response)


def _unused_tls_context() -> Any:
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context
