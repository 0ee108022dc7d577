"""Mapping an envelope to a provider request, and fingerprinting requests for cache accounting.

The provider always receives cached messages first and uncached messages last; ``cache_boundary`` tells
the provider where the cached region ends so it can put its last breakpoint there.
"""

from __future__ import annotations

import functools
import hashlib
import json
import operator
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from pi_tui.ai.stream import LlmRequest
from pi_tui.ai.tokens import estimate_tokens, js_length
from pi_tui.ai.types import AssistantMessage, LlmMessage, Message, ToolDefinition, UserMessage, dump_message
from pi_tui.util.json_types import JsonValue
from pi_tui.util.pause_points import pause_point

from .envelope import ContextEnvelope

__all__ = [
    "to_llm_request",
    "Block",
    "fingerprint",
    "common_prefix_blocks",
    "message_tokens",
    "tokens_before",
    "tool_tokens",
]


def message_tokens(message: Message) -> int:
    """Estimated tokens of one message as it is serialised (chars/4 of its JSON)."""
    return estimate_tokens(json.dumps(dump_message(message), ensure_ascii=False))


def to_llm_request(env: ContextEnvelope, available_tools: Iterable[str] | None = None) -> LlmRequest:
    """Build the provider-neutral request from an envelope.

    Tool definitions whose implementation is not loaded (``available_tools``) are omitted: a model must
    never be offered a tool nobody can run.
    """
    from pi_tui.agent.convert import convert_to_llm, transform_messages

    cached = _history_messages(env.cached)
    uncached = transform_messages(convert_to_llm(list(env.uncached)))
    tools: list[ToolDefinition] = list(env.tools)
    if available_tools is not None:
        names = set(available_tools)
        tools = [t for t in tools if t.name in names]
    return LlmRequest(
        system_prompt=env.system_compiled,
        messages=[*cached, *uncached],
        tools=tools,
        cache_boundary=len(cached),
        paired=True,
    )


class _HistoryMemo:
    """``transform_messages(convert_to_llm(history[:split]))`` of the last request's history."""

    sources: list[Message] = []
    split = 0
    head: list[LlmMessage] = []


def _history_messages(history: Sequence[Message]) -> list[LlmMessage]:
    """``transform_messages(convert_to_llm(history))``, with the part the last request shared reused.

    Both functions restart cleanly before a user or assistant message (conversion is per message, and
    the tool-pairing repair closes every open tool flow there), so the result for ``history`` is the
    memo's result for the history up to such a message, plus the result for the rest.
    """
    from pi_tui.agent.convert import convert_to_llm, transform_messages

    memo = _HistoryMemo
    start, head = 0, []
    if 0 < memo.split <= len(history) and all(map(operator.is_, memo.sources, history)):
        start, head = memo.split, memo.head
    split = start
    for index in range(len(history) - 1, start, -1):
        if isinstance(history[index], UserMessage | AssistantMessage):
            split = index
            break
    if split > start:
        head = head + convert_in_pieces(history[start:split])
    memo.sources, memo.split, memo.head = list(history[:split]), split, head
    return head + transform_messages(convert_to_llm(list(history[split:])))


CONVERT_PIECE = 512
"""Messages converted between two pause points (`convert_in_pieces`): ~2-3 ms."""


def convert_in_pieces(history: Sequence[Message], piece: int = CONVERT_PIECE) -> list[LlmMessage]:
    """``transform_messages(convert_to_llm(history))``, in pieces of about ``piece`` messages with a
    pause point after each (a thread beside the UI lets the user's keys go first: a 20k-message history
    converts in ~0.1 s). Each piece ends before a user or assistant message, where both functions restart
    cleanly (as `_history_messages` relies on), so the result is the same as in one go."""
    from pi_tui.agent.convert import convert_to_llm, transform_messages

    out: list[LlmMessage] = []
    start, count = 0, len(history)
    while start < count:
        end = min(start + piece, count)
        while end < count and not isinstance(history[end], UserMessage | AssistantMessage):
            end += 1
        out += transform_messages(convert_to_llm(list(history[start:end])))
        start = end
        if start < count:
            pause_point()
    return out


