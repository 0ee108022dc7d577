"""OpenRouter login: PKCE in the browser, and the code exchanged for an OpenRouter API key, as pi 0.87.1.

The callback listens on a free loopback port under a random path; a browser on another machine can
paste the redirect URL or the code instead. The key never expires (``expires`` is JavaScript's largest
safe integer, as pi writes it) and refreshing keeps it as it is.
"""

from __future__ import annotations

import threading
import urllib.parse
import uuid

from .types import AuthEvent, Credential, Interaction, OAuthError, OAuthProvider

# The HTTP helpers and the device-code or callback machinery load inside login and refresh: a run
# with a stored, unexpired login only turns it into request auth.

__all__ = ["OpenRouterOAuth"]

AUTHORIZE_URL = "https://openrouter.ai/auth"
KEYS_URL = "https://openrouter.ai/api/v1/auth/keys"
NEVER_EXPIRES = 2**53 - 1  # Number.MAX_SAFE_INTEGER


class OpenRouterOAuth(OAuthProvider):
    id = "openrouter"
    name = "OpenRouter OAuth"
    login_label = "Sign in with OpenRouter"
    is_subscription = False

    def login(self, io: Interaction) -> Credential:
        from ._http import endpoint, failure, post_json
        from .callback import BrowserStep, authorize_in_browser
        from .pkce import generate_pkce

        verifier, challenge = generate_pkce()

        def authorize_url(callback_url: str) -> str:
            query = urllib.parse.urlencode(
                {"callback_url": callback_url, "code_challenge": challenge, "code_challenge_method": "S256"}
            )
            return f"{endpoint(AUTHORIZE_URL)}?{query}"

        step = BrowserStep(
            provider_name="OpenRouter",
            port=0,
            path=f"/oauth/callback/{uuid.uuid4()}",
            redirect_host=None,  # the address the server binds, as pi's callback URL names it
            instructions=(
                "Complete sign-in in your browser. If the browser is on another machine, paste the final "
                "redirect URL here."
            ),
            manual_message="Complete sign-in in your browser, or paste the authorization code / redirect URL here:",
            listening_message="Listening for OpenRouter OAuth callback on {uri}",
        )
        got, _ = authorize_in_browser(io, step, authorize_url)
        io.notify(AuthEvent("progress", "Exchanging authorization code for an API key..."))
        result = post_json(
            KEYS_URL,
            {"code": got.code, "code_verifier": verifier, "code_challenge_method": "S256"},
            cancel=io.cancel,
        )
        if not result.ok:
            raise failure("OpenRouter OAuth key exchange", result, [got.code, verifier])
        key = result.body.get("key")
        if not isinstance(key, str) or not key:
            raise OAuthError('OpenRouter OAuth response carries no "key"')
        return {"type": "oauth", "access": key, "refresh": "", "expires": NEVER_EXPIRES}

    def refresh(self, credential: Credential, cancel: threading.Event) -> Credential:
        return dict(credential)  # an OpenRouter key does not expire
