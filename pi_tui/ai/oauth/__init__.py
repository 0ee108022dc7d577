"""Logins (OAuth) to subscription providers, shared by the TUI's ``/login``, ``pi-tui login`` and RPC.

Each provider's flow lives in its own module and is imported only when used. `get_oauth_provider`
finds one by id; `login`/`logout` run a flow and keep ``auth.json`` (pi's file, shared with pi) up to
date; `pi_tui.ai.oauth.resolve` refreshes a stored login before it expires.
"""

from __future__ import annotations

from collections.abc import Callable

from ..auth import AuthStorage
from .types import (
    CANCELLED_MESSAGE,
    AuthEvent,
    AuthPrompt,
    Credential,
    Interaction,
    LoginCancelled,
    OAuthError,
    OAuthProvider,
    PromptOption,
    RequestAuth,
)

__all__ = [
    "ANTHROPIC_EXTRA_USAGE_WARNING",
    "CANCELLED_MESSAGE",
    "AuthEvent",
    "AuthPrompt",
    "Interaction",
    "LoginCancelled",
    "OAuthError",
    "OAuthProvider",
    "PromptOption",
    "RequestAuth",
    "get_oauth_provider",
    "login",
    "logout",
    "oauth_provider_ids",
    "oauth_provider_name",
]

ANTHROPIC_EXTRA_USAGE_WARNING = (
    "Anthropic subscription auth is active. Third-party harness usage draws from extra usage and is billed "
    "per token, not your Claude plan limits. Manage extra usage at https://claude.ai/settings/usage."
)
"""pi 0.87.1's warning for a Claude subscription login (shown after ``/login anthropic``)."""


def _anthropic() -> OAuthProvider:
    from .anthropic import AnthropicOAuth

    return AnthropicOAuth()


def _openai_codex() -> OAuthProvider:
    from .openai_codex import OpenAICodexOAuth

    return OpenAICodexOAuth()


def _github_copilot() -> OAuthProvider:
    from .github_copilot import GitHubCopilotOAuth

    return GitHubCopilotOAuth()


def _xai() -> OAuthProvider:
    from .xai import XaiOAuth

    return XaiOAuth()


def _openrouter() -> OAuthProvider:
    from .openrouter import OpenRouterOAuth

    return OpenRouterOAuth()


def _kimi() -> OAuthProvider:
    from .kimi import KimiOAuth

    return KimiOAuth()


def _radius() -> OAuthProvider:
    from .radius import RadiusOAuth

    return RadiusOAuth()


def _meta() -> OAuthProvider:
    from .meta import MetaOAuth

    return MetaOAuth()


# id -> (display name, flow): the name is here so a picker needs no import; the flow's module loads
# when it is asked for.
_PROVIDERS: dict[str, tuple[str, Callable[[], OAuthProvider]]] = {
    "anthropic": ("Anthropic (Claude Pro/Max)", _anthropic),
    "openai-codex": ("OpenAI (ChatGPT Plus/Pro)", _openai_codex),
    "radius": ("Radius", _radius),
    "github-copilot": ("GitHub Copilot", _github_copilot),
    "xai": ("xAI (Grok/X subscription)", _xai),
    "openrouter": ("OpenRouter OAuth", _openrouter),
    "kimi-coding": ("Kimi Code (subscription)", _kimi),
    "meta": ("Meta (Muse subscription)", _meta),
}


def oauth_provider_ids() -> list[str]:
    """The providers one can log in to, in the order the picker shows them."""
    return list(_PROVIDERS)


def oauth_provider_name(provider_id: str) -> str:
    """The display name of a login provider (the id itself when unknown)."""
    entry = _PROVIDERS.get(provider_id)
    return entry[0] if entry else provider_id


def get_oauth_provider(provider_id: str) -> OAuthProvider | None:
    """The login flow of ``provider_id``, or None when it has none."""
    entry = _PROVIDERS.get(provider_id)
    return entry[1]() if entry is not None else None


def login(provider_id: str, io: Interaction, storage: AuthStorage) -> Credential:
    """Run ``provider_id``'s login through ``io`` and store the result in ``auth.json``.

    Raises:
        LoginCancelled: the user cancelled.
        OAuthError: the provider has no login, the flow failed, or auth.json cannot be written.
    """
    from ..auth import AuthFileError

    provider = get_oauth_provider(provider_id)
    if provider is None:
        known = ", ".join(oauth_provider_ids())
        raise OAuthError(f'No login for "{provider_id}". Providers with a login: {known}')
    try:
        storage.check_readable()  # a malformed auth.json fails now, not after the user signed in
    except AuthFileError as exc:
        raise OAuthError(f"Cannot save a login: {exc}. Fix or move the file, then try again") from None
    credential = provider.login(io)
    try:
        storage.set(provider_id, credential)
    except AuthFileError as exc:
        raise OAuthError(f"Logged in, but the credentials could not be saved: {exc}") from None
    return credential


def logout(provider_id: str, storage: AuthStorage) -> bool:
    """Remove ``provider_id``'s stored credential (a login or a saved key); whether there was one.

    Nothing is revoked at the provider, as in pi.

    Raises:
        OAuthError: auth.json is malformed or cannot be written (it is left as it was).
    """
    from ..auth import AuthFileError

    try:
        return storage.remove(provider_id)
    except AuthFileError as exc:
        raise OAuthError(str(exc)) from None
