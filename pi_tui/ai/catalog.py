"""The built-in catalog: every provider and model pi 0.87.1 ships, read from generated data.

``pi_tui/data/catalog.jsonl`` is written by `pi_tui.ai.catalog_gen` from pi's own package (a test checks
that the two agree). Its first line describes the providers (name, base URL, wire APIs, the environment
variables of the key in pi's resolution order, login, default model, start-up order); each following
line holds one provider's models in pi's JSON shape. Only the first line is parsed at start-up; a
provider's line is parsed the first time its models are asked for, so a run that uses one provider pays
for that provider only.

Besides pi's providers there is ``faux``, pi-tui's scripted offline model (no key, never chosen
implicitly).
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from pi_tui.util.json_types import JsonObject

from .types import Model

__all__ = [
    "CATALOG_FILE",
    "Catalog",
    "FAUX_PROVIDER",
    "FAUX_MODEL_ID",
    "KEYLESS_PROVIDERS",
    "LoginInfo",
    "ProviderInfo",
    "builtin_models",
    "builtin_providers",
    "catalog_pi_version",
    "faux_model",
    "default_model_id",
    "env_vars",
    "has_env_credentials",
    "provider_info",
    "provider_key_help",
    "provider_models",
    "provider_order",
]

CATALOG_FILE = Path(__file__).resolve().parent.parent / "data" / "catalog.jsonl"

FAUX_PROVIDER = "faux"
FAUX_MODEL_ID = "faux-1"

KEYLESS_PROVIDERS: frozenset[str] = frozenset({FAUX_PROVIDER})
"""Providers that work without any credential (the scripted demo/test provider)."""


@dataclass(frozen=True)
class LoginInfo:
    """A provider's OAuth login as pi offers it (``/login``)."""

    name: str
    subscription: bool
    label: str | None = None


@dataclass(frozen=True)
class ProviderInfo:
    """One built-in provider.

    Attributes:
        id: The provider name used in ``--provider`` and ``provider/model``.
        name: Display name (``OpenRouter``).
        base_url: The provider's base URL (models may carry their own, per wire API).
        apis: The wire APIs its models use, most used first as pi lists them.
        auth: How a key is found: ``key`` (the first set variable of ``env``), ``anthropic``, ``bedrock``,
            ``vertex``, ``cloudflare`` (rules in `has_env_credentials`), ``oauth`` (login only), ``none``.
        env: Environment variables pi reads for the key, in its order.
        api_key_name: What pi calls the key (``OpenRouter API key``); None for login-only providers.
        login: The OAuth login, if pi has one for this provider.
        default_model: pi's default model id for the provider.
        model_count: How many models the catalog lists.
        headers: Headers pi adds to every request of this provider.
    """

    id: str
    name: str
    base_url: str
    apis: tuple[str, ...]
    auth: str
    env: tuple[str, ...]
    api_key_name: str | None
    login: LoginInfo | None
    default_model: str | None
    model_count: int
    headers: dict[str, str] | None = None


_FAUX_INFO = ProviderInfo(
    id=FAUX_PROVIDER,
    name="Faux (scripted, offline)",
    base_url="",
    apis=("faux",),
    auth="none",
    env=(),
    api_key_name=None,
    login=None,
    default_model=FAUX_MODEL_ID,
    model_count=1,
)


class Catalog:
    """A catalog file: the parsed header plus each provider's models, read and parsed on first use.

    Args:
        path: A file written by `pi_tui.ai.catalog_gen`.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        with path.open("rb") as handle:
            first = handle.readline()
        header: JsonObject = json.loads(first)
        self.pi_version: str = header["piVersion"]
        self.order: tuple[str, ...] = tuple(header["providerOrder"])
        self.providers: dict[str, ProviderInfo] = {}
        # where each provider's line starts and how long it is: a run reads only the providers it uses
        self._spans: dict[str, tuple[int, int]] = {}
        self._models: dict[str, list[JsonObject]] = {}
        self._lock = threading.Lock()
        offset = len(first)
        for entry, size in zip(header["providers"], header["lineBytes"], strict=True):
            self._spans[entry["id"]] = (offset, size)
            offset += size
            login = entry.get("login")
            info = ProviderInfo(
                id=entry["id"],
                name=entry["name"],
                base_url=entry["baseUrl"],
                apis=tuple(entry["apis"]),
                auth=entry["auth"],
                env=tuple(entry["env"]),
                api_key_name=entry.get("apiKeyName"),
                login=LoginInfo(login["name"], bool(login["subscription"]), login.get("label"))
                if login
                else None,
                default_model=entry.get("defaultModel"),
                model_count=entry["models"],
                headers=entry.get("headers"),
            )
            self.providers[info.id] = info

    def raw_models(self, provider: str) -> list[JsonObject]:
        """``provider``'s models as pi's JSON (shared: do not modify); empty for an unknown provider."""
        with self._lock:
            found = self._models.get(provider)
            if found is None:
                span = self._spans.get(provider)
                found = []
                if span is not None:
                    with self._path.open("rb") as handle:
                        handle.seek(span[0])
                        found = json.loads(handle.read(span[1]))
                self._models[provider] = found
            return found

    def models(self, provider: str) -> list[Model]:
        """Fresh `Model` objects for ``provider``'s models."""
        return [Model.model_validate({**raw, "provider": provider}) for raw in self.raw_models(provider)]


_catalog: Catalog | None = None
_catalog_lock = threading.Lock()


def _load() -> Catalog:
    global _catalog
    if _catalog is None:
        with _catalog_lock:
            if _catalog is None:
                _catalog = Catalog(CATALOG_FILE)
    return _catalog


