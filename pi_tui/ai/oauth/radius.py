"""Radius login (pi's model gateway), as pi 0.87.1 does it.

Two ways, chosen first. The browser: the gateway names its authorization page (``GET /v1/oauth`` →
``authorizationEndpoint``), the page is opened with PKCE, ``state`` and ``handoff=url``, and the redirect
comes back to ``http://127.0.0.1:1456/oauth/callback`` (pi-tui also takes the pasted redirect URL or
code, for a browser on another machine or a port already taken; pi offers only the callback). A device
code: ``POST /v1/oauth/device``, then polls of the token endpoint. Both end at the gateway's form-encoded
``POST /v1/oauth/token`` (client ``pi-gateway``, scope ``gateway offline_access``), which also refreshes.
The stored login is ``{access, refresh, expires (a minute early), scope}``; the access token is the
Bearer key of Radius requests.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from .types import AuthEvent, AuthPrompt, Credential, Interaction, OAuthError, OAuthProvider, PromptOption

if TYPE_CHECKING:
    from ._http import HttpResult
    from .device import Poll

# The HTTP helpers, the callback server and the device-code loop load inside login and refresh: a run
# with a stored, unexpired login only turns it into request auth.

__all__ = ["RadiusOAuth"]

GATEWAY = "https://radius.pi.dev"
DISCOVERY_URL = f"{GATEWAY}/v1/oauth"
TOKEN_URL = f"{GATEWAY}/v1/oauth/token"
DEVICE_URL = f"{GATEWAY}/v1/oauth/device"
CLIENT_ID = "pi-gateway"
SCOPE = "gateway offline_access"
CALLBACK_PORT = 1456
CALLBACK_PATH = "/oauth/callback"
_SKEW_MS = 60_000
_DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def _credential(result: HttpResult, action: str, secrets: list[str | None], previous: str = "") -> Credential:
    from ._http import failure

    if not result.ok:
        raise failure(f"Radius {action}", result, secrets)
    body = result.body
    access, refresh, expires_in = body.get("access_token"), body.get("refresh_token"), body.get("expires_in")
    if not isinstance(refresh, str) or not refresh:
        refresh = previous
    if not isinstance(access, str) or not access or not refresh or not isinstance(expires_in, int | float):
        raise OAuthError(f"Radius {action} returned an unexpected answer (no token in it)")
    credential: Credential = {
        "type": "oauth",
        "access": access,
        "refresh": refresh,
        "expires": int(time.time() * 1000 + expires_in * 1000 - _SKEW_MS),
    }
    if isinstance(body.get("scope"), str):
        credential["scope"] = body["scope"]
    return credential


class RadiusOAuth(OAuthProvider):
    id = "radius"
    name = "Radius"
    is_subscription = False

    def login(self, io: Interaction) -> Credential:
        method = io.prompt(
            AuthPrompt(
                "select",
                f"Sign in to {self.name}:",
                options=(
                    PromptOption("browser", "Sign in with browser (recommended)"),
                    PromptOption(
                        "device-code", "Sign in with device code (when signing in from another device)"
                    ),
                ),
            )
        )
        if method == "device-code":
            credential = self._device(io)
        elif method == "browser":
            credential = self._browser(io)
        else:
            raise OAuthError(f"Unknown {self.name} sign-in method: {method}")
        self._refresh_catalog(io, str(credential["access"]))
        return credential

    def _refresh_catalog(self, io: Interaction, token: str) -> None:
        """Fetch the gateway's model list with the new login, as pi does after it (not offline); a failure
        only warns: the models pi-tui ships stay usable."""
        import os

        from ..paths import agent_dir
        from ..radius_catalog import refresh_radius_catalog

        if os.environ.get("PI_OFFLINE", "").strip().lower() not in ("", "0", "false", "no"):
            return
        io.notify(AuthEvent("progress", message="Refreshing model catalog..."))
        try:
            refresh_radius_catalog(agent_dir(), token)
        except (OSError, OAuthError) as exc:
            message = (
                f"The Radius model catalog could not be refreshed ({exc}); using the models already known."
            )
            io.notify(AuthEvent("info", message=message))

    def _browser(self, io: Interaction) -> Credential:
        import urllib.parse
        import uuid

        from ._http import endpoint, get_json
        from .callback import BrowserStep, authorize_in_browser
        from .pkce import generate_pkce

        found = get_json(DISCOVERY_URL, cancel=io.cancel)
        if not found.ok:
            detail = found.text.strip().splitlines()[0][:200] if found.text.strip() else ""
            raise OAuthError(
                f"Could not load Radius OAuth config from {GATEWAY}: {found.status} {detail}".rstrip()
            )
        authorize = found.body.get("authorizationEndpoint")
        if not isinstance(authorize, str) or urllib.parse.urlsplit(authorize).scheme not in ("https", "http"):
            raise OAuthError(f"Invalid Radius OAuth config from {GATEWAY}")
        verifier, challenge = generate_pkce()
        state = str(uuid.uuid4())

        def authorize_url(redirect_uri: str) -> str:
            query = urllib.parse.urlencode(
                {
                    "response_type": "code",
                    "client_id": CLIENT_ID,
                    "redirect_uri": redirect_uri,
                    "scope": SCOPE,
                    "code_challenge": challenge,
                    "code_challenge_method": "S256",
                    "handoff": "url",
                    "state": state,
                }
            )
            return f"{endpoint(authorize)}?{query}"

        step = BrowserStep(
            provider_name=self.name,
            port=CALLBACK_PORT,
            path=CALLBACK_PATH,
            redirect_host="127.0.0.1",
            instructions="Continue in your browser.",
            manual_message="Sign in in your browser, or paste the redirect URL here:",
            expected_state=state,
            state_mismatch="OAuth state mismatch: the pasted URL belongs to another login; start again",
            paste_only_if_port_taken=True,
            listening_message="Listening for OAuth callback on {uri}",
        )
        got, redirect_uri = authorize_in_browser(io, step, authorize_url)
        return self._token(
            {
                "grant_type": "authorization_code",
                "client_id": CLIENT_ID,
                "redirect_uri": redirect_uri,
                "code": got.code,
                "code_verifier": verifier,
            },
            "OAuth token request",
            [got.code, verifier],
            io.cancel,
        )

    def _device(self, io: Interaction) -> Credential:
        from ._device_common import min_poll_interval, poll_outcome, positive_seconds, trusted_url
        from ._http import failure, post_form
        from .device import Poll, poll_device_flow

        started = post_form(DEVICE_URL, {"client_id": CLIENT_ID, "scope": SCOPE}, cancel=io.cancel)
        if not started.ok:
            raise failure("Radius OAuth device authorization", started)
        body = started.body
        device_code, user_code = body.get("device_code"), body.get("user_code")
        expires_in, interval = body.get("expires_in"), body.get("interval")
        if (
            not isinstance(device_code, str)
            or not isinstance(user_code, str)
            or not isinstance(expires_in, int | float)
            or expires_in <= 0
        ):
            raise OAuthError("Radius OAuth device authorization response is missing required fields")
        url = trusted_url(body.get("verification_uri"), "Radius")
        io.notify(AuthEvent("device_code", url=url, user_code=user_code, expires_in=float(expires_in)))

        def poll() -> Poll[HttpResult]:
            fields = {"grant_type": _DEVICE_GRANT, "client_id": CLIENT_ID, "device_code": device_code}
            result = post_form(TOKEN_URL, fields, cancel=io.cancel)
            if result.ok:
                return Poll("complete", value=result)
            outcome = poll_outcome(
                result,
                "Radius",
                denied="Device authorization was denied.",
                expired="Device authorization expired.",
            )
            return outcome or Poll(
                "failed", message=str(failure("Radius OAuth token request", result, [device_code]))
            )

        done = poll_device_flow(
            poll,
            interval=positive_seconds(interval),
            expires_in=float(expires_in),
            cancel=io.cancel,
            min_interval=min_poll_interval(),
        )
        return _credential(done, "OAuth token request", [device_code])

    def _token(
        self, fields: dict[str, str], action: str, secrets: list[str | None], cancel: threading.Event
    ) -> Credential:
        from ._http import post_form

        return _credential(post_form(TOKEN_URL, fields, cancel=cancel), action, secrets)

    def refresh(self, credential: Credential, cancel: threading.Event) -> Credential:
        from ._http import post_form

        refresh = str(credential.get("refresh", ""))
        fields = {"grant_type": "refresh_token", "client_id": CLIENT_ID, "refresh_token": refresh}
        result = post_form(TOKEN_URL, fields, cancel=cancel)
        return _credential(result, "token refresh", [refresh], previous=refresh)
