from __future__ import annotations

import pytest

from pi_tui.ai.catalog import builtin_models
from pi_tui.ai.thinking import (
    DEFAULT_THINKING_LEVEL,
    THINKING_LEVELS,
    available_thinking_levels,
    clamp_thinking_level,
    cycle_thinking_level,
    is_thinking_level,
    parse_thinking_level,
    supports_xhigh,
)
from pi_tui.ai.types import Model


def _model(model_id: str, reasoning: bool = True) -> Model:
    return Model(id=model_id, api="openai-responses", provider="test", reasoning=reasoning)


def _builtin(label: str) -> Model:
    return next(m for m in builtin_models() if m.label == label)


def test_default_level_is_medium() -> None:
    assert DEFAULT_THINKING_LEVEL == "medium"
    assert THINKING_LEVELS == ("off", "minimal", "low", "medium", "high", "xhigh", "max")


@pytest.mark.parametrize("level", THINKING_LEVELS)
def test_non_reasoning_models_always_get_off(level: str) -> None:
    assert clamp_thinking_level(_builtin("openai/gpt-4o"), level) == "off"


@pytest.mark.parametrize(
    "model_id",
    ["gpt-5.2", "gpt-5.2-codex", "gpt-5.3-codex", "gpt-5.4", "claude-opus-4-6", "vendor/claude-opus-4.6"],
)
def test_xhigh_is_kept_for_the_models_that_support_it(model_id: str) -> None:
    assert supports_xhigh(_model(model_id))
    assert clamp_thinking_level(_model(model_id), "xhigh") == "xhigh"


@pytest.mark.parametrize("model_id", ["claude-sonnet-4-6", "claude-opus-4-5", "gpt-5.1", "gpt-5", "o3"])
def test_xhigh_falls_back_to_high_elsewhere(model_id: str) -> None:
    assert clamp_thinking_level(_model(model_id), "xhigh") == "high"


def test_xhigh_needs_a_reasoning_model_even_with_a_matching_id() -> None:
    assert not supports_xhigh(_model("gpt-5.4", reasoning=False))


@pytest.mark.parametrize("level", ["off", "minimal", "low", "medium", "high"])
def test_levels_a_reasoning_model_has_are_unchanged(level: str) -> None:
    assert clamp_thinking_level(_builtin("anthropic/claude-sonnet-4-5"), level) == level


def test_available_levels_depend_on_the_model() -> None:
    assert available_thinking_levels(_model("x", reasoning=False)) == ("off",)
    assert available_thinking_levels(_model("claude-sonnet-4-6"))[-1] == "high"
    assert available_thinking_levels(_model("gpt-5.4"))[-1] == "xhigh"


def test_parse_accepts_case_and_space_and_rejects_unknown_words() -> None:
    assert parse_thinking_level(" HIGH ") == "high"
    assert parse_thinking_level("xhigh") == "xhigh"
    assert parse_thinking_level("max") == "max"  # pi 0.80.6's level above xhigh
    assert parse_thinking_level("maximum") is None
    assert parse_thinking_level(None) is None
    assert is_thinking_level("low") and not is_thinking_level("LOW") and not is_thinking_level(3)


def test_cycling_walks_the_available_levels_and_wraps() -> None:
    sonnet = _model("claude-sonnet-4-6")
    seen = ["off"]
    for _ in range(5):
        seen.append(cycle_thinking_level(sonnet, seen[-1]))
    assert seen == ["off", "minimal", "low", "medium", "high", "off"]
    assert cycle_thinking_level(_model("gpt-5.4"), "high") == "xhigh"
    assert cycle_thinking_level(_model("gpt-4o", reasoning=False), "off") == "off"


def test_max_is_offered_where_the_catalog_maps_it_as_pi_0_87_1_does() -> None:
    """pi 0.80.6 added ``max`` above ``xhigh``: a model offers it only when its map names it."""
    catalog = {(m.provider, m.id): m for m in builtin_models()}
    opus = catalog[("anthropic", "claude-opus-4-8")]
    assert available_thinking_levels(opus)[-2:] == ("xhigh", "max")
    assert cycle_thinking_level(opus, "xhigh") == "max" and cycle_thinking_level(opus, "max") == "off"
    sonnet = catalog[("anthropic", "claude-sonnet-4-6")]  # maps max but not xhigh
    assert available_thinking_levels(sonnet)[-2:] == ("high", "max")
    assert clamp_thinking_level(sonnet, "xhigh") == "max"
    haiku = catalog[("anthropic", "claude-haiku-4-5")]  # no map: never max
    assert "max" not in available_thinking_levels(haiku)
    assert clamp_thinking_level(haiku, "max") == "high"


def test_a_level_pi_does_not_know_gives_the_models_first_level_as_pi_0_87_1_does() -> None:
    # A session file may record any word: pi's clampThinkingLevel answers the first available level.
    assert clamp_thinking_level(_builtin("anthropic/claude-sonnet-4-5"), "turbo") == "off"
    assert clamp_thinking_level(_builtin("openai/gpt-4o"), "") == "off"