@dataclass(frozen=True, slots=True)
class Block:
    """One cacheable unit of a request, in the order providers hash them (tools, system, messages).

    ``digest`` and ``upto`` are running values: they cover this block and every block before it, so a
    block taken over from the previous request (same prefix) keeps both, and the ledger reads a
    request's totals from its last block instead of summing the history again.
    """

    kind: str  # "tool" | "system" | "message"
    label: str
    digest: str
    tokens: int
    cached: bool
    upto: int = 0  # tokens of this block and every block before it (set by `fingerprint`)


def _digest(data: JsonValue, previous: str) -> str:
    return _chain(_canonical_json(data), previous)


def _canonical_json(data: JsonValue) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _chain(raw: str, previous: str) -> str:
    return hashlib.blake2b((previous + raw).encode(), digest_size=12).hexdigest()


class _Canonical:
    """One block's canonical JSON and token estimate, and the last digest it was chained to."""

    __slots__ = ("raw", "tokens", "previous", "digest")

    def __init__(self, raw: str, tokens: int) -> None:
        self.raw = raw
        self.tokens = tokens
        self.previous: str | None = None
        self.digest = ""

    def chained(self, previous: str) -> str:
        # A request repeats the history of the last one: the same block after the same prefix has the
        # same digest, so only new blocks (or blocks after a change) are hashed.
        if self.previous != previous:
            self.digest = _chain(self.raw, previous)
            self.previous = previous
        return self.digest


# id(object) -> (weak reference, canonical form): messages and tool definitions of the history are the
# same objects request after request (envelopes are values, never mutated in place).
_CANONICAL: dict[int, tuple[weakref.ref[object], _Canonical]] = {}


def _canonical(obj: object, make: Callable[[], _Canonical]) -> _Canonical:
    slot = id(obj)
    hit = _CANONICAL.get(slot)
    if hit is not None and hit[0]() is obj:
        return hit[1]
    canonical = make()

    def forget(_ref: weakref.ref[object]) -> None:
        _CANONICAL.pop(slot, None)

    try:
        ref = weakref.ref(obj, forget)
    except TypeError:  # not weak-referenceable: computed every time
        return canonical
    _CANONICAL[slot] = (ref, canonical)
    return canonical


def tool_tokens(tool: ToolDefinition) -> int:
    """Estimated tokens of a tool definition (chars/4 of its JSON), computed once per definition."""
    return _canonical(tool, lambda: _tool_canonical(tool)).tokens


def _tool_canonical(tool: ToolDefinition) -> _Canonical:
    data = tool.to_json_dict()
    # The fingerprint covers the whole definition (a strictness request changes what some providers
    # send); the estimate counts only what the model reads: name, description and parameters.
    seen = {key: data[key] for key in ("name", "description", "parameters") if key in data}
    return _Canonical(_canonical_json(data), estimate_tokens(json.dumps(seen)))


def _separator_count(data: JsonValue) -> int:
    """How many characters ``json.dumps``'s default separators (``", "`` and ``": "``) add to the compact
    form: one per key and one between neighbouring items. Walking the data is cheaper than a second dump."""
    extra = 0
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node:
                extra += 2 * len(node) - 1
                stack.extend(node.values())
        elif isinstance(node, list | tuple):
            if node:
                extra += len(node) - 1
                stack.extend(node)
    return extra