def catalog_pi_version() -> str:
    """The pi version the catalog was generated from (``0.87.1``)."""
    return _load().pi_version


def builtin_providers() -> tuple[str, ...]:
    """Every built-in provider id: pi's, in pi's catalog order, then ``faux``."""
    return (*_load().providers, FAUX_PROVIDER)


def provider_info(provider: str) -> ProviderInfo | None:
    """The built-in provider named exactly ``provider``; None for any other name."""
    if provider == FAUX_PROVIDER:
        return _FAUX_INFO
    return _load().providers.get(provider)


def provider_order() -> tuple[str, ...]:
    """pi's order for choosing a start-up model: the first of these with a key gives its default model.
    ``faux`` is not in it: a user without keys should be told so, not handed a scripted model."""
    return _load().order


def default_model_id(provider: str) -> str | None:
    """pi's default model id for ``provider`` (None for providers pi has no default for)."""
    info = provider_info(provider)
    return info.default_model if info is not None else None


def env_vars(provider: str) -> tuple[str, ...]:
    """Environment variables that may hold ``provider``'s key, in pi's order (empty when none)."""
    info = provider_info(provider)
    return info.env if info is not None else ()


def _set(name: str) -> bool:
    # pi ignores variables that are empty or only whitespace
    return bool(os.environ.get(name, "").strip())


def has_env_credentials(provider: str) -> bool:
    """Whether the environment holds what ``provider`` needs, by pi's rule for it.

    ``key``: any of its variables. ``anthropic``: ``ANTHROPIC_AUTH_TOKEN`` (sent as a bearer header),
    ``ANTHROPIC_OAUTH_TOKEN`` or ``ANTHROPIC_API_KEY``. ``cloudflare``: all of its variables (key, account id, gateway id).
    ``bedrock``: a bearer token, a profile, an access key pair, a container or web-identity credential.
    ``vertex``: ``GOOGLE_CLOUD_API_KEY``, or application-default credentials (a credentials file that
    exists) together with a project and a location.
    """
    info = provider_info(provider)
    if info is None:
        return False
    if info.auth in ("key", "anthropic"):
        return any(_set(name) for name in info.env)
    if info.auth == "cloudflare":
        return all(_set(name) for name in info.env)
    if info.auth == "bedrock":
        return any(_set(name) for name in info.env if name != "AWS_ACCESS_KEY_ID") or (
            _set("AWS_ACCESS_KEY_ID") and _set("AWS_SECRET_ACCESS_KEY")
        )
    if info.auth == "vertex":
        if _set("GOOGLE_CLOUD_API_KEY"):
            return True
        credentials = os.environ.get("GOOGLE_APPLICATION_CREDENTIALS", "").strip()
        path = (
            Path(credentials)
            if credentials
            else Path.home() / ".config" / "gcloud" / "application_default_credentials.json"
        )
        project = _set("GOOGLE_CLOUD_PROJECT") or _set("GCLOUD_PROJECT")
        return project and _set("GOOGLE_CLOUD_LOCATION") and path.is_file()
    return False


def _credentials_text(info: ProviderInfo) -> str:
    """What of the environment gives ``info``'s provider a key, by the rule `has_env_credentials` applies."""
    names = list(info.env)
    if info.auth == "cloudflare":
        return " + ".join(names)
    if info.auth == "bedrock":
        pair = "AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY"
        return ", ".join(pair if name == "AWS_ACCESS_KEY_ID" else name for name in names)
    if info.auth == "vertex":
        return (
            "GOOGLE_CLOUD_API_KEY, or GOOGLE_CLOUD_PROJECT (or GCLOUD_PROJECT) + GOOGLE_CLOUD_LOCATION with "
            "application-default credentials (GOOGLE_APPLICATION_CREDENTIALS or gcloud's default file)"
        )
    return " or ".join(names)


def provider_key_help() -> str:
    """The ``--help`` section naming each built-in provider's key variables (one line per provider)."""
    rows: list[tuple[str, str]] = []
    for provider in builtin_providers():
        info = provider_info(provider)
        if info is None:
            continue
        if info.env:
            text = _credentials_text(info)
        elif info.login is not None:
            text = "no variable: log in with 'pi-tui login' (or /login)"
        else:
            continue
        if info.env and info.login is not None:
            text += " (or 'pi-tui login')"
        rows.append((provider, text))
    width = max(len(provider) for provider, _ in rows) + 2
    lines = [f"  {provider.ljust(width)}{text}" for provider, text in rows]
    return (
        "Provider keys (environment variables, looked at in this order; + means all of them):\n"
        + "\n".join(lines)
        + "\n"
    )


def faux_model() -> Model:
    """The faux provider's one model (free, offline); `pi_tui.ai.providers.faux` uses this entry too."""
    return Model(
        id=FAUX_MODEL_ID,
        name="Faux 1 (scripted, offline)",
        api="faux",
        provider=FAUX_PROVIDER,
        base_url="",
        reasoning=True,
        input=["text", "image"],
        context_window=200_000,
        max_tokens=32_000,
    )


def provider_models(provider: str) -> list[Model]:
    """Fresh `Model` objects for every catalog model of ``provider`` (empty for an unknown name)."""
    if provider == FAUX_PROVIDER:
        return [faux_model()]
    return _load().models(provider)


def builtin_models() -> list[Model]:
    """Fresh copies of every built-in model, provider by provider (pi's catalog order, then ``faux``)."""
    return [model for provider in builtin_providers() for model in provider_models(provider)]
