"""Turning what the user typed (``--provider``, ``--model``, ``--models``, ``--thinking``) into models.

Matching follows pi: an exact ``provider/id`` or id wins; otherwise a case-insensitive substring of
the id or display name, where an alias (``claude-sonnet-4-5``) beats a dated id
(``claude-sonnet-4-5-20250929``) and, among several, the highest version wins. A ``:level`` suffix
sets the thinking level (``sonnet:high``); ids that themselves contain colons
(``qwen3-coder:exacto``) still match because the whole pattern is tried before any suffix is split off.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..util.fuzzy import fuzzy_filter
from .model_registry import ModelRegistry
from .thinking import (
    DEFAULT_THINKING_LEVEL,
    THINKING_LEVELS,
    clamp_thinking_level,
    is_thinking_level,
    parse_thinking_level,
)
from .types import Model, ThinkingLevel

__all__ = [
    "ModelResolutionError",
    "PatternMatch",
    "ResolvedModel",
    "ScopedModel",
    "parse_model_pattern",
    "resolve_cli_model",
    "resolve_model_scope",
    "find_initial_model",
    "list_models_table",
    "locale_sort_key",
    "unknown_provider_message",
    "format_token_count",
    "fuzzy_filter_models",
    "find_exact_model_reference",
    "model_command_target",
    "search_models_for_picker",
]


class ModelResolutionError(ValueError):
    """No model matches what the user asked for. The message says what to try instead."""


@dataclass(frozen=True)
class PatternMatch:
    """Result of `parse_model_pattern`: the model (or None), a ``:level`` suffix, and a warning."""

    model: Model | None
    thinking_level: ThinkingLevel | None = None
    warning: str | None = None


@dataclass(frozen=True)
class ResolvedModel:
    """What ``--provider/--model/--thinking`` resolved to.

    ``thinking_level`` is the level the user asked for (``--thinking`` or a ``:level`` suffix), not yet
    fitted to the model; `effective_thinking_level` fits it.
    """

    model: Model | None
    thinking_level: ThinkingLevel | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def effective_thinking_level(self) -> ThinkingLevel:
        """The level to use: the requested one (default medium) clamped to what the model supports."""
        level = self.thinking_level or DEFAULT_THINKING_LEVEL
        return clamp_thinking_level(self.model, level) if self.model is not None else level


@dataclass(frozen=True)
class ScopedModel:
    """One model of a ``--models`` scope, with an optional per-model thinking level."""

    model: Model
    thinking_level: ThinkingLevel | None = None


# --- matching --------------------------------------------------------------------------------------

_DATED = re.compile(r"-\d{8}$")
_NUMBER = re.compile(r"(\d+)")


def _is_alias(model_id: str) -> bool:
    """``-latest`` ids and ids without a ``-YYYYMMDD`` date are aliases."""
    return model_id.endswith("-latest") or not _DATED.search(model_id)


def _text_key(text: str) -> tuple[tuple[int, str], ...]:
    # punctuation and symbols before letters, as pi's locale-aware comparison orders them
    return tuple((1 if ch.isalpha() else 0, ch) for ch in text)


def _version_key(model_id: str) -> tuple[Any, ...]:
    """Sort key comparing digit runs as numbers, so ``4-10`` sorts above ``4-9``; other characters
    compare with punctuation below letters (``~anthropic/...`` does not outrank ``claude-...``)."""
    return tuple(
        (1, int(part)) if part.isdigit() else (0, _text_key(part)) for part in _NUMBER.split(model_id.lower())
    )


def _try_match(pattern: str, models: Sequence[Model]) -> Model | None:
    lowered = pattern.lower()
    if "/" in pattern:
        provider, _, model_id = pattern.partition("/")
        for model in models:
            if model.provider.lower() == provider.lower() and model.id.lower() == model_id.lower():
                return model
    for model in models:
        if model.id.lower() == lowered:
            return model
    matches = [m for m in models if lowered in m.id.lower() or lowered in (m.name or "").lower()]
    if not matches:
        return None
    aliases = [m for m in matches if _is_alias(m.id)]
    pool = aliases or matches
    return max(pool, key=lambda m: _version_key(m.id))


def parse_model_pattern(
    pattern: str, models: Sequence[Model], *, allow_invalid_level_fallback: bool = True
) -> PatternMatch:
    """Match ``pattern`` (optionally ending in ``:level``) against ``models``.

    The whole pattern is tried first, so ids containing colons match exactly. Otherwise the part after
    the last colon is taken as a thinking level; an invalid level gives a warning (and the default
    level) when ``allow_invalid_level_fallback`` is true, and no match otherwise.
    """
    model = _try_match(pattern, models)
    if model is not None:
        return PatternMatch(model)
    prefix, colon, suffix = pattern.rpartition(":")
    if not colon:
        return PatternMatch(None)
    level = parse_thinking_level(suffix) if suffix == suffix.strip().lower() else None
    if level is not None:
        inner = parse_model_pattern(prefix, models, allow_invalid_level_fallback=allow_invalid_level_fallback)
        if inner.model is None:
            return inner
        return PatternMatch(inner.model, None if inner.warning else level, inner.warning)
    if not allow_invalid_level_fallback:
        return PatternMatch(None)
    inner = parse_model_pattern(prefix, models, allow_invalid_level_fallback=allow_invalid_level_fallback)
    if inner.model is None:
        return inner
    return PatternMatch(
        inner.model,
        None,
        f'Invalid thinking level "{suffix}" in pattern "{pattern}"; using the default instead. '
        f"Valid levels: {', '.join(THINKING_LEVELS)}.",
    )


def find_exact_model_reference(reference: str, models: Sequence[Model]) -> Model | None:
    """The model ``reference`` names exactly, as pi's ``/model <ref>`` finds it, or None.

    ``provider/id`` (any case) names one model; a bare id counts only when a single provider has it.
    Anything less exact is for the picker to show, not for a guess.
    """
    wanted = reference.strip().lower()
    if not wanted:
        return None
    by_label = [m for m in models if m.label.lower() == wanted]
    if by_label:
        return by_label[0] if len(by_label) == 1 else None
    if "/" in wanted:
        provider, _, model_id = wanted.partition("/")
        by_parts = [
            m for m in models if m.provider.lower() == provider.strip() and m.id.lower() == model_id.strip()
        ]
        if by_parts:
            return by_parts[0] if len(by_parts) == 1 else None
    by_id = [m for m in models if m.id.lower() == wanted]
    return by_id[0] if len(by_id) == 1 else None


def model_command_target(
    reference: str, models: Sequence[Model]
) -> tuple[Model, ThinkingLevel | None] | None:
    """What ``/model <reference>`` switches to at once, in every interactive mode, as pi's ``/model``.

    The model `find_exact_model_reference` finds, optionally followed by ``:<thinking level>``
    (``anthropic/claude-opus-4-6:high``). None when the reference names no model exactly: the caller
    then offers its picker with ``reference`` as the search.
    """
    model = find_exact_model_reference(reference, models)
    if model is not None:
        return model, None
    base, _, suffix = reference.strip().rpartition(":")
    level = parse_thinking_level(suffix)
    if base and level is not None and (model := find_exact_model_reference(base, models)) is not None:
        return model, level
    return None


def search_models_for_picker(query: str, models: Sequence[Model]) -> list[Model]:
    """The models a ``/model`` picker shows for ``query`` (every mode's picker), best match first.

    pi's fuzzy matcher over ``provider/id`` and the display name; all of ``models`` for a blank query.
    """
    if not query.strip():
        return list(models)
    return [models[i] for i, _ in fuzzy_filter(query.strip(), [f"{m.label} {m.name}" for m in models])]


def _exact(text: str, models: Sequence[Model]) -> Model | None:
    lowered = text.lower()
    for model in models:
        if model.id.lower() == lowered or model.label.lower() == lowered:
            return model
    return None


def _unambiguous_exact(registry: ModelRegistry, pattern: str) -> Model | None:
    """The model whose id (or ``provider/id``) is exactly ``pattern``, as pi 0.87 picks it: with the same
    id at several providers, the only one that has a key; None when there is none.

    Raises:
        ModelResolutionError: several providers have the id and not exactly one of them has a key.
    """
    lowered = pattern.lower()
    matches = [m for m in registry.all_models() if m.id.lower() == lowered or m.label.lower() == lowered]
    if len(matches) <= 1:
        return matches[0] if matches else None
    with_key = [m for m in matches if registry.has_auth(m.provider)]
    if len(with_key) == 1:
        return with_key[0]
    labels = ", ".join(sorted((m.label for m in matches), key=str.lower))
    why = (
        "No matching provider is authenticated."
        if not with_key
        else "More than one matching provider is authenticated."
    )
    raise ModelResolutionError(
        f'Model "{pattern}" is ambiguous across providers: {labels}. {why} Use --provider or provider/model.'
    )


def _close_matches(text: str, models: Sequence[Model]) -> list[str]:
    labels = [m.label for m in models]
    by_id = {m.id.lower(): m.label for m in models}
    bare = text.split("/", 1)[-1].lower()
    found = difflib.get_close_matches(text.lower(), [label.lower() for label in labels], n=5, cutoff=0.5)
    found += [by_id[i] for i in difflib.get_close_matches(bare, list(by_id), n=5, cutoff=0.5)]
    lowered_to_label = {label.lower(): label for label in labels}
    return list(dict.fromkeys(lowered_to_label.get(f, f) for f in found))[:5]


def unknown_provider_message(provider: str, known: Sequence[str], models_json: Path) -> str:
    """One line for an unknown ``--provider``: the close names, and how to add a provider."""
    lowered = {name.lower(): name for name in known}
    close = difflib.get_close_matches(provider.lower(), list(lowered), n=4, cutoff=0.6)
    # "gemini" should find "google"-style names too: a name containing the text (or contained in it)
    close += [
        lowered[n] for n in lowered if (provider.lower() in n or n in provider.lower()) and n not in close
    ]
    names = list(dict.fromkeys(lowered.get(n, n) for n in close))[:5]
    hint = f" Did you mean: {', '.join(names)}?" if names else ""
    return (
        f'Unknown provider "{provider}".{hint} Run --list-models to see the providers with keys, or add '
        f'it to {models_json} as {{"providers": {{"{provider}": {{"baseUrl": ..., "api": ..., "apiKey": ..., '
        '"models": [{"id": ...}]}}}.'
    )


def resolve_cli_model(
    registry: ModelRegistry,
    provider: str | None,
    pattern: str | None,
    thinking: str | None = None,
) -> ResolvedModel:
    """Resolve ``--provider``, ``--model`` and ``--thinking``.

    Args:
        registry: Where models come from (all models count, with or without a key, as in pi).
        provider: ``--provider`` (case-insensitive), or None.
        pattern: ``--model``: ``id``, ``provider/id``, a partial name, each optionally with ``:level``.
        thinking: ``--thinking``; an invalid value only warns. It beats a ``:level`` suffix.

    Returns:
        The model (None when neither provider nor pattern was given), the requested thinking level and
        warnings for the user. With only a provider, that provider's default model is chosen.

    Raises:
        ModelResolutionError: unknown provider, or nothing matches (the message lists close matches).
    """
    warnings: list[str] = []
    level: ThinkingLevel | None = None
    if thinking is not None:
        level = parse_thinking_level(thinking)
        if level is None:
            warnings.append(
                f'Invalid thinking level "{thinking}"; valid levels are {", ".join(THINKING_LEVELS)}. '
                "Using the default."
            )

    names = registry.provider_names()
    canonical = {name.lower(): name for name in names}
    chosen_provider = canonical.get(provider.lower()) if provider else None
    if provider and chosen_provider is None:
        raise ModelResolutionError(unknown_provider_message(provider, names, registry.models_json_path))

    if not pattern:
        if chosen_provider is None:
            return ResolvedModel(None, level, warnings)
        return ResolvedModel(registry.default_model_for(chosen_provider), level, warnings)

    match, search, inferred = _resolve_pattern(registry, canonical, chosen_provider, pattern)
    if match.model is not None:
        if match.warning:
            warnings.append(match.warning)
        return ResolvedModel(match.model, level or match.thinking_level, warnings)

    target = chosen_provider or inferred
    if target is not None:
        # An unknown id under a known provider: trust the user and reuse the provider's defaults.
        custom_id, _, maybe_level = search.rpartition(":")
        suffix_level = parse_thinking_level(maybe_level) if custom_id else None
        if suffix_level is None:
            custom_id = search
        base = registry.default_model_for(target)
        if base is not None:
            warnings.append(
                f'Model "{custom_id}" not found for provider "{target}"; using it as a custom model id '
                f"with the settings of {base.label}."
            )
            custom = base.model_copy(update={"id": custom_id, "name": custom_id})
            return ResolvedModel(custom, level or suffix_level, warnings)

    display = f"{target}/{search}" if target else pattern
    close = _close_matches(display, registry.all_models())
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    raise ModelResolutionError(f'Model "{display}" not found.{hint} Run --list-models to see all models.')


def _resolve_pattern(
    registry: ModelRegistry, canonical: dict[str, str], provider: str | None, pattern: str
) -> tuple[PatternMatch, str, str | None]:
    """Returns the match, the pattern actually searched, and a provider inferred from ``x/...``.

    Only the named (or inferred) provider's models are built unless the search has to look further.
    """
    search = pattern
    inferred: str | None = None
    if provider is None:
        head, slash, tail = pattern.partition("/")
        if slash and head.lower() in canonical:
            inferred = canonical[head.lower()]
            search = tail
        else:
            exact = _unambiguous_exact(registry, pattern)
            if exact is not None:
                return PatternMatch(exact), search, None
    elif pattern.lower().startswith(provider.lower() + "/"):
        search = pattern[len(provider) + 1 :]
    scope = provider or inferred
    candidates = registry.models_of(scope) if scope else registry.all_models()
    # Under a provider an unknown "id:suffix" becomes a custom id (pi); without one, a bad level only
    # warns, so "sonnet:hgih" still finds Sonnet.
    match = parse_model_pattern(search, candidates, allow_invalid_level_fallback=scope is None)
    if match.model is None and inferred is not None:
        # OpenRouter-style ids such as "openai/gpt-4o" may live under another provider.
        models = registry.all_models()
        exact = _exact(pattern, models)
        if exact is not None:
            return PatternMatch(exact), search, inferred
        match = parse_model_pattern(pattern, models, allow_invalid_level_fallback=False)
    return match, search, inferred


def resolve_model_scope(
    patterns: Iterable[str], models: Sequence[Model]
) -> tuple[list[ScopedModel], list[str]]:
    """Resolve ``--models a,b,...`` (globs such as ``anthropic/*`` or ``*sonnet*``, and ``:level``).

    Returns the scoped models in pattern order without duplicates, and a warning per pattern that
    matched nothing.
    """
    scoped: dict[tuple[str, str], ScopedModel] = {}
    warnings: list[str] = []
    for raw in patterns:
        pattern = raw.strip()
        if not pattern:
            continue
        if any(ch in pattern for ch in "*?["):
            glob, level = pattern, None
            head, colon, tail = pattern.rpartition(":")
            if colon and is_thinking_level(tail):
                glob, level = head, parse_thinking_level(tail)
            lowered = glob.lower()
            hits = [
                m
                for m in models
                if fnmatch.fnmatchcase(m.label.lower(), lowered) or fnmatch.fnmatchcase(m.id.lower(), lowered)
            ]
            if not hits:
                warnings.append(f'No models match pattern "{pattern}"')
            for model in hits:
                scoped.setdefault((model.provider, model.id), ScopedModel(model, level))
            continue
        match = parse_model_pattern(pattern, models)
        if match.warning:
            warnings.append(match.warning)
        if match.model is None:
            warnings.append(f'No models match pattern "{pattern}"')
            continue
        scoped.setdefault(
            (match.model.provider, match.model.id), ScopedModel(match.model, match.thinking_level)
        )
    return list(scoped.values()), warnings


def find_initial_model(
    registry: ModelRegistry, saved_provider: str | None = None, saved_model_id: str | None = None
) -> Model | None:
    """The model to start with when the command line named none.

    The saved default (settings) wins when it still exists and has a key; otherwise the first provider
    in pi's order that has a key gives its default model (see `ModelRegistry.default_model`).
    """
    if saved_provider and saved_model_id:
        saved = registry.find(saved_provider, saved_model_id)
        if saved is not None and registry.has_auth(saved.provider):
            return saved
    return registry.default_model()


# --- --list-models -----------------------------------------------------------------------------------


def format_token_count(count: int) -> str:
    """``200K``, ``1M``, ``1.1M``, ``16.4K``, ``512`` (pi's compact token numbers)."""
    for size, unit in ((1_000_000, "M"), (1_000, "K")):
        if count >= size:
            value = count / size
            return f"{int(value)}{unit}" if value == int(value) else f"{value:.1f}{unit}"
    return str(count)


def fuzzy_filter_models(models: Sequence[Model], query: str) -> list[Model]:
    """Models whose ``provider id`` matches ``query`` (pi's fuzzy filter), best match first.

    Whitespace and ``/`` separate tokens and every token must match (`pi_tui.util.fuzzy`), so
    ``anthropic/sonnet`` and ``anthropic sonnet`` find the same models.
    """
    return [models[index] for index, _ in fuzzy_filter(query, [f"{m.provider} {m.id}" for m in models])]


# Punctuation in the order of the Unicode collation pi's localeCompare uses (all of it before digits,
# digits before letters, letters without regard to case).
_PUNCTUATION_ORDER = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"


def locale_sort_key(text: str) -> tuple[tuple[int, int, str], ...]:
    """A sort key that orders names as pi's ``localeCompare`` does, so ``gpt-5:batch`` comes before
    ``gpt-5.1`` and ``Qwen/...`` sits among the ``q``s."""
    key: list[tuple[int, int, str]] = []
    for ch in text:
        folded = ch.casefold()
        if ch.isdigit():
            key.append((1, 0, folded))
        elif ch.isalpha():
            key.append((2, 0, folded))
        else:
            position = _PUNCTUATION_ORDER.find(ch)
            key.append((0, position if position >= 0 else len(_PUNCTUATION_ORDER), folded))
    return tuple(key)


def list_models_table(models: Sequence[Model], search: str | None = None) -> str:
    """The ``--list-models`` table: provider, model, context, max-out, thinking, images.

    ``models`` is normally `ModelRegistry.available_models()`. Rows are sorted by provider, then id,
    in pi's order (`locale_sort_key`).
    """
    if not models:
        from .no_model import KEY_HINT

        return f"No models available. {KEY_HINT[0].upper()}{KEY_HINT[1:]} and try again."  # pi's wording
    chosen = fuzzy_filter_models(models, search) if search else list(models)
    if not chosen:
        return f'No models matching "{search}"'
    chosen.sort(key=lambda m: (locale_sort_key(m.provider), locale_sort_key(m.id), m.id))
    header = ("provider", "model", "context", "max-out", "thinking", "images")
    rows = [header] + [
        (
            m.provider,
            m.id,
            format_token_count(m.context_window),
            format_token_count(m.max_tokens),
            "yes" if m.reasoning else "no",
            "yes" if "image" in m.input else "no",
        )
        for m in chosen
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows
    )
