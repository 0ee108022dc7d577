"""Session totals (pi's footer and ``/session``: messages, tool calls, tokens, cost over the whole file),
kept up to date by counting only the entries appended since the last call.

A session file only grows, so the totals of its first N entries do not change: on a 20k-entry session
counting every entry again took ~90 ms at each ``/context`` open and footer refresh.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pi_tui.session.entries import MessageEntry, SessionEntry
from pi_tui.session.usage import UsageTotals, add_usage, extra_usages

from .events import SessionStats

__all__ = ["StatsCounter"]


class StatsCounter:
    """The totals of a session's entries, extended by what was appended since the previous call."""

    __slots__ = ("_owner", "_count", "_last", "_messages", "_extra", "counted")

    def __init__(self) -> None:
        self._owner: object | None = None
        self._count = 0
        self._last: SessionEntry | None = None
        self._messages = SessionStats()
        self._extra = UsageTotals()
        self.counted = 0  # entries looked at so far, over all calls

    def totals(self, owner: object, entries: Sequence[SessionEntry]) -> SessionStats:
        """Totals over ``entries`` (all of ``owner``'s, in file order).

        The previous totals are extended when ``owner`` is the same and its entries still start with the
        ones counted (the last one counted is the same object); otherwise everything is counted again.
        """
        count = self._count
        same = (
            owner is self._owner
            and count <= len(entries)
            and (count == 0 or entries[count - 1] is self._last)
        )
        if not same:
            self._owner, count = owner, 0
            self._messages, self._extra = SessionStats(), UsageTotals()
        stats = self._messages
        for entry in entries[count:]:
            if not isinstance(entry, MessageEntry):
                continue
            message = entry.message
            role = message.role
            if role == "user":
                stats.user_messages += 1
            elif role == "assistant":
                stats.assistant_messages += 1
                stats.tool_calls += len(message.tool_calls())
                u = message.usage
                stats.input += u.input
                stats.output += u.output
                stats.cache_read += u.cache_read
                stats.cache_write += u.cache_write
                stats.cost += u.cost.total
                prompt = u.input + u.cache_read + u.cache_write
                stats.latest_cache_hit = 100 * u.cache_read / prompt if prompt > 0 else None
            elif role == "toolResult":
                stats.tool_results += 1
        # pi 0.81+/0.86+: usage entries, summary calls and tools' nested model work count too
        for usage in extra_usages(entries[count:]):
            add_usage(self._extra, usage)
        self.counted += len(entries) - count
        self._count = len(entries)
        self._last = entries[-1] if entries else None
        extra = self._extra
        return replace(
            stats,
            input=stats.input + extra.input,
            output=stats.output + extra.output,
            cache_read=stats.cache_read + extra.cache_read,
            cache_write=stats.cache_write + extra.cache_write,
            cost=stats.cost + extra.cost,
        )
