"""Logins (OAuth) to subscription providers, shared by the TUI's ``/login``, ``pi-tui login`` and RPC.

Each provider's flow lives in its own module and is imported only when used. `get_oauth_provider`
finds one by id; `login`/`logout` run a flow and keep ``auth.json`` (pi's file, shared with pi) up to
date; `pi_tui.ai.oauth.resolve` refreshes a stored login before it expires.
"""

from __future__ import annotations

import importlib

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

# id -> (module, class, display name); the name is here so a picker needs no import.
_PROVIDERS: dict[str, tuple[str, str, str]] = {
    "anthropic": ("anthropic", "AnthropicOAuth", "Anthropic (Claude Pro/Max)"),
    "openai-codex": ("openai_codex", "OpenAICodexOAuth", "OpenAI (ChatGPT Plus/Pro)"),
    "github-copilot": ("github_copilot", "GitHubCopilotOAuth", "GitHub Copilot"),
    "xai": ("xai", "XaiOAuth", "xAI (Grok/X subscription)"),
    "openrouter": ("openrouter", "OpenRouterOAuth", "OpenRouter OAuth"),
    "kimi-coding": ("kimi", "KimiOAuth", "Kimi Code (subscription)"),
    "meta": ("meta", "MetaOAuth", "Meta (Muse subscription)"),
}


def oauth_provider_ids() -> list[str]:
    """The providers one can log in to, in the order the picker shows them."""
    return list(_PROVIDERS)


def oauth_provider_name(provider_id: str) -> str:
    """The display name of a login provider (the id itself when unknown)."""
    entry = _PROVIDERS.get(provider_id)
    return entry[2] if entry else provider_id


def get_oauth_provider(provider_id: str) -> OAuthProvider | None:
    """The login flow of ``provider_id``, or None when it has none."""
    entry = _PROVIDERS.get(provider_id)
    if entry is None:
        return None
    module = importlib.import_module(f"{__name__}.{entry[0]}")
    provider: OAuthProvider = getattr(module, entry[1])()
    return provider


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