def _message_canonical(message: Message) -> _Canonical:
    data = dump_message(message)
    data.pop("timestamp", None)
    data.pop("usage", None)
    raw = _canonical_json(data)
    # The estimate is chars/4 of the message's default-spaced JSON (what pi counts); same length as the
    # compact canonical form plus one character per separator (ceil(chars / 4), as `estimate_tokens`).
    return _Canonical(raw, (js_length(raw) + _separator_count(data) + 3) // 4)


_SYSTEM: dict[tuple[str, str], str] = {}  # (previous digest, prompt) -> digest, the latest few


class _Last:
    """The last fingerprinted request: its tools, prompt, messages, cache boundary and blocks."""

    tools: list[ToolDefinition] = []
    system_prompt: str | None = None
    messages: list[LlmMessage] = []
    boundary = 0
    blocks: list[Block] = []


def _reusable(request: LlmRequest, boundary: int) -> int:
    """How many leading blocks of the last request's fingerprint hold for ``request`` as they are: the
    same tool and message objects after the same prompt, with the same cached flags."""
    last = _Last
    tools = request.tools
    if (
        not last.blocks
        or last.system_prompt != request.system_prompt
        or len(last.tools) != len(tools)
        or not all(map(operator.is_, last.tools, tools))
    ):
        return 0
    limit = min(len(last.messages), len(request.messages), last.boundary, boundary)
    return len(tools) + 1 + _same_prefix(last.messages, request.messages, limit)


def _same_prefix(old: Sequence[object], new: Sequence[object], limit: int) -> int:
    """How many of the first ``limit`` items of ``old`` and ``new`` are the very same objects.

    Usually all of them (a request extends the last one), which one identity pass in C confirms; only
    when that fails does the Python loop look for where they part.
    """
    if all(map(operator.is_, old[:limit], new[:limit])):
        return limit
    same = 0
    while old[same] is new[same]:
        same += 1
    return same


def fingerprint(request: LlmRequest) -> list[Block]:
    """Running-prefix digests and token estimates per block: block *i*'s digest covers blocks 0..i.

    Each block's canonical JSON is computed once per object and its digest only when what precedes it
    changed; the blocks a request shares with the previous one (the same objects, in the same place)
    are taken over as they are, so fingerprinting a request that extends the last costs O(new blocks).
    """
    boundary = len(request.messages) if request.cache_boundary is None else request.cache_boundary
    reuse = _reusable(request, boundary)
    blocks = _Last.blocks[:reuse]
    if reuse:
        prev, upto = blocks[-1].digest, blocks[-1].upto
    else:
        prev, upto = "", 0
        for tool in request.tools:
            canonical = _canonical(tool, functools.partial(_tool_canonical, tool))
            prev = canonical.chained(prev)
            upto += canonical.tokens
            blocks.append(Block("tool", tool.name, prev, canonical.tokens, True, upto))
        key = (prev, request.system_prompt)
        system = _SYSTEM.get(key)
        if system is None:
            if len(_SYSTEM) > 16:
                _SYSTEM.clear()
            system = _SYSTEM[key] = _digest(request.system_prompt, prev)
        prev = system
        tokens = estimate_tokens(request.system_prompt)
        upto += tokens
        blocks.append(Block("system", "system", prev, tokens, True, upto))
    first = len(blocks) - len(request.tools) - 1
    for index in range(first, len(request.messages)):
        if not index & 127:
            pause_point()  # a thread beside the UI lets the user's keys go first (hashing 20k takes ~0.5 s)
        message = request.messages[index]
        canonical = _canonical(message, functools.partial(_message_canonical, message))
        prev = canonical.chained(prev)
        upto += canonical.tokens
        label = f"messages[{index}] {message.role}"
        blocks.append(Block("message", label, prev, canonical.tokens, index < boundary, upto))
    _Last.tools, _Last.system_prompt = list(request.tools), request.system_prompt
    _Last.messages, _Last.boundary, _Last.blocks = list(request.messages), boundary, blocks
    return list(blocks)


def common_prefix_blocks(previous: Sequence[Block], current: Sequence[Block]) -> int:
    """How many leading blocks of ``current`` match ``previous`` exactly (a prefix-cache hit).

    Digests are running (block *i*'s covers blocks 0..i), so equal digests at *i* mean equal prefixes
    up to *i*, and the matching prefix is found by bisection: O(log n) per request, not O(history).
    """
    low, high = 0, min(len(previous), len(current))  # the answer lies in [low, high]
    while low < high:
        mid = (low + high + 1) // 2
        if previous[mid - 1].digest == current[mid - 1].digest:
            low = mid
        else:
            high = mid - 1
    return low


def tokens_before(blocks: Sequence[Block], count: int) -> int:
    """Tokens of the first ``count`` blocks (their running total: O(1))."""
    return blocks[count - 1].upto if count > 0 else 0
