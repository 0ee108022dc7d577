"""A fake OAuth authorization server on loopback, for testing logins without the network.

It speaks the endpoints pi-tui's login flows (and pi's) use, on their real paths, so pointing every
OAuth host at it (``PI_TUI_OAUTH_TEST_SERVER``, and ``KIMI_CODE_OAUTH_HOST`` for pi's Kimi flow) runs
the real flow code::

    with FakeAuthServer() as auth:
        env = auth.env()                   # the variables that send logins here
        location = auth.browser_approve(authorize_url)   # what a browser does: the redirect it gets

What it checks and does:

- **Authorization code + PKCE** (``GET /oauth/authorize``): the redirect carries a one-time code bound
  to the client id, redirect URI and S256 challenge; the token request must present the matching
  ``code_verifier`` and ``redirect_uri`` (Anthropic's JSON ``/v1/oauth/token``).
- **Device code** (xAI ``/oauth2/device/code``, Kimi ``/api/oauth/device_authorization``): polls of the
  token endpoint answer from `device_script` (``authorization_pending``, ``slow_down``, then tokens).
- **GitHub Copilot**: the GitHub device flow (``/login/device/code``; polls of
  ``/login/oauth/access_token`` answer 200 with an ``error`` while pending, as GitHub does), the Copilot
  token exchange (``GET /copilot_internal/v2/token`` with the GitHub token; the token carries
  ``proxy-ep=``), the account's ``GET /models`` (`copilot_models`) and ``POST /models/<id>/policy``.
- **OpenAI Codex**: the form-encoded ``/oauth/token`` answers with JWT access tokens carrying the
  ``https://api.openai.com/auth`` claim (`chatgpt_account_id`); its device login
  (``/api/accounts/deviceauth/usercode`` then ``…/token``, 403 while pending) hands out a code and
  verifier to exchange.
- **OpenRouter**: ``GET /auth`` redirects to the ``callback_url`` with a code; ``POST /api/v1/auth/keys``
  trades code + verifier for a key.
- **Radius**: ``GET /v1/oauth`` names ``/oauth/authorize`` as the authorization page; its device login
  starts at ``POST /v1/oauth/device``; both grants and refreshes go to the form-encoded ``/v1/oauth/token``;
  ``GET /v1/config`` answers `radius_config` (the gateway's models) to a live access token.
- **Meta**: the device flow on ``/oidc/device/…/``, then ``POST /muse-code/key`` with the identity token
  mints a key (401 for an identity token that is not live).
- **Refresh**: refresh tokens rotate (the old one is revoked by its use), `revoke` kills one; a revoked
  or unknown token gets ``400 invalid_grant``. `hold_refreshes` parks refresh requests until
  `release_refreshes`, so a test can make two processes refresh at once.

Each issued access token is valid until `expires_in` seconds; `valid_access_tokens` lists the live ones.
Every request is recorded in `requests` (method, path, parsed body).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pi_tui.util.json_types import JsonObject

__all__ = ["FakeAuthServer", "AuthRequest"]

_DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def _fake_key(prefix: str) -> str:
    return prefix + secrets.token_hex(12)


@dataclass
class AuthRequest:
    """One request the fake received."""

    method: str
    path: str
    body: JsonObject
    headers: dict[str, str]
    time: float = 0.0
    """When it arrived (``time.monotonic()``)."""


@dataclass
class _Code:
    client_id: str
    redirect_uri: str
    challenge: str


@dataclass
class _Device:
    client_id: str
    script: list[str]
    polls: int = 0


@dataclass
class FakeAuthServer:
    """The fake authorization server (see the module docstring).

    Attributes:
        expires_in: Lifetime in seconds of the access tokens it issues.
        device_script: What successive device-code polls answer: ``authorization_pending``,
            ``slow_down``, ``access_denied``, ``expired_token`` or ``ok`` (tokens).
        device_interval: The poll interval it asks for, in seconds.
        access_prefix: How issued access tokens start (Anthropic's ``sk-ant-oat01-`` by default, which
            is what makes pi-tui's Anthropic adapter speak as Claude Code).
    """

    expires_in: int = 3600
    device_script: list[str] = field(default_factory=lambda: ["authorization_pending", "ok"])
    device_interval: float = 0.05
    access_prefix: str = "sk-ant-oat01-"
    copilot_models: list[JsonObject] = field(
        default_factory=lambda: [
            {"id": "gpt-5.4", "model_picker_enabled": True, "policy": {"state": "enabled"}},
            {"id": "claude-sonnet-4.6", "model_picker_enabled": True, "policy": {"state": "unconfigured"}},
            {"id": "text-embedding-3-small", "capabilities": {"supports": {"tool_calls": False}}},
        ]
    )
    account_id: str = "acct-fake-123"
    radius_config: JsonObject = field(
        default_factory=lambda: {
            "baseUrl": "https://radius.example/v1",
            "models": [
                {
                    "id": "fake-gateway-model",
                    "name": "Fake Gateway Model",
                    "reasoning": True,
                    "input": ["text"],
                    "cost": {"input": 1, "output": 2, "cacheRead": 0.1, "cacheWrite": 0},
                    "contextWindow": 100000,
                    "maxTokens": 8000,
                },
                {"id": "not-a-model"},
            ],
        }
    )
    requests: list[AuthRequest] = field(default_factory=list)
    refresh_count: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._codes: dict[str, _Code] = {}
        self._devices: dict[str, _Device] = {}
        self._refresh_tokens: dict[str, bool] = {}  # token -> still valid
        self._access: set[str] = set()
        self._identity_tokens: dict[str, bool] = {}
        self.enabled_models: list[str] = []
        self._hold = threading.Event()
        self._release = threading.Event()
        self.refresh_arrived = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- control -----------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        assert self._server is not None, "use FakeAuthServer inside `with`"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def env(self) -> dict[str, str]:
        """Variables that send pi-tui's logins (and pi's Kimi login) to this server."""
        return {"PI_TUI_OAUTH_TEST_SERVER": self.url, "KIMI_CODE_OAUTH_HOST": self.url}

    def issue_tokens(self) -> tuple[str, str]:
        """A fresh valid ``(access, refresh)`` pair, as if a login had just happened."""
        with self._lock:
            return self._issue()

    def revoke(self, refresh_token: str) -> None:
        """Make ``refresh_token`` unusable (the user signed out elsewhere)."""
        with self._lock:
            self._refresh_tokens[refresh_token] = False

    def valid_access_tokens(self) -> set[str]:
        with self._lock:
            return set(self._access)

    def hold_refreshes(self) -> None:
        """Park every refresh request until `release_refreshes` (sets `refresh_arrived` when one comes)."""
        self._release.clear()
        self._hold.set()

    def release_refreshes(self) -> None:
        self._hold.clear()
        self._release.set()

    def browser_approve(self, authorize_url: str) -> str:
        """Open ``authorize_url`` as a signed-in user's browser would; returns the redirect location it got
        (the URL a user on another machine copies from the address bar). Nothing follows the redirect."""

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args: Any, **kwargs: Any) -> None:
                return None

        opener = urllib.request.build_opener(NoRedirect)
        try:
            opener.open(authorize_url, timeout=10)
        except urllib.error.HTTPError as exc:
            if exc.code in (302, 303):
                return str(exc.headers["Location"])
            raise AssertionError(f"authorize failed: {exc.code} {exc.read().decode()}") from None
        raise AssertionError("authorize did not redirect")

    def __enter__(self) -> FakeAuthServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                owner._dispatch(self, "GET")

            def do_POST(self) -> None:  # noqa: N802
                owner._dispatch(self, "POST")

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # a short poll interval: shutdown waits until the serving loop next looks, 0.5 s by default
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    @contextmanager
    def serve(self) -> Iterator[FakeAuthServer]:
        with self:
            yield self

    # --- handling ----------------------------------------------------------------------------------

    def _issue(self) -> tuple[str, str]:
        access = self.access_prefix + secrets.token_urlsafe(24)
        refresh = "rt-" + secrets.token_urlsafe(24)
        self._access.add(access)
        self._refresh_tokens[refresh] = True
        return access, refresh

    def _token_body(self, *, jwt: bool = False) -> JsonObject:
        access, refresh = self._issue()
        if jwt:  # OpenAI's access tokens are JWTs naming the ChatGPT account
            self._access.discard(access)
            claims = {"https://api.openai.com/auth": {"chatgpt_account_id": self.account_id}, "jti": access}
            parts = [{"alg": "none", "typ": "JWT"}, claims]
            access = ".".join(
                base64.urlsafe_b64encode(json.dumps(p).encode()).rstrip(b"=").decode() for p in parts
            )
            access += ".sig"
            self._access.add(access)
        return {
            "token_type": "Bearer",
            "access_token": access,
            "refresh_token": refresh,
            "expires_in": self.expires_in,
        }

    def _dispatch(self, request: BaseHTTPRequestHandler, method: str) -> None:
        parts = urllib.parse.urlsplit(request.path)
        length = int(request.headers.get("Content-Length") or 0)
        raw = request.rfile.read(length).decode() if length else ""
        body: JsonObject
        if "json" in (request.headers.get("Content-Type") or ""):
            loaded = json.loads(raw) if raw else {}
            body = loaded if isinstance(loaded, dict) else {}
        else:
            body = {k: v[0] for k, v in urllib.parse.parse_qs(raw or parts.query).items()}
        if method == "GET":
            body = {k: v[0] for k, v in urllib.parse.parse_qs(parts.query).items()}
        with self._lock:
            self.requests.append(
                AuthRequest(method, parts.path, body, dict(request.headers.items()), time.monotonic())
            )
        lowered = {k.lower(): v for k, v in request.headers.items()}
        status, answer, headers = self._route(method, parts.path, body, lowered)
        data = json.dumps(answer).encode() if answer is not None else b""
        request.send_response(status)
        for name, value in headers.items():
            request.send_header(name, value)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        request.wfile.write(data)

    def _route(
        self, method: str, path: str, body: JsonObject, headers_in: dict[str, str]
    ) -> tuple[int, Any, dict[str, str]]:
        if method == "GET" and path == "/oauth/authorize":
            return self._authorize(body)
        if method == "POST" and path in (
            "/v1/oauth/token",
            "/oauth2/token",
            "/api/oauth/token",
            "/oauth/token",
        ):
            grant = body.get("grant_type")
            jwt = path == "/oauth/token"
            if grant == "refresh_token":
                return self._refresh(str(body.get("refresh_token", "")), jwt=jwt)
            if grant == "authorization_code":
                return self._exchange(body, jwt=jwt)
            if grant == _DEVICE_GRANT:
                return self._device_poll(body)
            return 400, {"error": "unsupported_grant_type"}, {}
        if method == "GET" and path == "/v1/oauth":  # Radius: the gateway names its authorization page
            return 200, {"authorizationEndpoint": f"{self.url}/oauth/authorize"}, {}
        if method == "GET" and path == "/v1/config":  # Radius: the gateway's models, for a live token
            token = headers_in.get("authorization", "").removeprefix("Bearer ")
            with self._lock:
                live = token in self._access
            return (
                (200, self.radius_config, {}) if live else (401, {"error": {"message": "unauthorized"}}, {})
            )
        if method == "POST" and path in (
            "/oauth2/device/code",
            "/api/oauth/device_authorization",
            "/login/device/code",
            "/v1/oauth/device",
        ):
            return self._device_start(body)
        if method == "POST" and path == "/login/oauth/access_token":
            status, answer, headers = self._device_poll(body)
            if status == 200:
                with self._lock:
                    token = "gho_" + secrets.token_urlsafe(16)
                    self._identity_tokens[token] = True
                return 200, {"access_token": token, "token_type": "bearer", "scope": "read:user"}, headers
            return 200, answer, headers  # GitHub reports a pending device with 200
        if method == "GET" and path == "/auth":  # OpenRouter's authorize page
            return self._authorize(
                {
                    **body,
                    "response_type": "code",
                    "redirect_uri": body.get("callback_url", ""),
                    "client_id": "openrouter",
                }
            )
        if method == "POST" and path == "/api/v1/auth/keys":
            body = {**body, "client_id": "openrouter", "grant_type": "authorization_code"}
            with self._lock:
                code = self._codes.get(str(body.get("code")))
                if code is not None:
                    body["redirect_uri"] = code.redirect_uri
            status, answer, headers = self._exchange(body)
            if status != 200:
                return (
                    status,
                    {"error": {"message": answer.get("error_description", "invalid code")}},
                    headers,
                )
            return 200, {"key": "sk-or-v1-" + secrets.token_hex(16), "user_id": "user_fake"}, headers
        if method == "POST" and path == "/oidc/device/authorization/":
            return self._device_start(body)
        if method == "POST" and path == "/oidc/device/token/":
            status, answer, headers = self._device_poll(body)
            if status == 200:
                with self._lock:
                    self._identity_tokens[answer["access_token"]] = True  # a live identity token
            return status, answer, headers
        if method == "POST" and path == "/muse-code/key":
            identity = headers_in.get("authorization", "").removeprefix("Bearer ")
            with self._lock:
                self.refresh_count += 1
                if not self._identity_tokens.get(identity):
                    return 401, {"detail": "Invalid identity token"}, {}
            return 200, {"api_key": _fake_key("meta-key-")}, {}
        if method == "POST" and path == "/api/accounts/deviceauth/usercode":
            status, answer, headers = self._device_start(body)
            answer = {
                "device_auth_id": answer["device_code"],
                "user_code": answer["user_code"],
                "interval": str(self.device_interval),
            }
            return status, answer, headers
        if method == "POST" and path == "/api/accounts/deviceauth/token":
            return self._codex_device_poll(body)
        if method == "GET" and path == "/copilot_internal/v2/token":
            return self._copilot_token(headers_in.get("authorization", ""))
        if method == "GET" and path == "/models":
            return 200, {"data": self.copilot_models}, {}
        if method == "POST" and path.startswith("/models/") and path.endswith("/policy"):
            with self._lock:
                self.enabled_models.append(path.split("/")[2])
            return 200, {}, {}
        return 404, {"error": "not_found", "error_description": f"no route {method} {path}"}, {}

    def _authorize(self, query: JsonObject) -> tuple[int, Any, dict[str, str]]:
        if query.get("response_type") != "code" or query.get("code_challenge_method") != "S256":
            return 400, {"error": "invalid_request"}, {}
        redirect = str(query.get("redirect_uri", ""))
        code = "code-" + secrets.token_urlsafe(16)
        with self._lock:
            self._codes[code] = _Code(str(query.get("client_id")), redirect, str(query.get("code_challenge")))
        location = redirect + "?" + urllib.parse.urlencode({"code": code, "state": query.get("state", "")})
        return 302, None, {"Location": location}

    def _codex_device_poll(self, body: JsonObject) -> tuple[int, Any, dict[str, str]]:
        with self._lock:
            device_code = str(body.get("device_auth_id"))
            device = self._devices.get(device_code)
            if device is None:
                return 404, {"error": {"code": "not_found"}}, {}
            step = device.script[min(device.polls, len(device.script) - 1)]
            device.polls += 1
            if step == "authorization_pending":
                return 403, {"error": {"code": "deviceauth_authorization_pending"}}, {}
            if step == "slow_down":
                return 400, {"error": {"code": "slow_down"}}, {}
            if step != "ok":
                return 400, {"error": {"code": step}}, {}
            del self._devices[device_code]
            verifier = secrets.token_urlsafe(32)
            challenge = (
                base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            )
            code = "code-" + secrets.token_urlsafe(16)
            self._codes[code] = _Code(
                device.client_id, "https://auth.openai.com/deviceauth/callback", challenge
            )
        return 200, {"authorization_code": code, "code_verifier": verifier}, {}

    def _exchange(self, body: JsonObject, *, jwt: bool = False) -> tuple[int, Any, dict[str, str]]:
        with self._lock:
            code = self._codes.pop(str(body.get("code")), None)
            if code is None:
                return 400, {"error": "invalid_grant", "error_description": "unknown or used code"}, {}
            verifier = str(body.get("code_verifier", ""))
            digest = hashlib.sha256(verifier.encode()).digest()
            challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
            if challenge != code.challenge:
                return 400, {"error": "invalid_grant", "error_description": "code_verifier mismatch"}, {}
            if body.get("redirect_uri") != code.redirect_uri or body.get("client_id") != code.client_id:
                return (
                    400,
                    {"error": "invalid_grant", "error_description": "redirect_uri or client mismatch"},
                    {},
                )
            return 200, self._token_body(jwt=jwt), {}

    def _refresh(self, token: str, *, jwt: bool = False) -> tuple[int, Any, dict[str, str]]:
        if self._hold.is_set():
            self.refresh_arrived.set()
            self._release.wait(30)
        with self._lock:
            self.refresh_count += 1
            if not self._refresh_tokens.get(token):
                return (
                    400,
                    {"error": "invalid_grant", "error_description": "Refresh token not found or invalid"},
                    {},
                )
            self._refresh_tokens[token] = False  # rotation: a refresh token works once
            return 200, self._token_body(jwt=jwt), {}

    def revoke_identity_token(self, token: str) -> None:
        """Make a GitHub token (Copilot) or a Meta identity token unusable."""
        with self._lock:
            self._identity_tokens[token] = False

    def _copilot_token(self, authorization: str) -> tuple[int, Any, dict[str, str]]:
        token = authorization.removeprefix("Bearer ").removeprefix("token ")
        with self._lock:
            self.refresh_count += 1
            if not self._identity_tokens.get(token):
                return 401, {"message": "Bad credentials"}, {}
            access = (
                f"tid={secrets.token_hex(8)};exp=1;sku=free;proxy-ep=proxy.individual.githubcopilot.com;8kp=1"
            )
            self._access.add(access)
        return (
            200,
            {"token": access, "expires_at": int(time.time()) + self.expires_in, "refresh_in": 1500},
            {},
        )

    def _device_start(self, body: JsonObject) -> tuple[int, Any, dict[str, str]]:
        device_code = "dc-" + secrets.token_urlsafe(12)
        user_code = "ABCD-1234"
        with self._lock:
            self._devices[device_code] = _Device(str(body.get("client_id")), list(self.device_script))
        return (
            200,
            {
                "device_code": device_code,
                "user_code": user_code,
                "verification_uri": "https://example.com/device",
                "verification_uri_complete": f"https://example.com/device?user_code={user_code}",
                "interval": self.device_interval,
                "expires_in": 600,
            },
            {},
        )

    def _device_poll(self, body: JsonObject) -> tuple[int, Any, dict[str, str]]:
        with self._lock:
            device = self._devices.get(str(body.get("device_code")))
            if device is None or device.client_id != body.get("client_id"):
                return 400, {"error": "invalid_grant"}, {}
            step = device.script[min(device.polls, len(device.script) - 1)]
            device.polls += 1
            if step == "ok":
                del self._devices[str(body.get("device_code"))]
                return 200, self._token_body(), {}
            answer: JsonObject = {"error": step}
            if step == "slow_down":
                answer["interval"] = self.device_interval * 2
            return 400, answer, {}


def main() -> None:
    """``python -m pi_tui.testing.oauth_server``: serve on loopback until interrupted, printing the URL."""
    import signal
    import sys

    with FakeAuthServer() as server:
        sys.stdout.write(f"{server.url}\n")
        sys.stdout.flush()
        try:
            signal.pause()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
