"""What a response cost, from the model's prices (dollars per million tokens) and the normalised usage."""

from __future__ import annotations

from .types import Cost, CostTier, Model, ModelCost, Usage

__all__ = ["calculate_cost", "projected_cost", "rates_for"]

# Anthropic bills a 1-hour cache write at 2x the input price (the 5-minute write, which is what
# `ModelCost.cache_write` holds, is 1.25x).
_ONE_HOUR_WRITE_MULTIPLIER = 2.0


def rates_for(prices: ModelCost, prompt_tokens: int) -> ModelCost | CostTier:
    """The prices that apply to a request whose prompt is ``prompt_tokens`` long (input + cache read +
    cache write): the tier with the highest ``input_tokens_above`` below it, else the base prices."""
    chosen: ModelCost | CostTier = prices
    threshold = -1
    for tier in prices.tiers or ():
        if prompt_tokens > tier.input_tokens_above > threshold:
            chosen, threshold = tier, tier.input_tokens_above
    return chosen


def _price(value: float) -> float:
    # pi's catalog marks an unknown price as a negative number (OpenRouter's "auto" router); it costs
    # nothing we can know, so it counts as 0 instead of making totals negative
    return value if value > 0 else 0.0


def calculate_cost(model: Model, usage: Usage, *, cache_write_1h: int = 0) -> Cost:
    """Price ``usage`` with ``model.cost``, at the tier the prompt's size selects (pi 0.80.6).

    Args:
        model: The model whose prices apply.
        usage: Normalised usage; ``usage.input`` excludes cached tokens.
        cache_write_1h: How many of ``usage.cache_write`` were 1-hour cache writes; they are priced at
            twice the input price instead of ``model.cost.cache_write``.

    Returns:
        A new `Cost`; ``usage`` is not modified.
    """
    prices = rates_for(model.cost, usage.input + usage.cache_read + usage.cache_write)
    price_in, price_out = _price(prices.input), _price(prices.output)
    price_read, price_write = _price(prices.cache_read), _price(prices.cache_write)
    long_writes = max(0, min(cache_write_1h, usage.cache_write))
    short_writes = usage.cache_write - long_writes
    input_cost = usage.input * price_in / 1e6
    output_cost = usage.output * price_out / 1e6
    read_cost = usage.cache_read * price_read / 1e6
    write_cost = (short_writes * price_write + long_writes * price_in * _ONE_HOUR_WRITE_MULTIPLIER) / 1e6
    return Cost(
        input=input_cost,
        output=output_cost,
        cache_read=read_cost,
        cache_write=write_cost,
        total=input_cost + output_cost + read_cost + write_cost,
    )


def projected_cost(model: Model, read: int, write: int, uncached: int) -> float:
    """Dollars a request would cost for its prompt: ``read`` tokens from the cache, ``write`` written to
    it, ``uncached`` plain input, at the tier that prompt's size selects. A provider without a
    cache-write price bills written tokens as input."""
    prices = rates_for(model.cost, read + write + uncached)
    price_in = _price(prices.input)
    price_write = _price(prices.cache_write) or price_in
    return (read * _price(prices.cache_read) + write * price_write + uncached * price_in) / 1e6
