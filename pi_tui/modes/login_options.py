"""What ``/login`` offers, as pi 0.87.1 lists it: one option per provider and way of signing in.

A provider with an account login (a subscription such as Claude Pro/Max, or a device login) is offered as
``oauth``; a provider a key can be saved for (every built-in one with an API key, and any provider
models.json or an extension adds) as ``api_key``; a provider with both is offered twice. Each option
carries the provider's auth status: how it is configured now (a stored login, a saved key, a key in
models.json or the environment) and from where. The interactive ``/login`` and RPC's
``get_login_providers`` both read this list.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pi_tui.ai.catalog import KEYLESS_PROVIDERS, env_vars, provider_info
from pi_tui.ai.oauth import oauth_provider_ids, oauth_provider_name

if TYPE_CHECKING:
    from pi_tui.ai.model_registry import ModelRegistry

__all__ = [
    "AuthStatus",
    "AuthType",
    "LoginOption",
    "api_key_providers",
    "auth_status",
    "login_options",
    "provider_display_name",
    "sorted_by_name",
]

AuthType = Literal["oauth", "api_key"]


@dataclass(frozen=True)
class AuthStatus:
    """How a provider is configured: ``type`` of the credential in use, and ``source`` where it comes
    from (``stored credential``; the variable names such as ``OPENAI_API_KEY``; ``models_json_key`` or
    ``models_json_command`` for a models.json ``apiKey``)."""

    type: AuthType
    source: str


@dataclass(frozen=True)
class LoginOption:
    """One row of the login list: a provider and one way of signing in to it."""

    id: str
    name: str
    auth_type: AuthType
    status: AuthStatus | None
    """None when the provider has no credentials at all (pi's ``unconfigured``)."""


def provider_display_name(provider: str) -> str:
    """The provider's name as pi 0.87.1's /login and /logout show it (``Kimi For Coding``, ``OpenAI
    Codex``): the catalog's provider name, not the login method's (``Kimi Code (subscription)``)."""
    info = provider_info(provider)
    if info is not None:
        return info.name
    return oauth_provider_name(provider) if provider in oauth_provider_ids() else provider


def sorted_by_name(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``(id, name)`` pairs sorted by name as pi lists providers (``localeCompare``: case does not come
    first)."""
    return sorted(items, key=lambda item: (item[1].casefold(), item[1]))


def api_key_providers(registry: ModelRegistry) -> list[tuple[str, str]]:
    """``(id, name)`` of every provider a key can be saved for, sorted by name as pi lists them."""
    out: list[tuple[str, str]] = []
    for provider in registry.providers():
        info = provider_info(provider)
        if info is not None:
            if info.api_key_name is not None:
                out.append((provider, info.name))
            continue
        # A provider that models.json or an extension adds takes a key too, under its id, as in pi;
        # one that only signs in with an account (an extension's login without a key) does not.
        only_account = provider in oauth_provider_ids() and registry.configured_key_source(provider) is None
        if provider not in KEYLESS_PROVIDERS and not only_account:
            out.append((provider, provider))
    return sorted_by_name(out)


def auth_status(registry: ModelRegistry, provider: str) -> AuthStatus | None:
    """How ``provider`` is configured now, or None when it is not."""
    entry = registry.auth.get(provider)
    if entry is not None:
        return AuthStatus("oauth" if entry.get("type") == "oauth" else "api_key", "stored credential")
    configured = registry.configured_key_source(provider)
    if configured is not None:  # models.json or an extension: pi names the key's origin
        return AuthStatus("api_key", configured)
    if registry.has_auth(provider):  # the environment
        return AuthStatus("api_key", ", ".join(name for name in env_vars(provider) if os.environ.get(name)))
    return None


def login_options(registry: ModelRegistry, auth_type: AuthType | None = None) -> list[LoginOption]:
    """Every login option (of ``auth_type`` only, when given), sorted by provider name as pi's list."""
    accounts = [(p, provider_display_name(p)) for p in oauth_provider_ids()] if auth_type != "api_key" else []
    keyed = api_key_providers(registry) if auth_type != "oauth" else []
    rows: list[tuple[str, str, AuthType]] = [(p, n, "oauth") for p, n in accounts]
    rows += [(p, n, "api_key") for p, n in keyed]
    # by name; a provider with both ways lists its account login first, as pi's stable sort does
    rows.sort(key=lambda row: (row[1].casefold(), row[1], row[2] != "oauth"))
    return [LoginOption(p, n, kind, auth_status(registry, p)) for p, n, kind in rows]
