"""ChatGPT Plus/Pro login for OpenAI Codex, as pi 0.87.1 does it.

Two ways, chosen first: the browser (PKCE with the redirect to ``http://localhost:1455/auth/callback``,
or the code pasted back when that port is taken or the browser is elsewhere) and a device code for a
headless machine. Both end in the same form-encoded token exchange. The access token is a JWT whose
``https://api.openai.com/auth`` claim names the ChatGPT account; it is stored as ``accountId`` (the
Codex API needs it), and a token without it is refused.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from typing import TYPE_CHECKING, Any

from .types import AuthEvent, AuthPrompt, Credential, Interaction, OAuthError, OAuthProvider, PromptOption

if TYPE_CHECKING:
    from ._http import HttpResult
    from .device import Poll

# The HTTP helpers, the callback server and the device-code loop load inside the functions that use
# them: a run with a stored, unexpired login needs only `account_id` and the provider class.

__all__ = ["OpenAICodexOAuth", "account_id"]

CLIENT_ID = "app_EMoamEEZ73f0CkXaXp7hrann"
AUTH_BASE = "https://auth.openai.com"
AUTHORIZE_URL = f"{AUTH_BASE}/oauth/authorize"
TOKEN_URL = f"{AUTH_BASE}/oauth/token"
CALLBACK_PORT = 1455
CALLBACK_PATH = "/auth/callback"
DEVICE_USER_CODE_URL = f"{AUTH_BASE}/api/accounts/deviceauth/usercode"
DEVICE_TOKEN_URL = f"{AUTH_BASE}/api/accounts/deviceauth/token"
DEVICE_VERIFICATION_URL = f"{AUTH_BASE}/codex/device"
DEVICE_REDIRECT_URI = f"{AUTH_BASE}/deviceauth/callback"
_DEVICE_TIMEOUT_S = 15 * 60
SCOPE = "openid profile email offline_access"
_CLAIM = "https://api.openai.com/auth"


def account_id(access_token: str) -> str | None:
    """The ChatGPT account id in an access token (a JWT), or None."""
    parts = access_token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload: Any = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return None
    claim = payload.get(_CLAIM) if isinstance(payload, dict) else None
    found = claim.get("chatgpt_account_id") if isinstance(claim, dict) else None
    return found if isinstance(found, str) and found else None


def _credential(result: HttpResult, action: str, secrets_: list[str | None]) -> Credential:
    from ._http import failure

    if not result.ok:
        raise failure(f"OpenAI Codex token {action}", result, secrets_)
    access, refresh, expires_in = (
        result.body.get("access_token"),
        result.body.get("refresh_token"),
        result.body.get("expires_in"),
    )
    if not isinstance(access, str) or not isinstance(refresh, str) or not isinstance(expires_in, int | float):
        raise OAuthError(f"OpenAI Codex token {action} returned an unexpected answer (no token in it)")
    account = account_id(access)
    if account is None:
        raise OAuthError("Failed to extract accountId from token")
    return {
        "type": "oauth",
        "access": access,
        "refresh": refresh,
        "expires": int(time.time() * 1000 + expires_in * 1000),
        "accountId": account,
    }


def _exchange(code: str, verifier: str, redirect_uri: str, cancel: threading.Event) -> Credential:
    from ._http import post_form

    result = post_form(
        TOKEN_URL,
        {
            "grant_type": "authorization_code",
            "client_id": CLIENT_ID,
            "code": code,
            "code_verifier": verifier,
            "redirect_uri": redirect_uri,
        },
        cancel=cancel,
    )
    return _credential(result, "exchange", [code, verifier])


class OpenAICodexOAuth(OAuthProvider):
    id = "openai-codex"
    name = "OpenAI (ChatGPT Plus/Pro)"

    def login(self, io: Interaction) -> Credential:
        method = io.prompt(
            AuthPrompt(
                "select",
                "Select OpenAI Codex login method:",
                options=(
                    PromptOption("browser", "Browser login (default)"),
                    PromptOption("device_code", "Device code login (headless)"),
                ),
            )
        )
        if method == "device_code":
            return self._device(io)
        if method != "browser":
            raise OAuthError(f"Unknown OpenAI Codex login method: {method}")
        return self._browser(io)

    def _browser(self, io: Interaction) -> Credential:
        import secrets
        import urllib.parse

        from ._http import endpoint
        from .callback import BrowserStep, authorize_in_browser
        from .pkce import generate_pkce

        verifier, challenge = generate_pkce()
        state = secrets.token_hex(16)

        def authorize_url(redirect_uri: str) -> str:
            query = urllib.parse.urlencode(
                {
                    "response_type": "code",
                    "client_id": CLIENT_ID,
                    "redirect_uri": redirect_uri,
                    "scope": SCOPE,
                    "code_challenge": challenge,
                    "code_challenge_method": "S256",
                    "state": state,
                    "id_token_add_organizations": "true",
                    "codex_cli_simplified_flow": "true",
                    "originator": "pi",
                }
            )
            return f"{endpoint(AUTHORIZE_URL)}?{query}"

        step = BrowserStep(
            provider_name="OpenAI",
            port=CALLBACK_PORT,
            path=CALLBACK_PATH,
            redirect_host="localhost",
            instructions="A browser window should open. Complete login to finish.",
            manual_message="Complete login in your browser, or paste the authorization code / redirect URL here:",
            expected_state=state,
            state_mismatch="State mismatch: the pasted code belongs to another login; start again",
            paste_only_if_port_taken=True,  # as pi: a taken port falls back to pasting the code
        )
        got, redirect_uri = authorize_in_browser(io, step, authorize_url)
        return _exchange(got.code, verifier, redirect_uri, io.cancel)

    def _device(self, io: Interaction) -> Credential:
        from ._device_common import min_poll_interval
        from ._http import endpoint, failure, post_json
        from .device import Poll, poll_device_flow

        started = post_json(DEVICE_USER_CODE_URL, {"client_id": CLIENT_ID}, cancel=io.cancel)
        if started.status == 404:
            raise OAuthError(
                "OpenAI Codex device code login is not enabled for this server. Use browser login."
            )
        if not started.ok:
            raise failure("OpenAI Codex device code request", started)
        body = started.body
        device_id, user_code, interval = (
            body.get("device_auth_id"),
            body.get("user_code"),
            body.get("interval"),
        )
        if isinstance(interval, str):
            try:
                interval = float(interval.strip())
            except ValueError:
                interval = None
        if (
            not isinstance(device_id, str)
            or not isinstance(user_code, str)
            or not isinstance(interval, int | float)
        ):
            raise OAuthError("OpenAI Codex sent an unexpected device code answer")
        io.notify(
            AuthEvent(
                "device_code",
                url=endpoint(DEVICE_VERIFICATION_URL),
                user_code=user_code,
                expires_in=_DEVICE_TIMEOUT_S,
            )
        )

        def poll() -> Poll[tuple[str, str]]:
            result = post_json(
                DEVICE_TOKEN_URL, {"device_auth_id": device_id, "user_code": user_code}, cancel=io.cancel
            )
            if result.ok:
                code, verifier = result.body.get("authorization_code"), result.body.get("code_verifier")
                if isinstance(code, str) and isinstance(verifier, str):
                    return Poll("complete", value=(code, verifier))
                return Poll("failed", message="OpenAI Codex sent an unexpected device token answer")
            if result.status in (403, 404):
                return Poll("pending")
            error = result.body.get("error")
            code_name = error.get("code") if isinstance(error, dict) else error
            if code_name == "deviceauth_authorization_pending":
                return Poll("pending")
            if code_name == "slow_down":
                return Poll("slow_down")
            return Poll("failed", message=str(failure("OpenAI Codex device auth", result)))

        code, verifier = poll_device_flow(
            poll,
            interval=float(interval),
            expires_in=_DEVICE_TIMEOUT_S,
            cancel=io.cancel,
            wait_first=False,
            min_interval=min_poll_interval(),
        )
        return _exchange(code, verifier, DEVICE_REDIRECT_URI, io.cancel)

    def refresh(self, credential: Credential, cancel: threading.Event) -> Credential:
        from ._http import post_form

        refresh = str(credential.get("refresh", ""))
        result = post_form(
            TOKEN_URL,
            {"grant_type": "refresh_token", "refresh_token": refresh, "client_id": CLIENT_ID},
            cancel=cancel,
        )
        return _credential(result, "refresh", [refresh])
