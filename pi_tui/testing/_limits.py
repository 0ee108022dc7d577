"""Per-model limits the fake enforces: context window, output cap, minimum cacheable prefix."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["ModelLimits", "resolve_limits"]


@dataclass(frozen=True)
class ModelLimits:
    """Limits for one model id (or id prefix); ``None`` fields fall back to the `FakeLLM` defaults.

    Attributes:
        context_window: prompt tokens above this are rejected as too long.
        max_output_tokens: Anthropic ``max_tokens`` above this is rejected.
        min_cacheable_tokens: Anthropic: a breakpoint whose prefix is shorter is not cached.
    """

    context_window: int | None = None
    max_output_tokens: int | None = None
    min_cacheable_tokens: int | None = None


def resolve_limits(model: str, table: Mapping[str, ModelLimits], default: ModelLimits) -> ModelLimits:
    """The limits for ``model``: an exact table entry, else the longest matching prefix, else the default.

    Missing fields of the entry are filled from ``default``.
    """
    entry = table.get(model)
    if entry is None:
        prefixes = [key for key in table if model.startswith(key)]
        entry = table[max(prefixes, key=len)] if prefixes else None
    if entry is None:
        return default
    return ModelLimits(
        entry.context_window if entry.context_window is not None else default.context_window,
        entry.max_output_tokens if entry.max_output_tokens is not None else default.max_output_tokens,
        entry.min_cacheable_tokens
        if entry.min_cacheable_tokens is not None
        else default.min_cacheable_tokens,
    )
