"""The ``/context`` report: one account of the next request, from which every view is drawn.

`ContextReport` holds what the next request carries (system parts, tools, cached messages, the uncached
tail, options), where the cache breakpoints sit, the panels with their state, the persisted context
transforms, the cache ledger, the session's totals, and the projection of what the next request reads
from the cache, writes to it and sends uncached, with its input cost. The markdown of print mode
(`pi_tui.context.render`), RPC ``get_context`` (`pi_tui.modes.rpc.context_view`) and the TUI inspector
only lay it out: they count nothing themselves.

Every token figure comes from one counter. A message counts pi's text estimate (chars/4) plus the
framing a provider bills beside the text (role markers, block delimiters); a tool counts its name,
description and parameters; the system prompt counts its text. A message the request leaves out (a shell
command's output kept out of context) counts 0.

`AgentSession.context_report()` gathers the inputs; nothing here runs hooks, refreshes live panels or
writes to the session.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from pi_tui.agent.convert import reaches_model
from pi_tui.ai.cost import projected_cost
from pi_tui.ai.stream import LlmRequest
from pi_tui.ai.tokens import count_message_tokens, estimate_tokens, js_length, message_chars
from pi_tui.ai.types import (
    AssistantMessage,
    Message,
    Model,
    ToolDefinition,
    ToolResultMessage,
    message_content,
    message_role,
)
from pi_tui.session.entries import MessageEntry, SessionEntry
from pi_tui.session.entry_reader import read_transform
from pi_tui.util.json_types import JsonObject
from pi_tui.util.pause_points import pause_point

from .envelope import ContextEnvelope
from .ledger import CacheLedger
from .panels import PanelManager, PanelState
from .request import Block, common_prefix_blocks, fingerprint, to_llm_request, tool_tokens

__all__ = [
    "BLOCK_OVERHEAD",
    "Breakpoint",
    "CacheProjection",
    "ContextReport",
    "Layout",
    "MESSAGE_OVERHEAD",
    "MessageRow",
    "MessageTokenCache",
    "PanelRow",
    "PartRow",
    "SessionTotals",
    "ToolRow",
    "TransformRecord",
    "build_context_report",
    "envelope_tokens",
    "pi_context_estimate",
    "message_tokens",
    "projection_for",
    "request_blocks",
    "transform_records",
]

Layout = Literal["prefix", "tail", "hidden"]

# Per-message and per-content-block framing a provider bills beside the text (role markers, block
# delimiters, tool-use ids). Small, but a short message is mostly framing.
MESSAGE_OVERHEAD = 4
BLOCK_OVERHEAD = 3


def message_tokens(message: Message, estimate: int | None = None) -> int:
    """Tokens a provider bills for one history message: pi's text estimate plus the framing; 0 for a
    message the request leaves out (a shell command's output kept out of context). ``estimate``: the
    message's `count_message_tokens`, when the caller has it already (it is not counted again)."""
    if type(message) is AssistantMessage or type(message) is ToolResultMessage:  # most messages: no tests
        blocks = len(message.content)  # always a list for these two
        text = -(-message_chars(message) // 4) if estimate is None else estimate
        return text + MESSAGE_OVERHEAD + BLOCK_OVERHEAD * max(1, blocks)
    if not reaches_model(message):
        return 0
    content = message_content(message)
    blocks = len(content) if isinstance(content, list) else 1
    text = count_message_tokens(message) if estimate is None else estimate
    return text + MESSAGE_OVERHEAD + BLOCK_OVERHEAD * max(1, blocks)


class MessageTokenCache:
    """`message_tokens` and pi's text estimate remembered per message object, so opening ``/context``
    again, or compacting after it, counts only the messages that are new since (a 20k-entry session
    has tens of thousands).

    History messages are not changed once they are in the session, so a message's identity stands for
    its content. The cache holds the messages of the last report only (`keep`), never the whole past.
    """

    __slots__ = ("_known", "_rows", "counted")

    def __init__(self) -> None:
        # id -> (message, pi's estimate or -1 when not known, message_tokens)
        self._known: dict[int, tuple[Message, int, int]] = {}
        self._rows: dict[str, tuple[MessageRow, ...]] = {}  # the last report's rows, by region
        self.counted = 0  # messages tokenised so far (what the cache could not answer)

    def _count(self, message: Message) -> tuple[Message, int, int]:
        estimate = count_message_tokens(message)
        known = (message, estimate, message_tokens(message, estimate))
        self.counted += 1
        self._known[id(message)] = known
        return known

    def tokens(self, message: Message) -> int:
        """`message_tokens` of ``message``, counted on the first call for this object."""
        known = self._known.get(id(message))
        if known is not None and known[0] is message:
            return known[2]
        return self._count(message)[2]

    def estimate(self, message: Message) -> int:
        """pi's text estimate of ``message`` (`count_message_tokens`, what compaction adds up), counted
        on the first call for this object (or for `tokens`)."""
        known = self._known.get(id(message))
        if known is not None and known[0] is message and known[1] >= 0:
            return known[1]
        return self._count(message)[1]

    def rows(self, region: str, messages: Sequence[Message], offset: int) -> tuple[MessageRow, ...]:
        """The rows of ``messages`` numbered from ``offset``: the last report's rows of ``region`` as far
        as they hold the same messages at the same numbers, then new rows for the rest."""
        previous = self._rows.get(region, ())
        same = 0
        if previous and previous[0].index == offset:
            for row, message in zip(previous, messages, strict=False):
                if row.message is not message:
                    break
                same += 1
        rows = previous[:same] + tuple(self._new_rows(messages, same, len(messages), offset))
        self._rows[region] = rows
        return rows

    def _new_rows(self, messages: Sequence[Message], start: int, stop: int, offset: int) -> list[MessageRow]:
        """Rows of ``messages[start:stop]`` numbered from ``offset + start``, counting the messages not
        known yet. One loop with the two commonest kinds of message answered inline: it runs over
        every message of a long session (~20k) before its first ``/context``."""
        known = self._known
        rows: list[MessageRow] = []
        append = rows.append
        counted = 0
        for index in range(start, stop):
            message = messages[index]
            found = known.get(id(message))
            kind = type(message)
            if found is not None and found[0] is message:
                tokens = found[2]
            elif kind is AssistantMessage or kind is ToolResultMessage:  # as `message_tokens` counts them
                estimate = -(-message_chars(message) // 4)
                tokens = estimate + MESSAGE_OVERHEAD + BLOCK_OVERHEAD * max(1, len(message.content))
                known[id(message)] = (message, estimate, tokens)
                counted += 1
            else:
                estimate = -(-message_chars(message) // 4)
                tokens = message_tokens(message, estimate)
                known[id(message)] = (message, estimate, tokens)
                counted += 1
            if kind is AssistantMessage:
                append(MessageRow(offset + index, "assistant", tokens, True, message))
            elif kind is ToolResultMessage:
                append(MessageRow(offset + index, "toolResult", tokens, True, message))
            else:
                append(
                    MessageRow(
                        offset + index, message_role(message) or "?", tokens, reaches_model(message), message
                    )
                )
        self.counted += counted
        return rows

    def prime_in_steps(self, messages: Sequence[Message], chunk: int) -> Iterator[int]:
        """Count ``messages`` (the next request's, oldest first) and keep their rows as the cached
        region's, ahead of the first report: that report then reuses the rows as far as its cached
        region holds the same messages, and counts only the rest. In pieces of ``chunk`` messages
        (all at once when ``chunk`` is 0): each ``next`` counts one piece and yields how many are
        counted so far. The rows are kept once all are counted; a report made before that still
        reuses every count made so far."""
        previous = self._rows.get("cached", ())
        same = 0
        if previous and previous[0].index == 0:
            for row, message in zip(previous, messages, strict=False):
                if row.message is not message:
                    break
                same += 1
        rows = list(previous[:same])
        step = chunk or max(1, len(messages))
        for start in range(same, len(messages), step):
            rows.extend(self._new_rows(messages, start, min(start + step, len(messages)), 0))
            yield len(rows)
        self._rows["cached"] = tuple(rows)

    def keep(self, rows: Iterable[MessageRow]) -> None:
        """Forget every message but those of ``rows`` (the report just built), once the cache holds
        many more (rebuilding it at every report would cost as much as the counting it saves)."""
        rows = tuple(rows)
        if len(self._known) > 2 * len(rows) + 64:
            known = self._known
            self._known = {id(r.message): known.get(id(r.message)) or (r.message, -1, r.tokens) for r in rows}


def envelope_tokens(env: ContextEnvelope) -> int:
    """The size estimate of a request built from ``env``: system prompt, tools and messages."""
    return (
        estimate_tokens(env.system_compiled)
        + sum(tool_tokens(t) for t in env.tools)
        + sum(message_tokens(m) for m in (*env.cached, *env.uncached))
    )


def pi_context_estimate(env: ContextEnvelope, count: Callable[[Message], int] = count_message_tokens) -> int:
    """pi's own estimate of a context, as its ``estimatedTokensAfter`` reports it after a compaction.

    pi sums chars/4 (rounded up) over the messages of the compacted context, one of which is the system
    message it persists: the prompt's text plus the tool declarations as compact JSON
    (``[{"name", "description", "parameters", "constrainedSampling"?}]``). No framing is counted, unlike `envelope_tokens`, so an
    RPC client comparing pi and pi-tui sees the same number for the same context. The blank lines pi-tui
    puts between the sections of a prompt that pi persisted are not part of pi's sections, so they are
    left out; pi-tui's own prompt is counted as sent. ``count`` is a message's estimate (a counter that
    remembers each one, say).
    """
    parts = env.system_parts
    chars = sum(js_length(part.text) for part in parts)
    chars -= 2 * sum(1 for part in parts[1:] if part.text.startswith("\n\n"))
    if env.tools:
        declarations: list[JsonObject] = []
        for tool in env.tools:
            declaration = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
            if tool.constrained_sampling is not None:
                declaration["constrainedSampling"] = tool.constrained_sampling
            declarations.append(declaration)
        chars += js_length(json.dumps(declarations, separators=(",", ":"), ensure_ascii=False))
    system = -(-chars // 4) if parts or env.tools else 0
    return system + sum(map(count, env.messages))


def request_blocks(request: LlmRequest, count: Callable[[Message], int] = message_tokens) -> list[Block]:
    """`fingerprint` with `message_tokens` as each message block's size (the digests decide what is a
    hit, these sizes the price). The runtime's own block sizes are chars/4 of each message's JSON, which
    counts keys and ids a provider never bills. ``count`` gives a message's tokens (a cache's, say)."""
    blocks = fingerprint(request)
    offset = len(blocks) - len(request.messages)
    sized = blocks[:offset]
    for i in range(offset, len(blocks)):
        if not i & 1023:
            pause_point()  # a thread beside the UI lets the user's keys go first
        sized.append(replace(blocks[i], tokens=count(request.messages[i - offset])))
    return sized


@dataclass(frozen=True, slots=True)
class CacheProjection:
    """What one request should read from the cache, write to it and send uncached, and its input cost."""

    read: int
    write: int
    uncached: int
    cost: float
    first_difference: str | None
    has_baseline: bool

    @property
    def total(self) -> int:
        return self.read + self.write + self.uncached


def projection_for(blocks: Sequence[Block], baseline: Sequence[Block], model: Model) -> CacheProjection:
    """Read/write/uncached tokens of a request against the previous one, priced with ``model``.

    Everything up to the first block that differs is read; the rest of the cached region is written
    (the provider caches it anew); the request-only tail is plain input.
    """
    hit = common_prefix_blocks(baseline, blocks) if baseline else 0
    read = sum(b.tokens for b in blocks[:hit])
    write = sum(b.tokens for b in blocks[hit:] if b.cached)
    uncached = sum(b.tokens for b in blocks[hit:] if not b.cached)
    cost = projected_cost(model, read, write, uncached)
    where = blocks[hit].label if hit < len(blocks) else None
    return CacheProjection(read, write, uncached, cost, where, bool(baseline))


@dataclass(frozen=True, slots=True)
class PartRow:
    """One named part of the system prompt."""

    name: str
    tokens: int
    text: str


@dataclass(frozen=True, slots=True)
class ToolRow:
    """One tool definition the request offers."""

    name: str
    tokens: int
    definition: ToolDefinition


@dataclass(slots=True)
class MessageRow:
    """One message of the request, numbered across the cached region and the tail. Read-only by
    convention (rows are shared between reports), not frozen: one is made per message of the request
    (~20k in a long session), and a frozen dataclass's constructor costs four times as much."""

    index: int
    role: str
    tokens: int
    sent: bool  # False: kept out of context (listed, counted 0, never sent)
    message: Message


@dataclass(frozen=True, slots=True)
class Breakpoint:
    """Where a cache breakpoint sits: after the system prompt, or after a message."""

    after: str  # "system" or "messages[i]"
    message_index: int | None = None


@dataclass(frozen=True, slots=True)
class PanelRow:
    """A registered panel, where it sits for the next request and how its last request went."""

    state: PanelState
    layout: str  # "prefix" | "tail" | "hidden"

    @property
    def last_request(self) -> str | None:
        """``"hit"``/``"miss"`` for a prefix panel, None for one never sent or in the tail."""
        return None if self.state.hit is None else ("hit" if self.state.hit else "miss")


@dataclass(frozen=True, slots=True)
class TransformRecord:
    """One persisted ``context_transform`` entry on the active path."""

    entry_id: str
    timestamp: str
    transformer: str
    ops: tuple[JsonObject, ...]
    title: str | None


@dataclass(frozen=True, slots=True)
class SessionTotals:
    """Usage over the whole session file (all branches)."""

    answers: int
    input: int
    output: int
    cache_read: int
    cache_write: int
    cost: float

    @property
    def cache_read_ratio(self) -> float | None:
        denom = self.input + self.cache_read + self.cache_write
        return self.cache_read / denom if denom else None


def transform_records(path: Sequence[SessionEntry]) -> list[TransformRecord]:
    """The ``context_transform`` entries of an active path, oldest first; a damaged one (kept raw, not
    applied by the replay) is listed with what it still says."""
    out: list[TransformRecord] = []
    for entry in path:
        if type(entry) is MessageEntry:  # nearly every entry of a long path: no test beyond this one
            continue
        transform = read_transform(entry)
        if transform is None:
            continue
        out.append(
            TransformRecord(
                entry_id=entry.id or "",
                timestamp=entry.timestamp,
                transformer=transform.transformer,
                ops=transform.ops,
                title=transform.title,
            )
        )
    return out


@dataclass(slots=True)
class ContextReport:
    """Everything ``/context`` shows about the next request. Token counts are estimates (see the module).

    The cache projection hashes every block of two requests, which takes a while on a long session: it is
    computed on first use (`projection`), so a screen can draw first and fill it in from a thread.
    """

    model: Model
    envelope: ContextEnvelope  # the next request's envelope, panels placed
    durable: ContextEnvelope  # the same before panels were placed
    parts: tuple[PartRow, ...]
    tools: tuple[ToolRow, ...]
    cached: tuple[MessageRow, ...]
    uncached: tuple[MessageRow, ...]
    system_tokens: int
    panels: tuple[PanelRow, ...]
    transforms: tuple[TransformRecord, ...]
    ledger: CacheLedger
    totals: SessionTotals | None
    preview: PanelManager
    available_tools: tuple[str, ...]
    baseline_source: Callable[[], list[Block]] = field(repr=False, compare=False)
    sections: tuple[tuple[str, tuple[str, ...]], ...] = ()  # extensions' sections: (title, lines)
    token_cache: MessageTokenCache = field(default_factory=MessageTokenCache, repr=False, compare=False)
    _baseline: list[Block] | None = field(default=None, repr=False, compare=False)
    _projection: CacheProjection | None = field(default=None, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    # --- token figures -------------------------------------------------------------------------------

    @property
    def window(self) -> int:
        return self.model.context_window

    @property
    def tool_tokens(self) -> int:
        return sum(t.tokens for t in self.tools)

    @property
    def cached_tokens(self) -> int:
        return sum(m.tokens for m in self.cached)

    @property
    def uncached_tokens(self) -> int:
        return sum(m.tokens for m in self.uncached)

    @property
    def total_tokens(self) -> int:
        return self.system_tokens + self.tool_tokens + self.cached_tokens + self.uncached_tokens

    @property
    def percent(self) -> float | None:
        """Share of the context window the prompt fills, in percent (None without a window)."""
        return 100 * self.total_tokens / self.window if self.window else None

    @property
    def options(self) -> JsonObject:
        """The request options that are set."""
        return {k: v for k, v in self.envelope.options.items() if v is not None}

    @property
    def breakpoints(self) -> tuple[Breakpoint, ...]:
        """After the system prompt (it covers the tools), and after the cached region when it has messages."""
        marks = [Breakpoint("system")]
        if self.cached:
            last = len(self.cached) - 1
            marks.append(Breakpoint(f"messages[{last}]", last))
        return tuple(marks)

    # --- the cache projection ------------------------------------------------------------------------

    def request(self, envelope: ContextEnvelope | None = None) -> LlmRequest:
        """The provider-neutral request built from ``envelope`` (the next request's by default)."""
        return to_llm_request(envelope or self.envelope, self.available_tools)

    def blocks(self) -> list[Block]:
        """The next request's cache blocks, sized by the report's counter."""
        return request_blocks(self.request(), self.token_cache.tokens)

    @property
    def projected(self) -> CacheProjection | None:
        """The projection if it was computed already (None: not yet)."""
        return self._projection

    def baseline(self) -> list[Block]:
        """The blocks of the request the next one is compared with (empty: none)."""
        with self._lock:
            if self._baseline is None:
                self._baseline = self.baseline_source()
            return self._baseline

    def projection(self) -> CacheProjection:
        """What the next request reads from the cache, writes to it and sends uncached (computed once;
        safe to call from a thread)."""
        if self._projection is None:
            projection = projection_for(self.blocks(), self.baseline(), self.model)
            with self._lock:
                self._projection = self._projection or projection
        assert self._projection is not None
        return self._projection

    def project_layout(self, layout: dict[str, Layout]) -> CacheProjection:
        """The next request's projection if panels were laid out as ``layout`` (panel name → layout)."""
        env = self.preview.with_layout(layout).place(self.durable)
        blocks = request_blocks(self.request(env), self.token_cache.tokens)
        return projection_for(blocks, self.baseline(), self.model)


def build_context_report(
    *,
    model: Model,
    durable: ContextEnvelope,
    preview: PanelManager,
    available_tools: Sequence[str],
    ledger: CacheLedger,
    path: Sequence[SessionEntry],
    totals: SessionTotals | None,
    baseline_source: Callable[[], list[Block]],
    sections: Sequence[tuple[str, Sequence[str]]] = (),
    token_cache: MessageTokenCache | None = None,
) -> ContextReport:
    """Build the report of the next request.

    Args:
        model: the model the next request goes to (window and prices).
        durable: the replayed envelope (no hooks run), before panels are placed.
        preview: a refreshed copy of the panels (the live manager is left alone).
        available_tools: names of the tools whose implementation is loaded.
        ledger: the process's cache ledger.
        path: the session's active path (for the persisted context transforms).
        totals: usage over the whole session file, if known.
        baseline_source: returns the blocks of the previous request (called when the projection is
            first needed; empty when there is no previous request).
        sections: what extensions add (``pi.register_context_section``), rendered: (title, lines).
        token_cache: message token counts kept from the previous report (a fresh one if None); it keeps
            this report's messages only.
    """
    env = preview.place(durable)
    cache = token_cache or MessageTokenCache()
    cached = cache.rows("cached", env.cached, 0)
    uncached = cache.rows("uncached", env.uncached, len(cached))
    cache.keep((*cached, *uncached))
    return ContextReport(
        model=model,
        envelope=env,
        durable=durable,
        parts=tuple(PartRow(p.name, estimate_tokens(p.text), p.text) for p in env.system_parts),
        tools=tuple(ToolRow(t.name, tool_tokens(t), t) for t in env.tools),
        cached=cached,
        uncached=uncached,
        system_tokens=estimate_tokens(env.system_compiled),
        panels=tuple(
            PanelRow(s, "hidden" if s.panel.name in preview.hidden else s.panel.placement)
            for s in preview.panels.values()
        ),
        transforms=tuple(transform_records(path)),
        ledger=ledger,
        totals=totals,
        preview=preview,
        available_tools=tuple(available_tools),
        baseline_source=baseline_source,
        sections=tuple((title, tuple(lines)) for title, lines in sections),
        token_cache=cache,
    )
