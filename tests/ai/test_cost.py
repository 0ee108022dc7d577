from __future__ import annotations

import pytest

from pi_tui.ai.catalog import provider_models
from pi_tui.ai.cost import calculate_cost, projected_cost
from pi_tui.ai.types import CostTier, Model, ModelCost, Usage


def _model(cost: ModelCost) -> Model:
    return Model(id="m", api="openai-responses", provider="p", cost=cost)


TIERED = ModelCost(
    input=2.5,
    output=15.0,
    cache_read=0.25,
    cache_write=0.0,
    tiers=[CostTier(input_tokens_above=272_000, input=5.0, output=22.5, cache_read=0.5, cache_write=0.0)],
)


def test_below_the_tier_the_base_prices_apply() -> None:
    cost = calculate_cost(_model(TIERED), Usage(input=200_000, output=1_000, cache_read=72_000))
    assert cost.input == pytest.approx(200_000 * 2.5 / 1e6)
    assert cost.output == pytest.approx(1_000 * 15.0 / 1e6)
    assert cost.cache_read == pytest.approx(72_000 * 0.25 / 1e6)


def test_a_prompt_above_the_tier_is_priced_at_the_tier_including_cache_tokens() -> None:
    # 200K fresh + 72,001 cached = just above 272K: the whole request moves to the tier's prices
    cost = calculate_cost(_model(TIERED), Usage(input=200_000, output=1_000, cache_read=72_001))
    assert cost.input == pytest.approx(200_000 * 5.0 / 1e6)
    assert cost.output == pytest.approx(1_000 * 22.5 / 1e6)
    assert cost.cache_read == pytest.approx(72_001 * 0.5 / 1e6)
    assert cost.total == pytest.approx(cost.input + cost.output + cost.cache_read)


def test_the_highest_tier_below_the_prompt_wins() -> None:
    prices = ModelCost(
        input=1.0,
        output=1.0,
        tiers=[
            CostTier(input_tokens_above=100, input=2.0, output=2.0),
            CostTier(input_tokens_above=1_000, input=3.0, output=3.0),
        ],
    )
    assert calculate_cost(_model(prices), Usage(input=500)).input == pytest.approx(500 * 2.0 / 1e6)
    assert calculate_cost(_model(prices), Usage(input=5_000)).input == pytest.approx(5_000 * 3.0 / 1e6)


def test_a_catalog_model_with_tiers_prices_large_prompts_higher() -> None:
    gpt = next(m for m in provider_models("openai") if m.id == "gpt-5.4")
    assert gpt.cost.tiers
    small = calculate_cost(gpt, Usage(input=100_000)).input / 100_000
    large = calculate_cost(gpt, Usage(input=300_000)).input / 300_000
    assert large > small


def test_an_unknown_price_counts_as_zero_not_negative() -> None:
    auto = next(m for m in provider_models("openrouter") if m.id == "openrouter/auto")
    cost = calculate_cost(auto, Usage(input=1_000, output=1_000))
    assert cost.total == 0.0


def test_the_context_projection_uses_the_tier_its_prompt_reaches() -> None:
    model = _model(TIERED)
    below = projected_cost(model, read=100_000, write=0, uncached=100_000)
    assert below == pytest.approx((100_000 * 0.25 + 100_000 * 2.5) / 1e6)
    above = projected_cost(model, read=200_000, write=0, uncached=100_000)
    assert above == pytest.approx((200_000 * 0.5 + 100_000 * 5.0) / 1e6)
    # no write price: written tokens are billed as input, as the projection always did
    assert projected_cost(model, read=0, write=1_000, uncached=0) == pytest.approx(1_000 * 2.5 / 1e6)
