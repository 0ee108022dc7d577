"""Detaching old conversation into frozen history panels.

When the live conversation is long, its oldest turns can be frozen into a panel: one synthetic
``dynamic_panel`` call/result pair whose text is the serialised chunk. A frozen panel never changes, so it
stays cached; and the cut is made only at a turn boundary (just before a user message), so a tool call is
never separated from its result.

The decision uses Context Pilot's four thresholds, all of which must hold:

- the chunk to detach has at least `DETACH_CHUNK_MIN_MESSAGES` messages and `DETACH_CHUNK_MIN_TOKENS` tokens;
- what stays live has at least `DETACH_KEEP_MIN_MESSAGES` messages and `DETACH_KEEP_MIN_TOKENS` tokens.

A detachment is persisted as a ``history_detach`` patch op naming the last detached entry; replay rebuilds
the panel from the session's own messages, so nothing is stored twice and resumed sessions send the same
bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pi_tui.agent.serialize import serialize_messages
from pi_tui.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, message_role
from pi_tui.util.json_types import JsonObject

from .envelope import ContextEnvelope
from .request import message_tokens

__all__ = [
    "DETACH_CHUNK_MIN_MESSAGES",
    "DETACH_CHUNK_MIN_TOKENS",
    "DETACH_KEEP_MIN_MESSAGES",
    "DETACH_KEEP_MIN_TOKENS",
    "DetachThresholds",
    "find_detach_point",
    "apply_history_detach",
    "is_history_pair",
    "HISTORY_CALL_PREFIX",
]

DETACH_CHUNK_MIN_MESSAGES = 25
DETACH_CHUNK_MIN_TOKENS = 5_000
DETACH_KEEP_MIN_MESSAGES = 25
DETACH_KEEP_MIN_TOKENS = 7_500
HISTORY_CALL_PREFIX = "history_"
_TOOL = "dynamic_panel"


@dataclass(frozen=True, slots=True)
class DetachThresholds:
    chunk_min_messages: int = DETACH_CHUNK_MIN_MESSAGES
    chunk_min_tokens: int = DETACH_CHUNK_MIN_TOKENS
    keep_min_messages: int = DETACH_KEEP_MIN_MESSAGES
    keep_min_tokens: int = DETACH_KEEP_MIN_TOKENS


def is_history_pair(message: object) -> bool:
    """True for either half of a frozen history panel."""
    if isinstance(message, ToolResultMessage):
        return message.tool_call_id.startswith(HISTORY_CALL_PREFIX)
    if isinstance(message, AssistantMessage):
        calls = message.tool_calls()
        return len(calls) == 1 and calls[0].id.startswith(HISTORY_CALL_PREFIX)
    return False


def _live_start(env: ContextEnvelope) -> int:
    """Index of the first live message: after the leading frozen history pairs (and anything before them)."""
    start = 0
    for index, message in enumerate(env.cached):
        if is_history_pair(message):
            start = index + 1
    return start


def find_detach_point(env: ContextEnvelope, thresholds: DetachThresholds = DetachThresholds()) -> str | None:
    """The entry id of the last message to detach, or None when the thresholds are not all met.

    Picks the earliest turn boundary at which the chunk is big enough, so panels are detached in small,
    stable steps; only messages that came from session entries (with an origin id) can be detached.
    """
    start = _live_start(env)
    live = env.cached[start:]
    origins = env.origins()[start:]
    if len(live) < thresholds.chunk_min_messages + thresholds.keep_min_messages:
        return None
    tokens = [message_tokens(m) for m in live]
    total = sum(tokens)
    chunk_tokens = 0
    for i in range(len(live)):
        chunk_tokens += tokens[i]
        count = i + 1
        if count < thresholds.chunk_min_messages or chunk_tokens < thresholds.chunk_min_tokens:
            continue
        if i + 1 >= len(live):
            return None
        nxt = live[i + 1]
        if message_role(nxt) != "user":  # cut only where a new turn starts
            continue
        keep_count = len(live) - count
        keep_tokens = total - chunk_tokens
        if keep_count < thresholds.keep_min_messages or keep_tokens < thresholds.keep_min_tokens:
            return None
        if origins[i] is None:
            continue
        return origins[i]
    return None


def apply_history_detach(env: ContextEnvelope, op: JsonObject) -> ContextEnvelope:
    """Apply a ``history_detach`` op: freeze the live messages up to ``lastEntryId`` into a panel."""
    origins = env.origins()
    last = op.get("lastEntryId")
    try:
        end = origins.index(last) + 1
    except ValueError:
        return env  # the entry is no longer in context (e.g. compacted away): nothing to freeze
    start = _live_start(env)
    if end <= start:
        return env
    number = sum(1 for m in env.cached[:start] if isinstance(m, ToolResultMessage) and is_history_pair(m)) + 1
    panel_id = f"H{number}"
    call_id = f"{HISTORY_CALL_PREFIX}{number}"
    chunk = list(env.cached[start:end])
    title = str(op.get("title") or "Conversation history (frozen)")
    call = AssistantMessage(
        content=[
            TextContent(text=f"Earlier conversation, frozen as panel {panel_id}."),
            ToolCall(id=call_id, name=_TOOL, arguments={"id": panel_id}),
        ],
        stop_reason="toolUse",
        timestamp=0,
    )
    result = ToolResultMessage(
        tool_call_id=call_id,
        tool_name=_TOOL,
        content=[
            TextContent(
                text=f"======= [{panel_id}] {title} =======\n{serialize_messages(chunk, max_tool_result_chars=None)}"
            )
        ],
        timestamp=0,
    )
    return replace(
        env,
        cached=(*env.cached[:start], call, result, *env.cached[end:]),
        cached_origins=(*origins[:start], None, None, *origins[end:]),
    )
