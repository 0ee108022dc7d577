"""Model usage recorded outside assistant messages (pi 0.81+/0.86+), for session totals.

pi counts, besides each assistant message's ``usage``: ``usage`` entries (any ``kind``, e.g. cache
warming), the ``usage`` of compaction and branch-summary entries (the summary calls), and a tool
result's ``usage`` (nested model work done by a tool). None of these is ever part of the context.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .entries import BranchSummaryEntry, CompactionEntry, MessageEntry, UsageEntry

__all__ = ["UsageTotals", "extra_usages", "add_usage"]


@dataclass
class UsageTotals:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def add_usage(totals: UsageTotals, usage: Mapping[str, Any]) -> None:
    """Add one usage record (pi's JSON shape); fields of an unfamiliar shape count as zero."""
    totals.input += int(_number(usage.get("input")))
    totals.output += int(_number(usage.get("output")))
    totals.cache_read += int(_number(usage.get("cacheRead")))
    totals.cache_write += int(_number(usage.get("cacheWrite")))
    cost = usage.get("cost")
    totals.cost += _number(cost.get("total")) if isinstance(cost, Mapping) else 0.0


def extra_usages(entries: Iterable[Any]) -> Iterator[Mapping[str, Any]]:
    """Every usage record of ``entries`` that is not an assistant message's own."""
    for entry in entries:
        usage: Any = None
        if isinstance(entry, UsageEntry | CompactionEntry | BranchSummaryEntry):
            usage = entry.usage
        elif isinstance(entry, MessageEntry) and entry.message.role == "toolResult":
            usage = (entry.message.model_extra or {}).get("usage")
        if isinstance(usage, Mapping):
            yield usage
