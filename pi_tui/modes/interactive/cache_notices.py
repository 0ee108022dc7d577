"""What the chat says about the provider's prompt cache, in words a user understands.

Two kinds of notice:

- `invalidation_text`: the request about to be answered changed context the provider had cached (an
  extension's declared change, a panel that moved, anything else that altered the start of the
  prompt), so that part is billed again. Told when the answer starts, above it.
- `cache_warm_text` (only with ``showCacheMissNotices``, as in pi): a prompt cache refresh (cache
  warming) and what it cost, when it is made and again when a session is loaded (it is saved).
- `cache_miss_text` (only with ``showCacheMissNotices``, as in pi): after an answer, when the provider
  reported reading much less from its cache than the previous request had sent, whatever the cause
  (a model switch, an idle gap longer than the cache lives, a change we did not see). Counted as pi
  counts it: misses of at most 1,024 tokens are noise, and only misses of 20,000 tokens or $0.10 are told.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pi_tui.ai.types import AssistantMessage, BranchSummaryMessage, CompactionSummaryMessage, Usage
from pi_tui.session.entries import UsageEntry

__all__ = ["CACHE_TTL_MS", "cache_miss_text", "cache_warm_text", "invalidation_text", "with_cache_miss_notices"]

CACHE_TTL_MS = 5 * 60 * 1000
"""How long a provider keeps a prompt cache (Anthropic's default): a longer pause explains a miss."""
_NOISE_TOKENS = 1024
_TELL_TOKENS = 20_000
_TELL_COST = 0.10

_UNDECLARED = "prefix changed (no reason declared)"


def _tokens(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 10_000:
        return f"{round(count / 1000)}k"
    return f"{count:,}"


_ROLES = {"user": "a prompt", "assistant": "an answer", "toolResult": "a tool result"}


def _place(where: str) -> str:
    """The ledger's block label (``system``, a tool name, ``messages[3] toolResult``) in plain words."""
    match = re.fullmatch(r"messages\[(\d+)\] (\w+)", where)
    if match:
        role = _ROLES.get(match.group(2), match.group(2))
        return f"message {int(match.group(1)) + 1} of the conversation ({role})"
    if where == "system":
        return "the system prompt"
    if where == "end of prompt":
        return "the end of the prompt"
    return f"the tool definitions ({where})"


def invalidation_text(inv: Any) -> str:
    """One line for a `pi_tui.context.ledger.Invalidation`: who changed cached context, why, the cost."""
    cost = (
        f"about {_tokens(int(inv.tokens_rebilled))} tokens the provider had cached are billed again in full"
    )
    if inv.reason == _UNDECLARED:
        return f"The prompt changed at {_place(inv.where)} since the last request, so {cost}."
    return f"{inv.source} changed earlier context ({inv.reason}), so {cost}."


def _prompt_tokens(message: AssistantMessage) -> int:
    usage = message.usage
    return usage.input + usage.cache_read + usage.cache_write


class _MissScanner:
    """Walks a conversation in order and says, for each answer, whether it paid for a large cache miss
    compared with the answer before it (a compaction or branch summary starts afresh)."""

    def __init__(self, cache_read_price: float) -> None:
        self.cache_read_price = cache_read_price
        self.previous: AssistantMessage | None = None
        self.reported_cache = False

    def feed(self, item: Any) -> str | None:
        if isinstance(item, CompactionSummaryMessage | BranchSummaryMessage):
            self.previous = None  # new context after a summary: not a miss
            return None
        warmed = _warm_as_answer(item)
        if warmed is not None:  # a cache refresh is the request the next answer is compared with, as pi
            if _prompt_tokens(warmed) > 0:
                self.previous = warmed
                self.reported_cache = True
            return None
        if not isinstance(item, AssistantMessage):
            return None
        text = self.judge(item)
        if _prompt_tokens(item) > 0:
            self.previous = item
            self.reported_cache = self.reported_cache or item.usage.cache_read + item.usage.cache_write > 0
        return text

    def judge(self, message: AssistantMessage) -> str | None:
        previous = self.previous
        usage = message.usage
        prompt = _prompt_tokens(message)
        if message.stop_reason in ("error", "aborted") or previous is None or prompt <= 0:
            return None
        if usage.cache_read + usage.cache_write == 0 and not self.reported_cache:
            return None  # a provider that never reports caching: nothing to say
        missed = min(_prompt_tokens(previous), prompt) - usage.cache_read
        if missed <= _NOISE_TOKENS:
            return None
        paid = usage.input + usage.cache_write
        paid_rate = (usage.cost.input + usage.cost.cache_write) / paid if paid else 0.0
        read_rate = (
            usage.cost.cache_read / usage.cache_read if usage.cache_read else self.cache_read_price / 1e6
        )
        cost = missed * max(0.0, paid_rate - read_rate)
        if missed < _TELL_TOKENS and cost < _TELL_COST:
            return None
        idle_ms = max(0, message.timestamp - previous.timestamp)
        if f"{message.provider}/{message.model}" != f"{previous.provider}/{previous.model}":
            why = " after the model switch"
        elif idle_ms >= CACHE_TTL_MS:
            why = f" after {round(idle_ms / 60_000)} minutes idle"
        else:
            why = ""
        price = f" (~${cost:.2f})" if cost >= 0.01 else ""
        return (
            f"Cache miss{why}: the provider had to read {_tokens(missed)} tokens of earlier context again "
            f"at the full price{price}."
        )


def cache_miss_text(
    messages: Sequence[Any],
    message: AssistantMessage,
    cache_read_price: float = 0.0,
    warmed: UsageEntry | None = None,
) -> str | None:
    """The notice for ``message`` (just answered) when it paid for a large cache miss, else None.

    ``messages`` is the session's context; ``message`` may or may not be in it yet.
    ``cache_read_price`` (dollars per million tokens, the model's) prices what a hit would have cost
    when the answer read nothing from the cache. ``warmed``: the last prompt cache refresh since the
    answer before, which ``message`` is compared with instead (its prompt, its time).
    """
    scanner = _MissScanner(cache_read_price)
    for item in messages:
        if item is message:
            break
        scanner.feed(item)
    if warmed is not None:
        scanner.feed(warmed)
    return scanner.judge(message)


def _warm_as_answer(item: object) -> AssistantMessage | None:
    """A cache refresh's ``usage`` entry as the request it repeated (provider, model, usage, time)."""
    if not isinstance(item, UsageEntry) or item.kind != "cache_warm":
        return None
    try:
        usage = Usage.model_validate(item.usage)
        at = int(datetime.fromisoformat(item.timestamp.replace("Z", "+00:00")).timestamp() * 1000)
    except (TypeError, ValueError):
        return None
    return AssistantMessage(provider=item.provider, model=item.model, usage=usage, timestamp=at)


def cache_warm_text(entry: object) -> str | None:
    """The line for a session entry that records a prompt cache refresh, or None for any other entry."""
    from pi_tui.runtime.cache_warmer import format_warming_usage

    if not isinstance(entry, UsageEntry) or entry.kind != "cache_warm":
        return None
    cost = entry.usage.get("cost")
    total = cost.get("total") if isinstance(cost, dict) else None
    amount = float(total) if isinstance(total, int | float) and not isinstance(total, bool) else 0.0
    return format_warming_usage(amount, entry.note)


def with_cache_miss_notices(items: Sequence[Any], cache_read_price: float = 0.0) -> list[Any]:
    """``items`` (a branch as the chat shows it) with a warning `Notice` after each answer that paid for
    a large cache miss: misses are not saved in the session, so a loaded one is worked out again. A
    cache refresh's ``usage`` entry among the items becomes its "Cache warmed" line."""
    from .chat import Notice

    out: list[Any] = []
    scanner = _MissScanner(cache_read_price)
    for item in items:
        warm_text = cache_warm_text(item)  # a saved refresh: shown as its line, compared with as a request
        out.append(Notice(warm_text) if warm_text is not None else item)
        text = scanner.feed(item)
        if text:
            out.append(Notice(text, "warning"))
    return out
