"""Kimi Code login (subscription): a device code against auth.kimi.com, as pi 0.87.1 does it.

pi's ``KIMI_CODE_OAUTH_HOST`` (or ``KIMI_OAUTH_HOST``) points the flow at another host. The access
token is sent as ``Authorization: Bearer`` to the Kimi coding API.
"""

from __future__ import annotations

import os
import threading
import time
from typing import TYPE_CHECKING

from pi_tui.util.json_types import JsonObject

from .types import AuthEvent, Credential, Interaction, OAuthError, OAuthProvider, RequestAuth

if TYPE_CHECKING:
    from ._http import HttpResult
    from .device import Poll

# The HTTP helpers and the device-code or callback machinery load inside login and refresh: a run
# with a stored, unexpired login only turns it into request auth.

__all__ = ["KimiOAuth"]

CLIENT_ID = "17e5f671-d194-4dfb-9706-5516cb48c098"
DEFAULT_HOST = "https://auth.kimi.com"
_DEVICE_TIMEOUT_S = 15 * 60
_DEFAULT_INTERVAL_S = 5
_REFRESH_RETRIES = 3


def _host() -> str:
    override = os.environ.get("KIMI_CODE_OAUTH_HOST") or os.environ.get("KIMI_OAUTH_HOST")
    return (override or DEFAULT_HOST).rstrip("/")


def _credential(body: JsonObject, action: str) -> Credential:
    from ._device_common import require_str

    access = require_str(body, "access_token", f"Kimi Code token {action}")
    refresh = require_str(body, "refresh_token", f"Kimi Code token {action}")
    expires_in = body.get("expires_in")
    if not isinstance(expires_in, int | float) or expires_in <= 0:
        raise OAuthError(f"Kimi Code token {action} sent an unexpected answer (bad expires_in)")
    return {
        "type": "oauth",
        "access": access,
        "refresh": refresh,
        "expires": int(time.time() * 1000 + expires_in * 1000),
    }


class KimiOAuth(OAuthProvider):
    id = "kimi-coding"
    name = "Kimi Code (subscription)"
    login_label = "Sign in with Kimi Code"

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

        host = _host()
        started = post_form(
            f"{host}/api/oauth/device_authorization", {"client_id": CLIENT_ID}, cancel=io.cancel
        )
        if not started.ok:
            raise failure("Kimi Code device authorization", started)
        body = started.body
        device_code = require_str(body, "device_code", "Kimi Code")
        user_code = require_str(body, "user_code", "Kimi Code")
        trusted_url(body.get("verification_uri"), "Kimi Code", https_only=False)
        url = trusted_url(body.get("verification_uri_complete"), "Kimi Code", https_only=False)
        interval = body.get("interval")
        expires_in = body.get("expires_in")
        lifetime = positive_seconds(expires_in) or _DEVICE_TIMEOUT_S
        io.notify(AuthEvent("device_code", url=url, user_code=user_code, expires_in=lifetime))

        def poll() -> Poll[HttpResult]:
            result = post_form(
                f"{host}/api/oauth/token",
                {
                    "client_id": CLIENT_ID,
                    "device_code": device_code,
                    "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                },
                cancel=io.cancel,
            )
            if result.status >= 500:
                return Poll("failed", message=str(failure("Kimi Code device token request", result)))
            if result.ok and isinstance(result.body.get("access_token"), str):
                return Poll("complete", value=result)
            outcome = poll_outcome(
                result,
                "Kimi Code",
                denied="Kimi Code login was denied.",
                expired="Kimi Code device authorization expired. Please restart login.",
            )
            return outcome or Poll("failed", message=str(failure("Kimi Code device token request", result)))

        done = poll_device_flow(
            poll,
            interval=positive_seconds(interval) or _DEFAULT_INTERVAL_S,
            expires_in=lifetime,
            cancel=io.cancel,
            min_interval=min_poll_interval(),
        )
        return _credential(done.body, "poll")

    def refresh(self, credential: Credential, cancel: threading.Event) -> Credential:
        from ._device_common import min_poll_interval
        from ._http import failure, post_form

        refresh = str(credential.get("refresh", ""))
        last: OAuthError | None = None
        for attempt in range(_REFRESH_RETRIES + 1):
            if attempt and cancel.wait(min_poll_interval() * 2 ** (attempt - 1)):
                raise OAuthError("Kimi Code token refresh cancelled")
            try:
                result = post_form(
                    f"{_host()}/api/oauth/token",
                    {"client_id": CLIENT_ID, "grant_type": "refresh_token", "refresh_token": refresh},
                    cancel=cancel,
                )
            except OAuthError as exc:  # network: retried as pi does
                last = exc
                continue
            if result.ok:
                return _credential(result.body, "refresh")
            if result.status in (401, 403) or result.body.get("error") == "invalid_grant":
                raise failure("Kimi Code token refresh", result, [refresh])
            last = failure("Kimi Code token refresh", result, [refresh])
            if not (result.status == 429 or result.status >= 500):
                raise last
        raise last or OAuthError("Kimi Code token refresh failed")

    def to_auth(self, credential: Credential) -> RequestAuth:
        return RequestAuth(headers={"Authorization": f"Bearer {credential.get('access', '')}"})
