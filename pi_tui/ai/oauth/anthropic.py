"""Claude Pro/Max login (Anthropic OAuth), as pi 0.87.1 does it.

PKCE with the redirect to ``http://localhost:53692/callback`` and, for a browser on another machine,
the code pasted back (the redirect URL, ``code#state``, a query string or the bare code). The access
token (``sk-ant-oat…``) is used as the API key; the Anthropic adapter recognises it and speaks as
Claude Code (`pi_tui.ai.providers.anthropic_oauth`).
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from .types import AuthEvent, Credential, Interaction, OAuthError, OAuthProvider

if TYPE_CHECKING:
    from ._http import HttpResult

# The HTTP helpers and the callback server load inside login and refresh: a run with a stored,
# unexpired login only turns it into request auth.

__all__ = ["AnthropicOAuth"]

CLIENT_ID = "9d1c250a-e61b-44d9-88ed-5944d1962f5e"
AUTHORIZE_URL = "https://claude.ai/oauth/authorize"
EXCHANGE_URL = "https://platform.claude.com/v1/oauth/token"
CALLBACK_PORT = 53692
CALLBACK_PATH = "/callback"
SCOPES = (
    "org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers "
    "user:file_upload"
)
_EXPIRY_MARGIN_MS = 5 * 60 * 1000


def _credential(result: HttpResult, action: str) -> Credential:
    access, refresh, expires_in = (
        result.body.get("access_token"),
        result.body.get("refresh_token"),
        result.body.get("expires_in"),
    )
    if not isinstance(access, str) or not isinstance(refresh, str) or not isinstance(expires_in, int | float):
        raise OAuthError(f"Anthropic {action} returned an unexpected answer (no token in it)")
    return {
        "type": "oauth",
        "refresh": refresh,
        "access": access,
        "expires": int(time.time() * 1000 + expires_in * 1000 - _EXPIRY_MARGIN_MS),
    }


class AnthropicOAuth(OAuthProvider):
    id = "anthropic"
    name = "Anthropic (Claude Pro/Max)"

    def login(self, io: Interaction) -> Credential:
        import urllib.parse

        from ._http import endpoint, failure, post_json
        from .callback import BrowserStep, authorize_in_browser
        from .pkce import generate_pkce

        verifier, challenge = generate_pkce()

        def authorize_url(redirect_uri: str) -> str:
            query = urllib.parse.urlencode(
                {
                    "code": "true",
                    "client_id": CLIENT_ID,
                    "response_type": "code",
                    "redirect_uri": redirect_uri,
                    "scope": SCOPES,
                    "code_challenge": challenge,
                    "code_challenge_method": "S256",
                    "state": verifier,
                }
            )
            return f"{endpoint(AUTHORIZE_URL)}?{query}"

        step = BrowserStep(
            provider_name="Anthropic",
            port=CALLBACK_PORT,
            path=CALLBACK_PATH,
            redirect_host="localhost",
            instructions=(
                "Complete login in your browser. If the browser is on another machine, paste the final "
                "redirect URL here."
            ),
            manual_message="Complete login in your browser, or paste the authorization code / redirect URL here:",
            expected_state=verifier,
        )
        got, redirect_uri = authorize_in_browser(io, step, authorize_url)
        io.notify(AuthEvent("progress", "Exchanging authorization code for tokens..."))
        result = post_json(
            EXCHANGE_URL,
            {
                "grant_type": "authorization_code",
                "client_id": CLIENT_ID,
                "code": got.code,
                "state": got.state or verifier,
                "redirect_uri": redirect_uri,
                "code_verifier": verifier,
            },
            cancel=io.cancel,
        )
        if not result.ok:
            raise failure("Anthropic token exchange", result, [got.code, verifier])
        return _credential(result, "token exchange")

    def refresh(self, credential: Credential, cancel: threading.Event) -> Credential:
        from ._http import failure, post_json

        refresh = str(credential.get("refresh", ""))
        result = post_json(
            EXCHANGE_URL,
            {"grant_type": "refresh_token", "client_id": CLIENT_ID, "refresh_token": refresh},
            cancel=cancel,
        )
        if not result.ok:
            raise failure("Anthropic token refresh", result, [refresh])
        return _credential(result, "token refresh")
