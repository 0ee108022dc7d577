"""Reading and validating ``models.json`` (pi's format), with errors that point at a line.

The file is ``{"providers": {"<name>": {baseUrl, api, apiKey, headers, authHeader, compat, models,
modelOverrides}}}``. Parsing is strict about types (a string where a number belongs is an error, not
a silent coercion) and lenient about unknown keys, which are reported as warnings so a typo such as
``contextWindw`` does not go unnoticed. Merging into the catalog happens in `model_registry`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from pi_tui.util import json_safe
from pi_tui.util.json_types import JsonObject
from pi_tui.util.record import Record, ValidationError, field

from .auth import ConfigValueError, expand_config_value
from .jsonc import JsoncError, strip_jsonc

__all__ = [
    "ModelsJsonError",
    "CostConfig",
    "ModelDefinition",
    "ModelOverride",
    "ProviderConfig",
    "ModelsConfig",
    "LoadedModelsJson",
    "load_models_json",
    "parse_models_json",
    "validate_provider_config",
]

PathPart = str | int


class ModelsJsonError(Exception):
    """models.json cannot be used. ``str(error)`` is the one line to show the user."""


class _ConfigModel(Record):
    """camelCase keys only (a snake_case key is unknown, so it is warned about), no type coercions."""

    camel_case = True
    populate_by_name = False
    strict = True


class CostConfig(_ConfigModel):
    """Prices in $ per million tokens; a missing field means 0 (or, in an override, unchanged)."""

    input: float | None = field(default=None, ge=0)
    output: float | None = field(default=None, ge=0)
    cache_read: float | None = field(default=None, ge=0)
    cache_write: float | None = field(default=None, ge=0)
    # pi 0.80.6: prices that apply above an input size; accepted, the base prices are what we bill
    tiers: list[JsonObject] | None = None


class ModelOverride(_ConfigModel):
    """A partial change to a built-in model (``modelOverrides``)."""

    name: str | None = field(default=None, min_length=1)
    reasoning: bool | None = None
    input: list[Literal["text", "image"]] | None = None
    cost: CostConfig | None = None
    context_window: int | None = field(default=None, gt=0)
    max_tokens: int | None = field(default=None, gt=0)
    headers: dict[str, str] | None = None
    compat: JsonObject | None = None
    # pi 0.72-0.87 model fields: accepted (no unknown-key warning) so one file serves both agents
    thinking_level_map: dict[str, str | None] | None = None
    input_limits: JsonObject | None = None
    prompt_cache: dict[str, int | float] | None = None
    sampling_params: JsonObject | None = None


class ModelDefinition(ModelOverride):
    """A model entry of a provider's ``models`` list."""

    id: str = field(min_length=1)
    api: str | None = field(default=None, min_length=1)
    base_url: str | None = field(default=None, min_length=1)


class ProviderConfig(_ConfigModel):
    """One entry of ``providers``."""

    base_url: str | None = field(default=None, min_length=1)
    api: str | None = field(default=None, min_length=1)
    api_key: str | None = field(default=None, min_length=1)
    headers: dict[str, str] | None = None
    auth_header: bool | None = None
    compat: JsonObject | None = None
    models: list[ModelDefinition] | None = None
    model_overrides: dict[str, ModelOverride] | None = None


class ModelsConfig(_ConfigModel):
    providers: dict[str, ProviderConfig] = field(default_factory=dict)


@dataclasses.dataclass
class LoadedModelsJson:
    """A validated file plus non-fatal findings (unknown keys and the like)."""

    config: ModelsConfig
    warnings: list[str] = dataclasses.field(default_factory=list)


# --- locating a JSON path in the source text --------------------------------------------------------

_DECODER = json.JSONDecoder()


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _locate(text: str, path: Sequence[PathPart]) -> int:
    """Offset of the value at ``path`` in valid JSON ``text``, or of the deepest part that exists."""
    pos = _skip_ws(text, 0)
    for part in path:
        if pos >= len(text):
            break
        opener = text[pos]
        if opener == "{" and isinstance(part, str):
            found = _find_member(text, pos, part)
        elif opener == "[" and isinstance(part, int):
            found = _find_item(text, pos, part)
        else:
            found = None
        if found is None:
            break
        pos = found
    return pos


def _past_value(text: str, pos: int) -> int:
    """Where the next member or item starts: past the JSON value at ``pos`` and the comma after it."""
    _, pos = _DECODER.raw_decode(text, pos)
    pos = _skip_ws(text, pos)
    if pos < len(text) and text[pos] == ",":
        pos = _skip_ws(text, pos + 1)
    return pos


def _find_member(text: str, pos: int, wanted: str) -> int | None:
    pos = _skip_ws(text, pos + 1)
    while pos < len(text) and text[pos] == '"':
        # typeshed omits json.decoder.scanstring, which the stdlib's own decoder uses and exports
        key, pos = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
        pos = _skip_ws(text, pos)
        pos = _skip_ws(text, pos + 1)  # past ':'
        if key == wanted:
            return pos
        pos = _past_value(text, pos)
    return None


def _find_item(text: str, pos: int, wanted: int) -> int | None:
    pos = _skip_ws(text, pos + 1)
    index = 0
    while pos < len(text) and text[pos] != "]":
        if index == wanted:
            return pos
        pos = _past_value(text, pos)
        index += 1
    return None


def _line_of(text: str, path: Sequence[PathPart]) -> int:
    return text.count("\n", 0, _locate(text, path)) + 1


