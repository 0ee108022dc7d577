"""Meta (Muse subscription) login: a device code for a Meta identity token, then a Model API key, as
pi 0.87.1 does it. The identity token is kept as ``refresh``; the key (``access``) lasts 24 hours and
"refreshing" mints a new one with the identity token."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from .types import AuthEvent, Credential, Interaction, OAuthError, OAuthProvider

if TYPE_CHECKING:
    from .device import Poll

# The HTTP helpers and the device-code or callback machinery load inside login and refresh: a run
# with a stored, unexpired login only turns it into request auth.

__all__ = ["MetaOAuth"]

CLIENT_ID = "1031625952748946"
DEVICE_AUTHORIZATION_URL = "https://auth.meta.com/oidc/device/authorization/"
DEVICE_POLL_URL = "https://auth.meta.com/oidc/device/token/"
MINT_URL = "https://api.meta.ai/muse-code/key"
_KEY_LIFETIME_MS = 24 * 60 * 60 * 1000


def _mint(identity: str, cancel: threading.Event) -> Credential:
    from ._http import failure, post_json

    result = post_json(
        MINT_URL,
        {},
        headers={"Authorization": f"Bearer {identity}", "x-api-version": "1.0.0"},
        cancel=cancel,
    )
    if not result.ok:
        raise failure("Meta API key mint", result, [identity])
    key = result.body.get("api_key")
    if not isinstance(key, str) or not key:
        action = result.body.get("action_url")
        where = (
            f" Complete setup at {action}"
            if isinstance(action, str) and action.startswith("https://")
            else ""
        )
        raise OAuthError(f"Meta did not issue an API key.{where}")
    return {
        "type": "oauth",
        "refresh": identity,
        "access": key,
        "expires": int(time.time() * 1000) + _KEY_LIFETIME_MS,
    }


class MetaOAuth(OAuthProvider):
    id = "meta"
    name = "Meta (Muse subscription)"
    login_label = "Sign in with Meta"

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

        started = post_form(DEVICE_AUTHORIZATION_URL, {"client_id": CLIENT_ID}, cancel=io.cancel)
        if not started.ok:
            raise failure("Meta device authorization", started)
        body = started.body
        device_code = require_str(body, "device_code", "Meta")
        user_code = require_str(body, "user_code", "Meta")
        url = trusted_url(
            body.get("verification_uri_complete") or body.get("verification_uri"), "Meta", https_only=False
        )
        interval, expires_in = body.get("interval"), body.get("expires_in")
        lifetime = positive_seconds(expires_in)
        io.notify(AuthEvent("device_code", url=url, user_code=user_code, expires_in=lifetime))

        def poll() -> Poll[str]:
            result = post_form(
                DEVICE_POLL_URL,
                {
                    "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                    "device_code": device_code,
                    "client_id": CLIENT_ID,
                },
                cancel=io.cancel,
            )
            token = result.body.get("access_token")
            if result.ok and isinstance(token, str) and token:
                return Poll("complete", value=token)
            outcome = poll_outcome(
                result,
                "Meta",
                denied="Meta login was denied.",
                expired="Meta device authorization expired. Please restart login.",
            )
            return outcome or Poll(
                "failed", message=str(failure("Meta device token request", result, [device_code]))
            )

        identity = poll_device_flow(
            poll,
            interval=positive_seconds(interval),
            expires_in=lifetime,
            cancel=io.cancel,
            min_interval=min_poll_interval(),
        )
        io.notify(AuthEvent("progress", "Enabling Meta Model API access..."))
        return _mint(identity, io.cancel)

    def refresh(self, credential: Credential, cancel: threading.Event) -> Credential:
        return _mint(str(credential.get("refresh", "")), cancel)
