"""`format_size` rounds like JavaScript's toFixed(1) on exact values (halves up), in integers."""

from __future__ import annotations

import random
from decimal import ROUND_HALF_UP, Decimal

from pi_tui.tools.truncate import format_size


def _reference(num: int) -> str:
    if num < 1024:
        return f"{num}B"
    unit, suffix = (1024, "KB") if num < 1024 * 1024 else (1024 * 1024, "MB")
    return f"{(Decimal(num) / unit).quantize(Decimal('0.1'), rounding=ROUND_HALF_UP)}{suffix}"


def test_format_size_equals_the_exact_decimal_rounding() -> None:
    rng = random.Random(12)
    halves = [k * 1024 * 1024 + d for k in range(0, 3000, 7) for d in (-52429, -52428, 0, 52428, 52429)]
    values = [*range(0, 5000), *(1024 * k + 51 for k in range(2000)), *halves]
    values += [rng.randrange(0, 10**12) for _ in range(5000)]
    for num in values:
        if num >= 0:
            assert format_size(num) == _reference(num), num
    assert format_size(1280) == "1.3KB" and format_size(1024) == "1.0KB"
