"""How full the context is, and pi's trigger rule.

`context_tokens` follows pi: the usage the provider reported for the newest successful assistant message
(``totalTokens``, else input + output + cache read + cache write), plus the chars/4 estimate of every
message after it. Usage reported before the newest compaction is stale (it measured the context the
compaction replaced) and is ignored; without a fresh usage the whole context is estimated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pi_tui.ai.tokens import count_message_tokens, estimate_tokens
from pi_tui.ai.types import AssistantMessage, Message, Usage
from pi_tui.resources.settings_schema import CompactionSettings
from pi_tui.session.entries import SessionEntry
from pi_tui.session.entry_reader import EntryLike

from .path import compaction_mark, context_messages, entry_message

__all__ = [
    "Count",
    "usage_tokens",
    "should_compact",
    "context_tokens",
    "measured_tokens",
    "estimate_messages_tokens",
    "estimate_context_tokens",
]

Count = Callable[[Message], int]
"""A message's token estimate: `count_message_tokens`, or a cache's method that remembers each one."""


def usage_tokens(usage: Usage) -> int:
    """Tokens a usage record accounts for (pi's ``calculateContextTokens``)."""
    total = int(usage.total_tokens or 0)
    if total:
        return total
    return sum(int(n or 0) for n in (usage.input, usage.output, usage.cache_read, usage.cache_write))


def should_compact(context_tokens: int, context_window: int, settings: CompactionSettings) -> bool:
    """pi's threshold: enabled and ``context_tokens > context_window - reserve_tokens``."""
    if not settings.enabled:
        return False
    return context_tokens > context_window - int(settings.reserve_tokens)


def estimate_messages_tokens(messages: Sequence[Message], count: Count = count_message_tokens) -> int:
    """Sum of pi's per-message chars/4 estimates (``count``: a remembering counter, say)."""
    return sum(map(count, messages))


def _valid_usage(message: object) -> bool:
    return isinstance(message, AssistantMessage) and message.stop_reason not in ("error", "aborted")


def measured_tokens(path: Sequence[EntryLike], count: Count = count_message_tokens) -> int | None:
    """The newest fresh usage on ``path`` plus the estimate of every message after it, or None when no
    usage since the newest compaction measured the context. Reads only the tail of the path."""
    trailing = 0
    for index in range(len(path) - 1, -1, -1):
        message = entry_message(path[index])
        if message is None:
            if compaction_mark(path[index]) is not None:
                return None  # usage from before the newest compaction is stale
            continue
        if _valid_usage(message):
            measured = usage_tokens(message.usage)
            if measured:
                return measured + trailing
        trailing += count(message)
    return None


def context_tokens(
    path: Sequence[SessionEntry],
    *,
    overhead_tokens: int = 0,
    count: Count = count_message_tokens,
    history: Callable[[], Sequence[Message]] | None = None,
) -> int:
    """The context size of the active path, in tokens (see the module docstring).

    Runs after every turn and before every request, so the common case reads only the tail of the path:
    the newest fresh usage and the few messages after it.

    Args:
        path: the active path, root first.
        overhead_tokens: the system prompt and tool definitions, added only when nothing measured them
            (a fresh usage already includes them).
        count: a message's estimate (`count_message_tokens`, or a counter that remembers them).
        history: the path's replayed history when the caller keeps it (a runtime's context engine
            extends its last replay); without it the path is replayed here, when no usage measured it.
    """
    measured = measured_tokens(path, count)
    if measured is not None:
        return measured
    messages = history() if history is not None else context_messages(path).cached
    return overhead_tokens + estimate_messages_tokens(messages, count)


def estimate_context_tokens(
    messages: Sequence[Message], system_prompt: Callable[[], str], count: Count = count_message_tokens
) -> int:
    """How full the context of the next request is, over the agent's messages (pi's footer estimate).

    The newest successful answer's usage plus the estimate of every message after it (a prompt sent,
    an aborted or failed answer, tool results); when no answer measured the context, the estimate of
    the system prompt (asked for only then) and of every message; 0 before the first prompt, as pi shows.
    Reads only the tail in the usual case.
    """
    if not messages:
        return 0
    trailing = 0
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if _valid_usage(message):
            measured = usage_tokens(message.usage)
            if measured:
                return measured + trailing
        trailing += count(message)
    return estimate_tokens(system_prompt()) + trailing
