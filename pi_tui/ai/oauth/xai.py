"""xAI login (SuperGrok or X Premium): a device code, as pi 0.87.1 does it."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from pi_tui.util.json_types import JsonObject

from .types import AuthEvent, Credential, Interaction, OAuthError, OAuthProvider

if TYPE_CHECKING:
    from ._http import HttpResult
    from .device import Poll

# The HTTP helpers and the device-code or callback machinery load inside login and refresh: a run
# with a stored, unexpired login only turns it into request auth.

__all__ = ["XaiOAuth"]

CLIENT_ID = "b1a00492-073a-47ea-816f-4c329264a828"
SCOPE = "openid profile email offline_access grok-cli:access api:access"
DEVICE_CODE_URL = "https://auth.x.ai/oauth2/device/code"
EXCHANGE_URL = "https://auth.x.ai/oauth2/token"
_SKEW_MS = 5 * 60 * 1000
_DEFAULT_LIFETIME_S = 3600


def _credential(body: JsonObject, previous_refresh: str | None = None) -> Credential:
    from ._device_common import require_str

    access = require_str(body, "access_token", "xAI")
    refresh = body.get("refresh_token")
    if refresh is None and previous_refresh:
        refresh = previous_refresh  # xAI may keep the refresh token without sending it again
    if not isinstance(refresh, str) or not refresh:
        raise OAuthError("xAI sent an unexpected answer (no refresh_token)")
    lifetime = body.get("expires_in", _DEFAULT_LIFETIME_S)
    if not isinstance(lifetime, int | float) or lifetime <= 0:
        raise OAuthError("xAI sent an unexpected answer (bad expires_in)")
    return {
        "type": "oauth",
        "access": access,
        "refresh": refresh,
        "expires": int(time.time() * 1000 + lifetime * 1000 - _SKEW_MS),
    }


class XaiOAuth(OAuthProvider):
    id = "xai"
    name = "xAI (Grok/X subscription)"
    login_label = "Sign in with SuperGrok or X Premium"

    def login(self, io: Interaction) -> Credential:
        from ._device_common import (
            min_poll_interval,
            poll_outcome,
            positive_seconds,
            require_str,
            trusted_url,
        )
        from ._http import failure, post_form
        from .device import Poll, poll_device_flow

        started = post_form(
            DEVICE_CODE_URL, {"client_id": CLIENT_ID, "scope": SCOPE, "referrer": "pi"}, cancel=io.cancel
        )
        if not started.ok:
            raise failure("xAI device authorization", started)
        body = started.body
        device_code = require_str(body, "device_code", "xAI")
        user_code = require_str(body, "user_code", "xAI")
        url = trusted_url(body.get("verification_uri_complete") or body.get("verification_uri"), "xAI")
        interval = body.get("interval")
        expires_in = body.get("expires_in")
        if not isinstance(expires_in, int | float) or expires_in <= 0:
            raise OAuthError("xAI sent an unexpected answer (bad expires_in)")
        io.notify(AuthEvent("device_code", url=url, user_code=user_code, expires_in=float(expires_in)))

        def poll() -> Poll[HttpResult]:
            result = post_form(
                EXCHANGE_URL,
                {
                    "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                    "client_id": CLIENT_ID,
                    "device_code": device_code,
                },
                cancel=io.cancel,
            )
            if result.ok:
                return Poll("complete", value=result)
            outcome = poll_outcome(
                result, "xAI", denied="xAI device authorization was denied", expired="xAI device code expired"
            )
            return outcome or Poll(
                "failed", message=str(failure("xAI device token polling", result, [device_code]))
            )

        done = poll_device_flow(
            poll,
            interval=positive_seconds(interval),
            expires_in=float(expires_in),
            cancel=io.cancel,
            min_interval=min_poll_interval(),
        )
        return _credential(done.body)

    def refresh(self, credential: Credential, cancel: threading.Event) -> Credential:
        from ._http import failure, post_form

        refresh = str(credential.get("refresh", ""))
        result = post_form(
            EXCHANGE_URL,
            {"grant_type": "refresh_token", "client_id": CLIENT_ID, "refresh_token": refresh},
            cancel=cancel,
        )
        if not result.ok:
            raise failure("xAI token refresh", result, [refresh])
        return _credential(result.body, refresh)
