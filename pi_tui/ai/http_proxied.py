"""The ``httpx2`` transport of `pi_tui.ai.wire`, used only when the environment routes the base URL
through a proxy.

``httpx2`` reads the proxy settings (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``), tunnels
https through ``CONNECT`` and speaks to http and SOCKS proxies, so proxied requests behave exactly as they
did before pi-tui had its own client. Importing it costs ~80 ms, paid only by runs that need a proxy.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ssl

    import httpx2

__all__ = ["ProxiedTransport", "preload"]

_tls_lock = threading.Lock()
_verified_tls: ssl.SSLContext | None = None  # one verified context for every client: loading the CA store costs ~25 ms


def _verified_tls_context() -> ssl.SSLContext:
    global _verified_tls
    with _tls_lock:
        if _verified_tls is None:
            import httpx2

            _verified_tls = httpx2.create_ssl_context(verify=True)
        return _verified_tls


def preload(tls: bool = True) -> None:
    """Import what the first proxied request needs and, with ``tls``, load the CA store."""
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


class ProxiedTransport:
    """An ``httpx2.AsyncClient`` (its own keep-alive pool) for one base URL and header set."""

    def __init__(
        self, base_url: str, headers: dict[str, str], *, timeout: float, connect_timeout: float
    ) -> None:
        import httpx2

        self._httpx2 = httpx2
        self.base_url = base_url
        # A plain-http client never uses TLS, so it gets an unverified context it can never exercise
        # instead of paying ~25 ms for the CA store.
        verify = _verified_tls_context() if _needs_verified_tls(base_url) else _unused_tls_context()
        self._client = httpx2.AsyncClient(
            headers=headers,
            timeout=httpx2.Timeout(timeout, connect=connect_timeout),
            trust_env=True,
            verify=verify,
            follow_redirects=False,
        )

    async def post(
        self,
        path: str,
        body: bytes,
        headers: dict[str, str],
        timeout: float | None,
        *,
        after_write: Callable[[], None] | None = None,
    ) -> httpx2.Response:
        """Send the request and return the ``httpx2.Response`` once its headers arrived (body unread).

        ``after_write`` runs once the headers arrived (httpx tells nothing between the write and them)."""
        httpx2 = self._httpx2
        request = self._client.build_request(
            "POST",
            self.base_url + path,
            content=body,
            headers=headers,
            timeout=httpx2.Timeout(timeout) if timeout is not None else httpx2.USE_CLIENT_DEFAULT,
        )
        response = await self._client.send(request, stream=True)
        if after_write is not None:
            after_write()
        return response

    async def aclose(self) -> None:
        await self._client.aclose()


def _unused_tls_context() -> ssl.SSLContext:
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context
