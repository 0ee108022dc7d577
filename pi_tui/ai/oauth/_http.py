"""Small blocking HTTP helpers for the login flows (standard library only, loaded when a login runs).

Errors never carry a token: only the status and the server's ``error``/``error_description`` (or the
first line of a non-JSON body) are kept, with any value a caller names as secret blanked out.

For tests only, ``PI_TUI_OAUTH_TEST_SERVER=http://127.0.0.1:PORT`` sends every OAuth request to that
loopback server instead (same paths), and the local callback servers take a free port. A non-loopback
value is refused, so the variable cannot send a login anywhere else.
"""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pi_tui.util import json_safe
from pi_tui.util.json_types import JsonObject

from .types import LoginCancelled, OAuthError

__all__ = [
    "HttpResult",
    "TEST_SERVER_ENV",
    "endpoint",
    "failure",
    "get_json",
    "post_form",
    "post_json",
    "redact",
    "test_mode",
]

TEST_SERVER_ENV = "PI_TUI_OAUTH_TEST_SERVER"
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_TIMEOUT_S = 30.0


def test_mode() -> bool:
    """Whether the test-only endpoint override is active."""
    return bool(os.environ.get(TEST_SERVER_ENV, "").strip())


def endpoint(url: str) -> str:
    """``url``, or in test mode the same path on the loopback test server.

    Raises:
        OAuthError: the override names a host that is not loopback.
    """
    override = os.environ.get(TEST_SERVER_ENV, "").strip()
    if not override:
        return url
    target = urllib.parse.urlsplit(override)
    if target.hostname not in _LOOPBACK:
        raise OAuthError(f"{TEST_SERVER_ENV} must name a loopback server (127.0.0.1), not {target.hostname}")
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((target.scheme or "http", target.netloc, parts.path, parts.query, ""))


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every non-trivial secret value replaced by ``[redacted]``."""
    for secret in secrets:
        if secret and len(secret) >= 6:
            text = text.replace(secret, "[redacted]")
    return text


@dataclass(frozen=True)
class HttpResult:
    """A response: its status and its JSON object body ({} when the body was not a JSON object)."""

    status: int
    body: JsonObject
    text: str

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


def failure(action: str, result: HttpResult, secrets: Iterable[str | None] = ()) -> OAuthError:
    """An `OAuthError` for a refused request: ``<action> failed (HTTP 400): invalid_grant: <description>``."""
    error = result.body.get("error")
    description = result.body.get("error_description") or result.body.get("message")
    if isinstance(error, dict):  # {"error": {"message": ...}} (OpenRouter, Meta)
        description = error.get("message") or description
        error = error.get("type") or error.get("code")
    parts = [str(p) for p in (error, description) if isinstance(p, str | int) and str(p)]
    if not parts and result.text.strip() and not result.body:
        parts = [result.text.strip().splitlines()[0][:200]]
    detail = redact(": ".join(parts), secrets)[:300]
    return OAuthError(f"{action} failed (HTTP {result.status})" + (f": {detail}" if detail else ""))


def _send(request: urllib.request.Request, cancel: threading.Event | None, timeout: float) -> HttpResult:
    if cancel is not None and cancel.is_set():
        raise LoginCancelled()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - https/loopback URLs only
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        if cancel is not None and cancel.is_set():
            raise LoginCancelled() from exc
        reason = (exc.reason if isinstance(exc, urllib.error.URLError) else None) or exc
        host = urllib.parse.urlsplit(request.full_url).netloc
        raise OAuthError(f"cannot reach {host}: {reason}") from None
    if cancel is not None and cancel.is_set():
        raise LoginCancelled()
    text = raw.decode("utf-8", errors="replace")
    body: JsonObject = {}
    try:
        parsed = json_safe.loads(text) if text.strip() else {}
        if isinstance(parsed, dict):
            body = parsed
    except ValueError:
        pass
    return HttpResult(status, body, text)


def _request(method: str, url: str, data: bytes | None, headers: Mapping[str, str]) -> urllib.request.Request:
    return urllib.request.Request(endpoint(url), data=data, method=method, headers=dict(headers))


def post_json(
    url: str,
    payload: Mapping[str, Any],
    *,
    headers: Mapping[str, str] | None = None,
    cancel: threading.Event | None = None,
    timeout: float = _TIMEOUT_S,
) -> HttpResult:
    """POST ``payload`` as JSON."""
    all_headers = {"Content-Type": "application/json", "Accept": "application/json", **(headers or {})}
    return _send(_request("POST", url, json.dumps(payload).encode(), all_headers), cancel, timeout)


def post_form(
    url: str,
    fields: Mapping[str, str],
    *,
    headers: Mapping[str, str] | None = None,
    cancel: threading.Event | None = None,
    timeout: float = _TIMEOUT_S,
) -> HttpResult:
    """POST ``fields`` form-encoded."""
    all_headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "Accept": "application/json",
        **(headers or {}),
    }
    data = urllib.parse.urlencode(fields).encode()
    return _send(_request("POST", url, data, all_headers), cancel, timeout)


def get_json(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    cancel: threading.Event | None = None,
    timeout: float = _TIMEOUT_S,
) -> HttpResult:
    """GET ``url`` expecting JSON."""
    all_headers = {"Accept": "application/json", **(headers or {})}
    return _send(_request("GET", url, None, all_headers), cancel, timeout)
