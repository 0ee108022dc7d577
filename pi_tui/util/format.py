"""Compact numbers as pi's footer writes them, for every view that shows token counts."""

from __future__ import annotations

__all__ = ["fmt_tokens"]


def fmt_tokens(n: int | float) -> str:
    """``950``, ``1.2k``, ``12k``, ``1.2M`` (pi's ``formatTokens``: one decimal below 10k, then rounded)."""
    n = int(n)
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{round(n / 1000)}k"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)
