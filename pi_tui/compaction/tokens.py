"""How full the context is, and pi's trigger rule.

`context_tokens` follows pi: the usage the provider reported for the newest successful assistant message
(``totalTokens``, else input + output + cache read + cache write), plus the chars/4 estimate of every
message after it. Usage reported before the newest compaction is stale (it measured the context the
compaction replaced) and is ignored; without a fresh usage the whole context is estimated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pi_tui.ai.tokens import count_message_tokens
from pi_tui.ai.types import AssistantMessage

from .path import context_messages, entry_id, latest_compaction_index

__all__ = ["usage_tokens", "should_compact", "context_tokens", "estimate_messages_tokens"]


def usage_tokens(usage: Any) -> int:
    """Tokens a usage record accounts for (pi's ``calculateContextTokens``)."""
    total = int(getattr(usage, "total_tokens", 0) or 0)
    if total:
        return total
    return sum(int(getattr(usage, k, 0) or 0) for k in ("input", "output", "cache_read", "cache_write"))


def should_compact(context_tokens: int, context_window: int, settings: Any) -> bool:
    """pi's threshold: enabled and ``context_tokens > context_window - reserve_tokens``."""
    if not getattr(settings, "enabled", True):
        return False
    return context_tokens > context_window - int(settings.reserve_tokens)


def estimate_messages_tokens(messages: Sequence[Any]) -> int:
    """Sum of pi's per-message chars/4 estimates."""
    return sum(count_message_tokens(m) for m in messages)


def _valid_usage(message: Any) -> bool:
    return isinstance(message, AssistantMessage) and message.stop_reason not in ("error", "aborted")


def context_tokens(path: Sequence[Any], *, overhead_tokens: int = 0) -> int:
    """The context size of the active path, in tokens (see the module docstring).

    Args:
        path: the active path, root first.
        overhead_tokens: the system prompt and tool definitions, added only when nothing measured them
            (a fresh usage already includes them).
    """
    env = context_messages(path)
    latest = latest_compaction_index(path)
    fresh: set[str] = set()
    for entry in path[latest + 1 :]:
        eid = entry_id(entry)
        if eid is not None:
            fresh.add(eid)
    origins = env._origins()
    for index in range(len(env.cached) - 1, -1, -1):
        message = env.cached[index]
        if _valid_usage(message) and origins[index] in fresh:
            measured = usage_tokens(message.usage)
            if measured:
                return measured + estimate_messages_tokens(env.cached[index + 1 :])
    return overhead_tokens + estimate_messages_tokens(env.cached)
