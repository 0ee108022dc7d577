"""The cache ledger: every prompt-cache invalidation and what each request really cost.

For each provider request we keep what the provider reported (input, cache read, cache write, output and
the cost from the model's prices) beside an estimate of what we *expected* to hit. When a request's
prefix diverges from the previous request's before the previous cached region ended, that is an
invalidation: it is recorded with who caused it (an extension's patch, a panel, the system prompt …),
the reason given, where in the prompt it happened and an estimate of the tokens re-billed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pi_tui.ai.types import Usage

from .request import Block, common_prefix_blocks, tokens_before

__all__ = ["Invalidation", "RequestRecord", "CacheLedger", "Attribution"]


@dataclass(frozen=True, slots=True)
class Attribution:
    """A declared change to the cached region, made while building one request."""

    source: str
    reason: str
    where: str


@dataclass(slots=True)
class Invalidation:
    request_index: int
    source: str
    reason: str
    where: str
    tokens_rebilled: int


@dataclass(slots=True)
class RequestRecord:
    """One request: its estimated prompt tokens, the tokens expected from the cache, the reported usage.

    The estimate may be given as a function, evaluated on first read: the first request of a process
    has nothing to compare with, so its fingerprint (a pass over the whole history) waits until
    something asks for it.
    """

    index: int
    model: str
    estimate: int | Callable[[], int]
    expected_cache_tokens: int
    usage: Usage | None = None

    @property
    def prompt_tokens_estimate(self) -> int:
        if not isinstance(self.estimate, int):
            self.estimate = self.estimate()
        return self.estimate

    @property
    def hit_ratio(self) -> float | None:
        if self.usage is None:
            return None
        total = self.usage.input + self.usage.cache_read + self.usage.cache_write
        return self.usage.cache_read / total if total else None


@dataclass
class CacheLedger:
    requests: list[RequestRecord] = field(default_factory=list)
    invalidations: list[Invalidation] = field(default_factory=list)
    _last_blocks: list[Block] = field(default_factory=list)
    _last_cached: int = 0  # how many leading blocks of `_last_blocks` are in the cached region
    # Changes declared outside the hook pipeline (e.g. a panel moved in the /context view), attributed
    # to the next request.
    pending: list[Attribution] = field(default_factory=list)
    # The first request's fingerprint, computed when first needed (see `note_request`).
    _deferred: Callable[[], list[Block]] | None = None

    def declare(self, attribution: Attribution) -> None:
        """Attribute the next request's invalidation to a change made outside the hooks (with its reason)."""
        self.pending.append(attribution)

    def note_request(
        self, model: str, blocks: list[Block] | Callable[[], list[Block]], attributions: list[Attribution]
    ) -> RequestRecord:
        """Record a request about to be sent; detect and attribute invalidations against the last one.

        ``blocks`` may be a function that fingerprints the request. When there is nothing to compare
        with (the first request of a process, no declared changes) it is not called now: the request
        expects no cache tokens, and its blocks are computed when `last_blocks`, the record's estimate
        or the next request needs them (once: a retry does not fingerprint again).
        """
        index = len(self.requests)
        self._settle()
        if callable(blocks):
            if not self._last_blocks and not self.pending and not attributions:
                return self._note_deferred(index, model, blocks)
            blocks = blocks()
        if self.pending:
            attributions, self.pending = [*attributions, *self.pending], []
        # O(new blocks) per request, not O(history): the prefix hit is a bisection over running digests,
        # token sums are differences of running totals, and the cached blocks are a prefix whose end is
        # found from the (short) uncached tail.
        hit = common_prefix_blocks(self._last_blocks, blocks)
        prev_cached = self._last_cached
        if self._last_blocks and hit < prev_cached:
            lost = sum(b.tokens for b in self._last_blocks[hit:prev_cached])
            where = blocks[hit].label if hit < len(blocks) else "end of prompt"
            if attributions:
                share = max(1, lost // len(attributions))
                for att in attributions:
                    self.invalidations.append(
                        Invalidation(index, att.source, att.reason, att.where or where, share)
                    )
            else:
                self.invalidations.append(
                    Invalidation(
                        index, _guess_source(blocks, hit), "prefix changed (no reason declared)", where, lost
                    )
                )
        expected = tokens_before(blocks, hit)
        record = RequestRecord(index, model, tokens_before(blocks, len(blocks)), expected)
        self.requests.append(record)
        self._last_blocks = blocks
        self._last_cached = _cached_count(blocks)
        return record

    def _note_deferred(self, index: int, model: str, compute: Callable[[], list[Block]]) -> RequestRecord:
        memo: list[list[Block]] = []

        def once() -> list[Block]:
            if not memo:
                memo.append(compute())
            return memo[0]

        record = RequestRecord(index, model, lambda: tokens_before(once(), len(once())), 0)
        self.requests.append(record)
        self._deferred = once
        return record

    def reset(self) -> None:
        """Forget every request: the session was switched (resume, fork, new), so the next request is
        compared with nothing, as a fresh process's first one is. The session left behind sends none of
        its cached context again, so none of it is billed again."""
        self.requests.clear()
        self.invalidations.clear()
        self.pending.clear()
        self._last_blocks = []
        self._last_cached = 0
        self._deferred = None

    def _settle(self) -> None:
        """Compute a deferred fingerprint (the first request's) now."""
        if self._deferred is not None:
            compute, self._deferred = self._deferred, None
            self._last_blocks = compute()
            self._last_cached = _cached_count(self._last_blocks)

    @property
    def fingerprinted(self) -> bool:
        """Whether the last request's blocks are known without computing anything."""
        return self._deferred is None

    def note_usage(self, record: RequestRecord, usage: Usage) -> None:
        record.usage = usage

    @property
    def last_blocks(self) -> list[Block]:
        self._settle()
        return self._last_blocks

    def totals(self) -> Usage:
        total = Usage()
        for rec in self.requests:
            if rec.usage is None:
                continue
            u = rec.usage
            total.input += u.input
            total.output += u.output
            total.cache_read += u.cache_read
            total.cache_write += u.cache_write
            total.total_tokens += u.total_tokens
            total.cost.input += u.cost.input
            total.cost.output += u.cost.output
            total.cost.cache_read += u.cost.cache_read
            total.cost.cache_write += u.cost.cache_write
            total.cost.total += u.cost.total
        return total

    def hit_ratio(self) -> float | None:
        t = self.totals()
        denom = t.input + t.cache_read + t.cache_write
        return t.cache_read / denom if denom else None


def _cached_count(blocks: list[Block]) -> int:
    """How many blocks the cached region holds: tools, system and cached messages come first, so it
    ends after the last cached block; the walk back covers only the request-only tail."""
    end = len(blocks)
    while end and not blocks[end - 1].cached:
        end -= 1
    return end


def _guess_source(blocks: list[Block], index: int) -> str:
    if index >= len(blocks):
        return "unknown"
    kind = blocks[index].kind
    return {"tool": "tool definitions", "system": "system prompt", "message": "messages"}.get(kind, kind)