def _dotted(path: Sequence[PathPart]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out or "(root)"


# --- validation -----------------------------------------------------------------------------------


def _unknown_keys(obj: Record, path: tuple[PathPart, ...]) -> list[tuple[tuple[PathPart, ...], str]]:
    found = [((*path, key), key) for key in (obj.model_extra or {})]
    for name, info in type(obj).model_fields.items():
        value = getattr(obj, name)  # any Record's declared fields, walked by name
        key = info.alias or name
        if isinstance(value, Record):
            found += _unknown_keys(value, (*path, key))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, Record):
                    found += _unknown_keys(item, (*path, key, index))
        elif isinstance(value, dict) and name in ("providers", "model_overrides"):
            for sub_key, item in value.items():
                if isinstance(item, Record):
                    found += _unknown_keys(item, (*path, key, sub_key))
    return found


def _templated_values(config: ModelsConfig) -> list[tuple[tuple[PathPart, ...], str]]:
    """Every apiKey and header value with the path it sits at."""
    found: list[tuple[tuple[PathPart, ...], str]] = []
    for name, provider in config.providers.items():
        base: tuple[PathPart, ...] = ("providers", name)
        if provider.api_key:
            found.append(((*base, "apiKey"), provider.api_key))
        found += [((*base, "headers", h), v) for h, v in (provider.headers or {}).items()]
        for index, model in enumerate(provider.models or []):
            found += [((*base, "models", index, "headers", h), v) for h, v in (model.headers or {}).items()]
        for model_id, override in (provider.model_overrides or {}).items():
            found += [
                ((*base, "modelOverrides", model_id, "headers", h), v)
                for h, v in (override.headers or {}).items()
            ]
    return found


def _unset_variables(config: ModelsConfig) -> list[tuple[tuple[PathPart, ...], str]]:
    """``$VAR`` references to variables that are not set (commands are left for request time)."""
    problems: list[tuple[tuple[PathPart, ...], str]] = []
    for loc, value in _templated_values(config):
        if value.startswith("!") or "$" not in value:
            continue
        try:
            expand_config_value(value)
        except ConfigValueError as exc:
            problems.append((loc, str(exc)))
    return problems


def validate_provider_config(
    name: str, provider: ProviderConfig, builtin_apis: Mapping[str, str]
) -> list[tuple[tuple[PathPart, ...], str]]:
    """Rules beyond types (pi's, relaxed for built-in providers). Returns (path, problem) pairs."""
    problems: list[tuple[tuple[PathPart, ...], str]] = []
    base: tuple[PathPart, ...] = ("providers", name)
    is_builtin = name in builtin_apis
    models = provider.models or []
    if not models and not is_builtin:
        problems.append((base, f'provider "{name}" is not built in, so it must define "models"'))
    if models and not is_builtin:
        if not provider.base_url and not all(m.base_url for m in models):
            problems.append((base, f'provider "{name}": "baseUrl" is required when defining custom models'))
    for index, model in enumerate(models):
        if not (model.api or provider.api or builtin_apis.get(name)):
            problems.append(
                (
                    (*base, "models", index),
                    f'model "{model.id}": no "api" (set it on the provider or the model)',
                )
            )
    return problems


def parse_models_json(text: str, file: Path | str, builtin_apis: Mapping[str, str]) -> LoadedModelsJson:
    """Validate models.json ``text`` (JSONC: comments and trailing commas are allowed).

    Args:
        text: The file content.
        file: Where it came from, for messages.
        builtin_apis: Built-in provider name -> the API its models use.

    Raises:
        ModelsJsonError: ``"models.json error: <file>:<line>: <what>"`` for the first problem found.
    """
    prefix = f"models.json error: {file}"
    try:
        # JSONC like pi (comments, trailing commas); offsets are kept, so lines below stay right
        block_comments: list[int] = []
        text = strip_jsonc(text, block_comments)
    except JsoncError as exc:
        raise ModelsJsonError(f"{prefix}:{exc.line}: invalid JSONC: {exc}") from exc
    if not text.strip():
        return LoadedModelsJson(ModelsConfig())
    try:
        raw = json_safe.loads(text)
    except json.JSONDecodeError as exc:
        # Python words some errors to be followed by the place ("Unterminated string starting at"):
        # the column follows in parentheses instead
        what = exc.msg.removesuffix(" at").removesuffix(" starting")
        raise ModelsJsonError(f"{prefix}:{exc.lineno}: invalid JSON: {what} (column {exc.colno})") from exc
    if not isinstance(raw, dict):
        raise ModelsJsonError(f'{prefix}:1: expected an object like {{"providers": {{...}}}}')
    try:
        config = ModelsConfig.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise ModelsJsonError(
            f"{prefix}:{_line_of(text, loc)}: {_dotted(loc)}: {first['msg']}{more}"
        ) from exc
    for name, provider in config.providers.items():
        problems = validate_provider_config(name, provider, builtin_apis)
        if problems:
            loc, what = problems[0]
            raise ModelsJsonError(f"{prefix}:{_line_of(text, loc)}: {what}")
    warnings = [
        f"models.json warning: {file}:{_line_of(text, loc)}: {_dotted(loc)}: unknown key ignored"
        for loc, _key in _unknown_keys(config, ())
    ]
    if block_comments:
        warnings.append(
            f"models.json warning: {file}:{block_comments[0]}: /* */ comment: pi 0.87.1 reads only // comments, "
            "so it will not load this file"
        )
    warnings += [
        f"models.json warning: {file}:{_line_of(text, loc)}: {_dotted(loc)}: {what}"
        for loc, what in _unset_variables(config)
    ]
    return LoadedModelsJson(config, warnings)


def load_models_json(path: Path, builtin_apis: Mapping[str, str]) -> LoadedModelsJson | None:
    """Read and validate ``path``; None when the file does not exist.

    Raises:
        ModelsJsonError: the file is unreadable or invalid (see `parse_models_json`).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelsJsonError(f"models.json error: {path}:1: cannot read: {exc}") from exc
    return parse_models_json(text, path, builtin_apis)
