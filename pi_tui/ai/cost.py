"""What a response cost, from the model's prices (dollars per million tokens) and the normalised usage."""

from __future__ import annotations

from .types import Cost, Model, Usage

__all__ = ["calculate_cost"]

# Anthropic bills a 1-hour cache write at 2x the input price (the 5-minute write, which is what
# `ModelCost.cache_write` holds, is 1.25x).
_ONE_HOUR_WRITE_MULTIPLIER = 2.0


def calculate_cost(model: Model, usage: Usage, *, cache_write_1h: int = 0) -> Cost:
    """Price ``usage`` with ``model.cost``.

    Args:
        model: The model whose prices apply.
        usage: Normalised usage; ``usage.input`` excludes cached tokens.
        cache_write_1h: How many of ``usage.cache_write`` were 1-hour cache writes; they are priced at
            twice the input price instead of ``model.cost.cache_write``.

    Returns:
        A new `Cost`; ``usage`` is not modified.
    """
    prices = model.cost
    long_writes = max(0, min(cache_write_1h, usage.cache_write))
    short_writes = usage.cache_write - long_writes
    input_cost = usage.input * prices.input / 1e6
    output_cost = usage.output * prices.output / 1e6
    read_cost = usage.cache_read * prices.cache_read / 1e6
    write_cost = (
        short_writes * prices.cache_write + long_writes * prices.input * _ONE_HOUR_WRITE_MULTIPLIER
    ) / 1e6
    return Cost(
        input=input_cost,
        output=output_cost,
        cache_read=read_cost,
        cache_write=write_cost,
        total=input_cost + output_cost + read_cost + write_cost,
    )
