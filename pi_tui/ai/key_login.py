"""Saving a provider's API key through ``/login``, with what else pi 0.87.1 asks for it.

Most providers need only the key. Cloudflare also needs its account id (and the AI Gateway its gateway
id): pi asks for them after the key and stores them beside it, ``{"type": "api_key", "key", "env":
{"CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID"}}``, which requests then read before the environment.
"""

from __future__ import annotations

from collections.abc import Callable

from .oauth.types import AuthPrompt, Credential, Interaction, OAuthError

__all__ = ["api_key_login"]

# provider -> (variable, question) of each id asked after the key, in pi's order and words
_EXTRA_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "cloudflare-workers-ai": (("CLOUDFLARE_ACCOUNT_ID", "Enter Cloudflare account ID"),),
    "cloudflare-ai-gateway": (
        ("CLOUDFLARE_ACCOUNT_ID", "Enter Cloudflare account ID"),
        ("CLOUDFLARE_GATEWAY_ID", "Enter Cloudflare AI Gateway ID"),
    ),
}


def api_key_login(provider: str, key_name: str) -> Callable[[Interaction], Credential]:
    """The flow that asks for ``provider``'s key (called ``key_name``) and what else it needs.

    The flow raises `OAuthError` when an answer is blank.
    """

    def flow(io: Interaction) -> Credential:
        key = io.prompt(AuthPrompt("secret", f"Enter {key_name}:")).strip()
        if not key:
            raise OAuthError("No key was entered")
        credential: Credential = {"type": "api_key", "key": key}
        env: dict[str, str] = {}
        for variable, question in _EXTRA_FIELDS.get(provider, ()):
            value = io.prompt(AuthPrompt("text", f"{question}:")).strip()
            if not value:
                raise OAuthError(f"No {variable} was entered")
            env[variable] = value
        if env:
            credential["env"] = env
        return credential

    return flow
