"""Thinking (reasoning effort) levels and how they fit a given model.

Rules (pi's): non-reasoning models only have ``off``; a model's ``thinking_level_map`` hides the levels
it maps to ``null`` and offers ``xhigh`` and ``max`` (pi 0.80.6's level above ``xhigh``) only when it maps
them (models without a map: ``xhigh`` for the GPT-5.2/5.3/5.4 and Opus 4.6 families, as pi decided before
the catalog carried maps, and never ``max``); a level a model lacks is replaced by the nearest available
level at or above it, else the nearest below. The default level is ``medium``.
"""

from __future__ import annotations

from typing import TypeGuard

from .types import THINKING_LEVELS, Model, ThinkingLevel

__all__ = [
    "THINKING_LEVELS",
    "DEFAULT_THINKING_LEVEL",
    "DEFAULT_THINKING_BUDGETS",
    "is_thinking_level",
    "parse_thinking_level",
    "supports_xhigh",
    "available_thinking_levels",
    "clamp_thinking_level",
    "cycle_thinking_level",
    "level_map",
    "level_value",
]

DEFAULT_THINKING_LEVEL: ThinkingLevel = "medium"

DEFAULT_THINKING_BUDGETS: dict[ThinkingLevel, int] = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
}
"""pi's token budgets for budget-based (pre-4.6 Anthropic) thinking; settings may override them."""

# Substrings of model ids that accept the extra-high level.
_XHIGH_MARKERS = ("gpt-5.2", "gpt-5.3", "gpt-5.4", "opus-4-6", "opus-4.6")


def is_thinking_level(value: object) -> TypeGuard[ThinkingLevel]:
    """True for one of ``off, minimal, low, medium, high, xhigh, max`` (exact, lower case)."""
    return isinstance(value, str) and value in THINKING_LEVELS


def parse_thinking_level(value: str | None) -> ThinkingLevel | None:
    """The level named by ``value`` (case and surrounding space ignored), or None if it names none."""
    if value is None:
        return None
    candidate = value.strip().lower()
    return candidate if is_thinking_level(candidate) else None


def supports_xhigh(model: Model) -> bool:
    """Whether the model accepts ``xhigh``, judged by its id as pi does."""
    model_id = model.id.lower()
    return model.reasoning and any(marker in model_id for marker in _XHIGH_MARKERS)


def level_map(model: Model) -> dict[str, str | None] | None:
    """The model's ``thinkingLevelMap`` (its field, else the same key in ``compat``), or None."""
    if model.thinking_level_map is not None:
        return model.thinking_level_map
    mapping = (model.compat or {}).get("thinkingLevelMap")
    return mapping if isinstance(mapping, dict) else None


def level_value(model: Model, level: str) -> str | None:
    """What to send for ``level``: its ``thinkingLevelMap`` value (None when mapped to ``null``), else the
    older ``compat.reasoningEffortMap`` value, else the level's own name."""
    mapping = level_map(model)
    if mapping is not None and level in mapping:
        return mapping[level]
    efforts = (model.compat or {}).get("reasoningEffortMap")
    if isinstance(efforts, dict) and isinstance(efforts.get(level), str):
        return str(efforts[level])
    return level


def available_thinking_levels(model: Model) -> tuple[ThinkingLevel, ...]:
    """Levels the model accepts, lowest first."""
    if not model.reasoning:
        return ("off",)
    mapping = level_map(model)
    if mapping is not None:
        offers_xhigh = mapping.get("xhigh") is not None
    else:
        offers_xhigh = supports_xhigh(model)
    offers_max = mapping is not None and mapping.get("max") is not None
    levels = tuple(
        t for t in THINKING_LEVELS if (t != "xhigh" or offers_xhigh) and (t != "max" or offers_max)
    )
    if mapping is not None:
        # a level mapped to null is not offered (pi 0.72)
        shown = tuple(level for level in levels if not (level in mapping and mapping[level] is None))
        return shown or levels
    return levels


def clamp_thinking_level(model: Model, level: str) -> ThinkingLevel:
    """The level to actually use for ``model`` when ``level`` was asked for.

    Picks ``level`` itself when available, else the nearest available level above it, else the
    nearest below it. A word that is no level (a session file records whatever was written) gives the
    model's first level, as pi's ``clampThinkingLevel`` does.
    """
    available = available_thinking_levels(model)
    if not is_thinking_level(level):
        return available[0]
    if level in available:
        return level
    index = THINKING_LEVELS.index(level)
    for candidate in THINKING_LEVELS[index + 1 :]:
        if candidate in available:
            return candidate
    for candidate in reversed(THINKING_LEVELS[:index]):
        if candidate in available:
            return candidate
    return "off"


def cycle_thinking_level(model: Model, current: ThinkingLevel) -> ThinkingLevel:
    """The next level in the model's available levels after ``current``, wrapping to the first."""
    available = available_thinking_levels(model)
    effective = clamp_thinking_level(model, current)
    position = available.index(effective)
    return available[(position + 1) % len(available)]
