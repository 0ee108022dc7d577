"""Which models exist and how to reach them: built-ins merged with ``models.json`` and extensions.

Merging follows pi: a ``models.json`` provider named like a built-in one changes that provider's
models (``baseUrl``/``headers``/``compat`` apply to all of them, ``modelOverrides`` patch single
models, ``models`` entries are upserted by id); any other provider adds its own models. A file that
cannot be used never breaks start-up: the built-ins stay and `ModelRegistry.errors` carries one line
for the UI.

Key resolution order for a provider (pi 0.87): runtime override (``--api-key``), ``auth.json``, the
provider's ``apiKey`` from ``models.json`` or an extension registration, then the environment (the
catalog's variables for the provider, `catalog.env_vars`).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from pi_tui.util.json_types import JsonObject
from pi_tui.util.record import ValidationError

from . import paths
from .auth import (
    AuthStorage,
    CommandValue,
    config_value_env_names,
    env_api_key,
    env_key_variables,
    resolve_config_value,
    resolve_headers,
)
from .catalog import (
    FAUX_PROVIDER,
    KEYLESS_PROVIDERS,
    builtin_providers,
    default_model_id,
    has_env_credentials,
    provider_info,
    provider_models,
    provider_order,
)
from .models_json import (
    ModelDefinition,
    ModelOverride,
    ModelsJsonError,
    ProviderConfig,
    load_models_json,
)
from .types import CostTier, Model, ModelCost

if TYPE_CHECKING:
    from .oauth.types import RequestAuth

__all__ = ["ModelRegistry", "missing_key_message"]

logger = logging.getLogger(__name__)

_AUTH_TOKEN_VARIABLE = "ANTHROPIC_AUTH_TOKEN"

SOURCE_BUILTIN = "built-in"
SOURCE_BUILTIN_MODIFIED = "built-in, changed by models.json"
SOURCE_MODELS_JSON = "models.json"
SOURCE_EXTENSION = "extension"


def _display_path(path: Path) -> str:
    """``~/...`` for paths under the home directory, as a user would type them."""
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)


AMBIENT_CREDENTIALS = "<authenticated>"
"""The key given to a provider whose credentials come from the environment without a key (pi's value)."""


def missing_key_message(provider: str, agent_dir: Path | None = None) -> str:
    """One line telling the user how to give ``provider`` a key.

    Example: ``No API key for openai: set OPENAI_API_KEY, save one with /login openai, add it to
    ~/.pi/agent/auth.json, or configure apiKey in ~/.pi/agent/models.json`` (``sign in with /login
    <provider>`` where the provider also has an account login; as pi says, ``/login`` takes either).
    """
    base = agent_dir if agent_dir is not None else paths.agent_dir()
    auth_file = _display_path(paths.auth_json_path(base))
    models_file = _display_path(paths.models_json_path(base))
    # Name the plain API-key variable first: it is what most users have.
    info = provider_info(provider)
    login = f"/login {provider}"
    if info is not None and info.auth == "cloudflare":
        return (
            f"No API key for {provider}: set {' and '.join(info.env)}, save them with {login}, add them to "
            f"{auth_file}, or configure apiKey in {models_file}"
        )
    if info is not None and info.auth == "vertex":
        return (
            f"No credentials for {provider}: set GOOGLE_CLOUD_API_KEY, or use application-default credentials "
            "(GOOGLE_APPLICATION_CREDENTIALS or `gcloud auth application-default login`) with "
            f"GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION; or set them up with {login} or add a key to "
            f"{auth_file}"
        )
    if info is not None and info.auth == "bedrock":
        return (
            f"No AWS credentials for {provider}: set AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key), "
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (with AWS_SESSION_TOKEN for temporary keys), or "
            f"AWS_PROFILE (a profile in ~/.aws/credentials); or set them up with {login} or add a key to "
            f"{auth_file}"
        )
    if info is not None and info.auth == "oauth":
        # a subscription backend without API keys (openai-codex): only a login reaches it
        return (
            f"No login for {provider}: it takes no API key; sign in with {login} "
            f"(or pi-tui login {provider}), which stores the login in {auth_file}"
        )
    names = sorted(env_key_variables(provider), key=lambda n: (not n.endswith("_API_KEY"), n))
    if names:
        env_part = f"set {names[0]}" + (f" (or {', '.join(names[1:])})" if len(names) > 1 else "")
        if info is not None and info.login is not None:  # a subscription or account login works too
            env_part += f", sign in with {login}"
        elif info is not None and info.api_key_name is not None:  # /login saves the key
            env_part += f", save one with {login}"
        return f"No API key for {provider}: {env_part}, add it to {auth_file}, or configure apiKey in {models_file}"
    if info is None:  # a provider models.json adds: often a local server that checks no key
        return (
            f"No API key for {provider}: add it to {auth_file} or configure apiKey in {models_file} "
            '(any placeholder, such as "none", for a server without auth)'
        )
    return f"No API key for {provider}: add it to {auth_file} or configure apiKey in {models_file}"


def _merge_dicts(base: JsonObject | None, extra: JsonObject | None) -> JsonObject | None:
    if not extra:
        return base
    return {**(base or {}), **extra}


def _apply_override(model: Model, override: ModelOverride) -> Model:
    """Patch ``model`` with the fields ``override`` sets (cost, headers and compat merge)."""
    plain: JsonObject = {
        "name": override.name,
        "reasoning": override.reasoning,
        "context_window": override.context_window,
        "max_tokens": override.max_tokens,
        "input_limits": override.input_limits,
        "sampling_params": override.sampling_params,
    }
    update = {field: value for field, value in plain.items() if value is not None}
    if override.input is not None:
        update["input"] = list(override.input)
    if override.cost is not None:
        old = model.cost
        update["cost"] = ModelCost(
            input=override.cost.input if override.cost.input is not None else old.input,
            output=override.cost.output if override.cost.output is not None else old.output,
            cache_read=override.cost.cache_read if override.cost.cache_read is not None else old.cache_read,
            cache_write=override.cost.cache_write
            if override.cost.cache_write is not None
            else old.cache_write,
            tiers=_tiers(override.cost.tiers) if override.cost.tiers is not None else old.tiers,
        )
    if override.thinking_level_map:
        update["thinking_level_map"] = {**(model.thinking_level_map or {}), **override.thinking_level_map}
    if override.prompt_cache is not None:
        update["prompt_cache"] = {**(model.prompt_cache or {}), **override.prompt_cache}
    if override.headers:
        update["headers"] = _merge_dicts(
            model.headers, resolve_headers(override.headers, defer_commands=True)
        )
    compat = merge_compat(model.compat, override.compat)
    if compat != model.compat:
        update["compat"] = compat
    return model.model_copy(update=update)


def _with_account_ids(model: Model) -> Model:
    """Cloudflare's base URLs name the account (and gateway) as ``{CLOUDFLARE_ACCOUNT_ID}``; they are
    filled from the environment, as pi fills them when it sends a request."""
    url = model.base_url
    for name in ("CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID"):
        value = os.environ.get(name, "").strip()
        if value:
            url = url.replace("{" + name + "}", value)
    return model if url == model.base_url else model.model_copy(update={"base_url": url})


# compat keys holding objects that a models.json value extends rather than replaces (pi's rule)
_NESTED_COMPAT = ("openRouterRouting", "vercelGatewayRouting", "chatTemplateKwargs", "chatTemplateArgs")


def merge_compat(base: JsonObject | None, extra: JsonObject | None) -> JsonObject | None:
    """``extra``'s compat keys over ``base``'s; the routing and chat-template objects merge one level."""
    merged = _merge_dicts(base, extra)
    if not extra or merged is None:
        return merged
    for key in _NESTED_COMPAT:
        old, new = (base or {}).get(key), extra.get(key)
        if isinstance(old, dict) or isinstance(new, dict):
            merged[key] = {**(old if isinstance(old, dict) else {}), **(new if isinstance(new, dict) else {})}
    return merged


def _model_defaults(models: list[Model], model_id: str, api: str | None) -> Model | None:
    """Where a models.json model without ``api`` or ``baseUrl`` takes them from, as pi picks it: the model
    with the same id, else one on the same API, else a Chat Completions one, else the first."""
    return (
        next((m for m in models if m.id == model_id), None)
        or (next((m for m in models if m.api == api), None) if api else None)
        or next((m for m in models if m.api == "openai-completions"), None)
        or (models[0] if models else None)
    )


def _tiers(raw: list[JsonObject] | None) -> list[CostTier] | None:
    """models.json ``cost.tiers`` as records (a tier without ``inputTokensAbove`` is dropped)."""
    if not raw:
        return None
    return [CostTier.model_validate(t) for t in raw if isinstance(t.get("inputTokensAbove"), int)] or None


class ModelRegistry:
    """All known models, the ones usable right now, and their keys.

    Built-in providers come from the catalog (`pi_tui.ai.catalog`); a provider's models are built the
    first time they are needed, so a run that uses one provider does not pay for the other forty.

    Args:
        agent_dir: Directory holding ``models.json`` and ``auth.json``; defaults to the agent dir
            (``PI_CODING_AGENT_DIR`` or ``~/.pi/agent``), read once here.
        auth: An `AuthStorage` to share; by default one for ``<agent_dir>/auth.json``.
    """

    def __init__(self, agent_dir: Path | None = None, *, auth: AuthStorage | None = None) -> None:
        self._agent_dir = agent_dir if agent_dir is not None else paths.agent_dir()
        self._auth = auth if auth is not None else AuthStorage(paths.auth_json_path(self._agent_dir))
        self._runtime_keys: dict[str, str] = {}
        self._config_keys: dict[str, str] = {}
        self._registered: dict[str, ProviderConfig] = {}
        self._configs: list[tuple[str, ProviderConfig, str]] = []
        self._provider_names: list[str] = []
        self._models_by_provider: dict[str, list[Model]] = {}
        self._sources: dict[tuple[str, str], str] = {}
        self._errors: list[str] = []
        self._warnings: list[str] = []
        self._build()

    # --- loading ---------------------------------------------------------------------------------

    @property
    def agent_dir(self) -> Path:
        return self._agent_dir

    @property
    def models_json_path(self) -> Path:
        return paths.models_json_path(self._agent_dir)

    @property
    def auth(self) -> AuthStorage:
        return self._auth

    @property
    def errors(self) -> list[str]:
        """Problems with models.json / auth.json from the last (re)load, one line each."""
        return list(self._errors)

    @property
    def warnings(self) -> list[str]:
        """Non-fatal findings (unknown keys, overrides of unknown models)."""
        return list(self._warnings)

    def refresh(self) -> None:
        """Re-read models.json and auth.json (pi does this whenever the model picker opens)."""
        self._auth.reload()
        self._build()

    def _build(self) -> None:
        builtin = builtin_providers()
        builtin_apis = {name: info.apis[0] for name in builtin if (info := provider_info(name)) and info.apis}
        errors: list[str] = []
        warnings: list[str] = []
        config_keys: dict[str, str] = {}
        configs: list[tuple[str, ProviderConfig, str]] = []

        loaded = None
        try:
            loaded = load_models_json(self.models_json_path, builtin_apis)
        except ModelsJsonError as exc:
            errors.append(str(exc))
            logger.warning("%s", exc)
        if loaded is not None:
            warnings.extend(loaded.warnings)
            configs += [(name, p, SOURCE_MODELS_JSON) for name, p in loaded.config.providers.items()]
        configs += [(name, p, SOURCE_EXTENSION) for name, p in self._registered.items()]
        for name, provider, _source in configs:
            if provider.api_key:
                config_keys[name] = provider.api_key

        errors.extend(self._auth.drain_errors())
        self._configs = configs
        self._provider_names = list(dict.fromkeys([*builtin, *(name for name, _, _ in configs)]))
        self._models_by_provider = {}
        self._sources = {}
        self._config_keys = config_keys
        self._errors = errors
        self._warnings = warnings
        # Providers that models.json or an extension changes are built now, so their warnings (an
        # override of an unknown model) show at start-up; the others wait until they are used.
        for name in dict.fromkeys(name for name, _, _ in configs):
            self._provider_models(name)

    def _provider_models(self, name: str) -> list[Model]:
        """The models of provider ``name`` (built-ins merged with models.json and extensions)."""
        found = self._models_by_provider.get(name)
        if found is not None:
            return found
        models = provider_models(name)
        if name == "radius":
            models = self._with_gateway_models(models)
        info = provider_info(name)
        if info is not None and info.auth == "cloudflare":
            models = [_with_account_ids(m) for m in models]
        sources = {(name, m.id): SOURCE_BUILTIN for m in models}
        for config_name, provider, source in self._configs:
            if config_name != name:
                continue
            if source == SOURCE_EXTENSION and provider.models:
                # An extension that lists models owns the provider: its list replaces what was there.
                models = []
                sources = {}
            self._apply_provider(name, provider, models, sources, source)
        if info is not None and info.auth == "anthropic":
            models = self._with_bearer_token(name, models)
        self._models_by_provider[name] = models
        self._sources.update(sources)
        return models

    def _with_gateway_models(self, models: list[Model]) -> list[Model]:
        """Radius's bundled models with the gateway's list (stored by a login, pi-tui's or pi's) over them:
        a stored model replaces the bundled one of its id, the others are added, as pi merges them."""
        from .radius_catalog import stored_radius_models

        stored = stored_radius_models(self._agent_dir)
        if not stored:
            return models
        by_id = {m.id: m for m in stored}
        merged = [by_id.pop(m.id, m) for m in models]
        return merged + list(by_id.values())

    def _with_bearer_token(self, name: str, models: list[Model]) -> list[Model]:
        """``ANTHROPIC_AUTH_TOKEN`` is sent as ``Authorization: Bearer`` (pi's rule for proxies and
        gateways) when no key from ``--api-key``, auth.json or models.json comes first."""
        token = os.environ.get(_AUTH_TOKEN_VARIABLE, "").strip()
        if not token or self._runtime_keys.get(name) or self._auth.has(name) or self._config_keys.get(name):
            return models
        header = {"Authorization": f"Bearer {token}"}
        return [m.model_copy(update={"headers": {**(m.headers or {}), **header}}) for m in models]

    def _apply_provider(
        self,
        name: str,
        provider: ProviderConfig,
        models: list[Model],
        sources: dict[tuple[str, str], str],
        source: str,
    ) -> None:
        """Merge one provider entry into ``models`` (all of provider ``name``) in place."""
        where = f"{source}: providers.{name}"
        # "!command" header values (and an authHeader whose key is one) run at each request, as pi's do.
        provider_headers = resolve_headers(provider.headers, defer_commands=True, where=f"{where}.headers")
        auth_header: dict[str, str] | None = None
        if provider.auth_header and provider.api_key:
            if provider.api_key.startswith("!"):
                auth_header = {"Authorization": CommandValue(provider.api_key, "Bearer ", f"{where}.apiKey")}
            elif key := resolve_config_value(provider.api_key):
                auth_header = {"Authorization": f"Bearer {key}"}

        # Provider-level settings and per-model overrides apply to the models already there.
        overrides = dict(provider.model_overrides or {})
        for index, model in enumerate(models):
            update: JsonObject = {}
            if provider.base_url:
                update["base_url"] = provider.base_url
            headers = _merge_dicts(_merge_dicts(model.headers, provider_headers), auth_header)
            if headers != model.headers:
                update["headers"] = headers
            if provider.compat:
                update["compat"] = merge_compat(model.compat, provider.compat)
            changed = model.model_copy(update=update) if update else model
            override = overrides.pop(model.id, None)
            if override is not None:
                changed = _apply_override(changed, override)
            if changed is not model:
                models[index] = changed
                if sources.get((name, model.id)) == SOURCE_BUILTIN:
                    sources[(name, model.id)] = SOURCE_BUILTIN_MODIFIED
        for unknown in overrides:
            self._warnings.append(f'{source}: modelOverrides for unknown model "{name}/{unknown}" ignored')

        for definition in provider.models or []:
            defaults = _model_defaults(models, definition.id, definition.api or provider.api)
            model = self._model_from_definition(
                name, provider, definition, defaults, provider_headers, auth_header
            )
            for index, existing in enumerate(models):
                if existing.id == model.id:
                    models[index] = model
                    break
            else:
                models.append(model)
            sources[(name, model.id)] = source

    @staticmethod
    def _model_from_definition(
        name: str,
        provider: ProviderConfig,
        definition: ModelDefinition,
        defaults: Model | None,
        provider_headers: dict[str, str] | None,
        auth_header: dict[str, str] | None,
    ) -> Model:
        cost = definition.cost
        headers = _merge_dicts(
            _merge_dicts(provider_headers, resolve_headers(definition.headers, defer_commands=True)),
            auth_header,
        )
        return Model(
            id=definition.id,
            name=definition.name or definition.id,
            # Validation guarantees one of these is set.
            api=definition.api or provider.api or (defaults.api if defaults else ""),
            provider=name,
            base_url=definition.base_url or provider.base_url or (defaults.base_url if defaults else ""),
            reasoning=bool(definition.reasoning),
            input=list(definition.input) if definition.input is not None else ["text"],
            cost=ModelCost(
                input=(cost.input or 0.0) if cost else 0.0,
                output=(cost.output or 0.0) if cost else 0.0,
                cache_read=(cost.cache_read or 0.0) if cost else 0.0,
                cache_write=(cost.cache_write or 0.0) if cost else 0.0,
                tiers=_tiers(cost.tiers) if cost else None,
            ),
            context_window=definition.context_window or 128_000,
            max_tokens=definition.max_tokens or 16_384,
            headers=headers,
            compat=merge_compat(provider.compat, definition.compat),
            thinking_level_map=dict(definition.thinking_level_map) if definition.thinking_level_map else None,
            input_limits=definition.input_limits,
            prompt_cache=dict(definition.prompt_cache) if definition.prompt_cache else None,
            sampling_params=definition.sampling_params,
        )

    # --- extensions ------------------------------------------------------------------------------

    def register_provider(self, name: str, config: JsonObject) -> None:
        """Add or change a provider at run time (pi's ``pi.registerProvider``).

        ``config`` uses the models.json provider shape (camelCase). With ``models`` the provider's model
        list is replaced; without, its settings apply to the provider's existing models.

        Raises:
            ValueError: ``config`` is not a valid provider entry.
        """
        try:
            provider = ProviderConfig.model_validate(config)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(root)"
            raise ValueError(f'invalid provider "{name}": {where}: {first["msg"]}') from exc
        if provider.models:
            for definition in provider.models:
                if not (definition.api or provider.api or provider_info(name) is not None):
                    raise ValueError(f'invalid provider "{name}": model "{definition.id}" has no "api"')
        self._registered[name] = provider
        self._build()

    def unregister_provider(self, name: str) -> None:
        """Undo `register_provider`; built-in models of that name come back as they were."""
        if self._registered.pop(name, None) is not None:
            self._build()

    # --- queries ---------------------------------------------------------------------------------

    def all_models(self) -> list[Model]:
        """Every known model, whether or not it has a key (builds every provider's models)."""
        return [m for name in self._provider_names for m in self._provider_models(name)]

    def available_models(self) -> list[Model]:
        """Models whose provider has some form of auth (see `has_auth`). A login that lists the account's
        models (GitHub Copilot's ``availableModelIds``) offers only those, as in pi."""
        out: list[Model] = []
        for name in self._provider_names:
            if not self.has_auth(name):
                continue
            models = self._provider_models(name)
            login = self._auth.oauth(name) if name not in self._runtime_keys else None
            allowed = login.get("availableModelIds") if login is not None else None
            if isinstance(allowed, list):
                models = [m for m in models if m.id in allowed]
            out.extend(models)
        return out

    def providers(self) -> list[str]:
        """Provider names: the built-in ones in catalog order, then those models.json or extensions add."""
        # providers that models.json or an extension touched are already built; an untouched built-in one
        # has the catalog's models, so it is listed without building them
        return [
            name
            for name in self._provider_names
            if (self._models_by_provider[name] if name in self._models_by_provider else provider_info(name))
        ]

    def provider_names(self) -> list[str]:
        """Like `providers`, without building any provider's models (a provider emptied by an extension
        may be among them)."""
        return list(self._provider_names)

    def models_of(self, provider: str) -> list[Model]:
        """The models of ``provider`` (exact name; empty for an unknown one)."""
        return list(self._provider_models(provider)) if provider in self._provider_names else []

    def find(self, provider: str, model_id: str) -> Model | None:
        """The model with exactly this provider and id (provider compared case-insensitively)."""
        wanted = provider.lower()
        for name in self._provider_names:
            if name.lower() == wanted:
                for model in self._provider_models(name):
                    if model.id == model_id:
                        return model
        return None

    def model_source(self, model: Model) -> str:
        """Where a model's definition came from: built-in, models.json, extension, or custom."""
        if model.provider in self._provider_names:
            self._provider_models(model.provider)
        return self._sources.get((model.provider, model.id), "custom")

    def default_model_for(self, provider: str) -> Model | None:
        """pi's default model of ``provider``, else its first model."""
        default_id = default_model_id(provider)
        if default_id is not None:
            found = self.find(provider, default_id)
            if found is not None:
                return found
        return next(iter(self.models_of(provider)), None)

    def default_model(self) -> Model | None:
        """The model to start with when nothing was chosen.

        The first provider in pi's order that has auth gives its default model; failing that, the first
        available model of any other provider (e.g. one from models.json). The keyless ``faux``
        provider is never chosen implicitly. None when no provider has a key.
        """
        for provider in provider_order():
            if self.has_auth(provider):
                model = self.default_model_for(provider)
                if model is not None:
                    return model
        for name in self._provider_names:
            if name != FAUX_PROVIDER and self.has_auth(name):
                models = self._provider_models(name)
                if models:
                    return models[0]
        return None

    # --- keys ------------------------------------------------------------------------------------

    def set_runtime_api_key(self, provider: str, key: str) -> None:
        """A key for this process only (``--api-key``); it beats every other source and is never saved.
        The provider's models are built again (a bearer token from the environment no longer applies):
        look the model up again after calling this."""
        self._runtime_keys[provider] = key
        self._models_by_provider.pop(provider, None)

    def remove_runtime_api_key(self, provider: str) -> None:
        self._runtime_keys.pop(provider, None)

    def requires_api_key(self, model: Model) -> bool:
        """False for providers that work without a key (``faux``)."""
        return model.provider not in KEYLESS_PROVIDERS

    def has_auth(self, provider: str) -> bool:
        """Whether ``provider`` has any key source. Cheap: ``!command`` values are not run here."""
        if provider in KEYLESS_PROVIDERS:
            return True
        if self._runtime_keys.get(provider):
            return True
        if self._auth.has(provider):
            return True
        if self._config_keys.get(provider):
            return True
        return has_env_credentials(provider)

    def configured_key_source(self, provider: str) -> str | None:
        """Where the ``apiKey`` that models.json or an extension gives ``provider`` comes from, in the
        words pi's /login list shows: ``models_json_command`` for a ``!command``, the variable names
        (``A, B``) for a template such as ``$A``, else ``models_json_key``. None without such a key, or
        when a variable the template reads is unset (the key is then not usable)."""
        value = self._config_keys.get(provider)
        if not value:
            return None
        if value.startswith("!"):
            return "models_json_command"
        names = config_value_env_names(value)
        if names:
            return ", ".join(names) if all(os.environ.get(name) for name in names) else None
        return "models_json_key"

    def get_api_key_for_provider(self, provider: str) -> str | None:
        """The key to use for ``provider``, resolved in pi 0.87's order (``--api-key``, auth.json,
        models.json ``apiKey``, the environment); None when there is none."""
        runtime = self._runtime_keys.get(provider)
        if runtime:
            return runtime
        stored = self._auth.api_key(provider)
        if stored:
            return stored
        if self._auth.stored_env(provider):
            # A stored login without a key (Vertex ADC, an AWS profile) owns the provider, as in pi.
            return AMBIENT_CREDENTIALS
        # pi 0.63+: a models.json "!command" key runs on every request, so a rotated token is seen
        configured = resolve_config_value(
            self._config_keys.get(provider),
            where=(
                f"extension provider {provider}: apiKey"
                if provider in self._registered
                else f"{self.models_json_path}: providers.{provider}.apiKey"
            ),
            cache=False,
        )
        if configured:
            return configured
        key = env_api_key(provider)
        if key is None and has_env_credentials(provider):
            # Ambient cloud credentials (Vertex application-default credentials, an AWS profile): the
            # provider authenticates itself; pi's placeholder tells it so, as pi's getEnvApiKey does.
            return AMBIENT_CREDENTIALS
        return key

    def get_api_key(self, model: Model) -> str | None:
        """The key for ``model``'s provider (None for keyless providers without a configured key)."""
        return self.get_api_key_for_provider(model.provider)

    async def resolve_request_auth(self, model: Model) -> RequestAuth | None:
        """What a stored login (OAuth) of ``model``'s provider adds to a request: key, headers, base URL.

        A login about to expire is refreshed first (on a worker thread, under pi's auth.json lock).
        None when the provider has no stored login, or ``--api-key`` overrides it.

        Raises:
            pi_tui.ai.oauth.resolve.LoginExpiredError: the login expired or was revoked; its one-line
                message names ``/login``.
        """
        provider = model.provider
        if self._runtime_keys.get(provider):
            return None
        self._auth.reload_if_changed()
        credential = self._auth.oauth(provider)
        if credential is None:
            return None
        from .oauth.resolve import expires_soon, resolve_oauth

        if expires_soon(credential):
            import asyncio

            return await asyncio.to_thread(resolve_oauth, self._auth, provider)
        return resolve_oauth(self._auth, provider)

    async def resolve_api_key(self, model: Model) -> str | None:
        """The key for a request to ``model``: as `get_api_key`, but a stored login about to expire is
        refreshed first (see `resolve_request_auth`, which also gives a login's headers and base URL)."""
        auth = await self.resolve_request_auth(model)
        if auth is not None and auth.api_key:
            return auth.api_key
        return self.get_api_key_for_provider(model.provider)

    def missing_key_message(self, provider: str) -> str:
        """`missing_key_message` for this registry's agent dir."""
        return missing_key_message(provider, self._agent_dir)
