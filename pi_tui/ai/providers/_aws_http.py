"""The small HTTP calls the AWS credential sources make (STS, the SSO portal, IMDS, a container's agent).

Blocking (``urllib``), run off the event loop by the caller. An HTTP error status is an answer, not an
exception: each source words AWS's error itself. Only "no answer at all" (refused, unreachable, timed
out) raises `Unreachable`. Calls to AWS services go through the proxy the environment names and verify
TLS with the shared trust store; calls to link-local metadata services (``direct=True``) never use a
proxy, as the AWS SDKs do.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..http_env import proxy_for, verified_tls_context

__all__ = ["Answer", "Unreachable", "call"]


class Unreachable(Exception):
    """Nothing answered at the address (refused, unreachable, or no answer before the timeout)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A response: the status, the headers (lower-case names) and the body."""

    status: int
    headers: Mapping[str, str]
    body: bytes

    def text(self) -> str:
        """The body as text (undecodable bytes replaced)."""
        return self.body.decode("utf-8", errors="replace")


def _opener(url: str, direct: bool) -> urllib.request.OpenerDirector:
    proxy = None if direct else proxy_for(url)
    proxies = {"http": proxy, "https": proxy} if proxy else {}
    handlers: list[urllib.request.BaseHandler] = [urllib.request.ProxyHandler(proxies)]
    if url.startswith("https:"):
        handlers.append(urllib.request.HTTPSHandler(context=verified_tls_context()))
    return urllib.request.build_opener(*handlers)


def call(
    method: str,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    body: bytes | None = None,
    timeout: float,
    direct: bool = False,
) -> Answer:
    """Send one request and read the whole answer.

    Raises:
        Unreachable: no HTTP answer came (the reason is the message).
    """
    request = urllib.request.Request(url, data=body, headers=dict(headers or {}), method=method)
    try:
        with _opener(url, direct).open(request, timeout=timeout) as response:
            return Answer(response.status, _lower(response.headers.items()), response.read())
    except urllib.error.HTTPError as exc:
        try:
            data = exc.read()
        except OSError:
            data = b""
        return Answer(exc.code, _lower(exc.headers.items() if exc.headers else []), data)
    except urllib.error.URLError as exc:
        raise Unreachable(str(exc.reason)) from exc
    except TimeoutError as exc:
        raise Unreachable(f"no answer within {timeout:g} s") from exc
    except (OSError, ValueError) as exc:
        raise Unreachable(str(exc) or type(exc).__name__) from exc


def _lower(items: Iterable[tuple[str, str]]) -> dict[str, str]:
    return {name.lower(): str(value) for name, value in items}
