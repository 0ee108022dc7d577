"""Prompt cache warming (pi 0.87.1's ``cacheWarming``): keep the provider's cache of the last request alive.

A provider keeps a prompt prefix cached for a short while (Anthropic: five minutes). When the agent waits
longer than that for a tool, or the user pauses between prompts, the next request pays for the whole prefix
again. The warmer sends the last session request once more, unchanged except for a one-token answer cap,
shortly before the cache would expire, when that is expected to save money:

- only for a model that declares how long its cache lives (``promptCache: {short, long}`` seconds, per
  retention tier, in the catalog, ``models.json`` or ``modelOverrides``) and a request that can be replayed
  as it was (Anthropic's budget thinking derives its budget from the answer cap, so it cannot);
- at 90% of the lifetime (at least ten seconds before it ends), again after each refresh;
- ``streaming`` (the default) while a run lasts, ``idle`` also between runs, with a 15% chance assumed
  that the user comes back in time; for at most an hour after the request (half an hour once idle);
- only when the expected saving (the chance of a next request × what a miss costs more than a hit, less
  the refresh itself) is at least $0.05; an extension's ``cache_warming_decision`` handler may overrule;
- never once the conversation moved on (another model, a context no longer extending the request's).

A refresh's usage is recorded as a ``usage`` entry (``kind: "cache_warm"``): it counts in the session's
totals and costs, never in the model's context.

Time comes from a `WarmingClock` so that tests move it by hand; nothing here sleeps.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, Protocol

from pi_tui.ai.cost import calculate_cost
from pi_tui.ai.stream import AbortSignal, Done, Error, LlmRequest, StreamEvent, StreamOptions
from pi_tui.ai.types import AssistantMessage, Model, Usage

__all__ = [
    "CACHE_WARMING_MODES",
    "MINIMUM_EXPECTED_SAVINGS",
    "CacheWarmer",
    "LoopClock",
    "WarmRequest",
    "WarmingClock",
    "WarmingDecision",
    "WarmingStatus",
    "format_warming_status",
    "format_warming_usage",
    "warming_rows",
    "is_replayable",
    "prompt_cache_ttl_ms",
    "warming_delay_ms",
]

log = logging.getLogger(__name__)

CacheWarmingMode = Literal["off", "streaming", "idle"]
CACHE_WARMING_MODES: tuple[CacheWarmingMode, ...] = ("off", "streaming", "idle")

MAX_WARMING_AGE_MS = 60 * 60_000
"""While a run lasts, no refresh later than an hour after the request it repeats."""
MAX_IDLE_WARMING_AGE_MS = 30 * 60_000
"""Between runs the horizon is half an hour: the chance of a next prompt fades with time."""
MINIMUM_EXPECTED_SAVINGS = 0.05
"""Dollars a refresh must be expected to save."""
IDLE_CONTINUATION_PROBABILITY = 0.15
"""The chance (pi's measured constant) that a prompt comes while the cache lives, once the agent is idle."""

Phase = Literal["streaming", "idle"]
Action = Literal["warm", "stop"]
Send = Callable[[Model, LlmRequest, StreamOptions], AsyncIterator[StreamEvent]]


def warming_delay_ms(ttl_ms: float) -> int | None:
    """When to refresh a cache that lives ``ttl_ms``: at 90% of it, and at least ten seconds before its end;
    None for a lifetime of ten seconds or less."""
    if ttl_ms <= 10_000:
        return None
    return max(1, int(min(ttl_ms * 0.9, ttl_ms - 10_000)))


def prompt_cache_ttl_ms(model: Model, retention: str) -> int | None:
    """How long the cache entry a request with ``retention`` writes lives, from the model's ``promptCache``
    tier; None when caching is off or the model declares no lifetime for that tier."""
    if retention == "none":
        return None
    seconds = (model.prompt_cache or {}).get(retention)
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        return None
    return int(seconds * 1000)


def is_replayable(model: Model, thinking: str) -> bool:
    """Whether the request can be sent again with a one-token cap and still hit its cache entry.

    Anthropic's budget thinking (a Claude model without adaptive thinking) computes ``budget_tokens`` from
    the answer cap, and the cache is keyed on it: the replay would miss, and could think at length."""
    if thinking == "off" or not model.reasoning or model.api != "anthropic-messages":
        return True  # no thinking is sent (pi clamps the level of a model without reasoning to off)
    return (model.compat or {}).get("forceAdaptiveThinking") is True


class Cancellable(Protocol):
    def cancel(self) -> object: ...


class WarmingClock(Protocol):
    """The warmer's time: the current time in milliseconds and a timer."""

    def now_ms(self) -> float: ...

    def call_later(self, delay_ms: float, callback: Callable[[], None]) -> Cancellable: ...


class LoopClock:
    """Wall-clock time and the running event loop's timers."""

    def now_ms(self) -> float:
        return time.time() * 1000

    def call_later(self, delay_ms: float, callback: Callable[[], None]) -> Cancellable:
        return asyncio.get_running_loop().call_later(max(0.0, delay_ms) / 1000, callback)


@dataclass(frozen=True)
class WarmRequest:
    """A session request as it was sent: what a refresh sends again (with a one-token cap)."""

    model: Model
    request: LlmRequest
    options: StreamOptions
    send: Send


@dataclass(frozen=True)
class WarmingDecision:
    """The economics of one refresh (dollars) and what they decide."""

    phase: Phase
    warm_cost: float
    miss_cost: float
    continuation_probability: float
    expected_savings: float
    economics_available: bool
    action: Action


@dataclass(frozen=True)
class WarmingStatus:
    """What the warmer is doing (``/session`` shows it): ``inactive`` with its ``reason``, ``scheduled``
    for ``next_warm_at`` (ms), or ``refreshing``; ``decision`` once there are economics to show."""

    state: Literal["inactive", "scheduled", "refreshing"]
    reason: str | None = None
    next_warm_at: float | None = None
    decision: WarmingDecision | None = None
    extension_override: bool = False


@dataclass
class _Run:
    warm: WarmRequest
    is_current: Callable[[], bool]
    ttl_ms: int
    delay_ms: int
    started_at: float
    signal: AbortSignal
    phase: Phase = "streaming"
    next_warm_at: float = 0.0
    refresh_deadline_at: float = 0.0
    timer: Cancellable | None = None
    extension_override: bool = False


def _price(
    model: Model, *, input: int = 0, output: int = 0, cache_read: int = 0, cache_write: int = 0
) -> float:
    usage = Usage(input=input, output=output, cache_read=cache_read, cache_write=cache_write)
    return calculate_cost(model, usage).total


class CacheWarmer:
    """Keeps the prompt cache of the session's last request warm (see the module's description).

    Args:
        get_mode: The ``cacheWarming`` setting, read at each step (a change applies at once).
        last_prompt_tokens: The prompt size (input + cache read + cache write) the provider reported for
            the last answer of the conversation: what a miss would bill again.
        decide: Lets extensions overrule the action (``cache_warming_decision``); returns the action.
        record: Records a refresh's answer (its usage) and tells the session's listeners; called only
            for a refresh that the provider answered.
        clock: Time and timers (tests pass one they move by hand).
    """

    def __init__(
        self,
        get_mode: Callable[[], str],
        last_prompt_tokens: Callable[[], int],
        decide: Callable[[WarmingDecision], Awaitable[str]],
        record: Callable[[AssistantMessage, str | None], Awaitable[None]],
        clock: WarmingClock | None = None,
    ) -> None:
        self._get_mode = get_mode
        self._last_prompt_tokens = last_prompt_tokens
        self._decide = decide
        self._record = record
        self.clock: WarmingClock = clock if clock is not None else LoopClock()
        self._run: _Run | None = None
        self._inactive = WarmingStatus("inactive", "waiting for first request")
        self._tasks: set[asyncio.Task[None]] = set()

    def _mode(self) -> str:
        mode = self._get_mode()
        return mode if mode in CACHE_WARMING_MODES else "streaming"

    @property
    def mode(self) -> str:
        """The ``cacheWarming`` setting in effect: ``off``, ``streaming`` or ``idle``."""
        return self._mode()

    # --- status -----------------------------------------------------------------------------------

    @property
    def status(self) -> WarmingStatus:
        """The current state and the economics behind the next decision."""
        if self._mode() == "off":
            return WarmingStatus("inactive", "cache warming disabled")
        run = self._run
        if run is None:
            return self._inactive
        if not run.is_current():
            return WarmingStatus("inactive", "conversation context changed")
        decision = self._evaluate(run)
        refreshing = run.timer is None
        if not decision.economics_available and not refreshing:
            return WarmingStatus("inactive", "cache economics unavailable")
        return WarmingStatus(
            "refreshing" if refreshing else "scheduled",
            next_warm_at=run.next_warm_at,
            decision=decision,
            extension_override=run.extension_override,
        )

    # --- lifecycle --------------------------------------------------------------------------------

    def start(self, warm: WarmRequest, is_current: Callable[[], bool]) -> None:
        """Keep the cache entry ``warm`` writes alive while ``is_current()`` holds; replaces any earlier run."""
        self._clear_run()
        if self._mode() == "off":
            self._stop("cache warming disabled")
            return
        if not is_replayable(warm.model, warm.options.thinking):
            self._stop("request cannot be replayed safely")
            return
        ttl_ms = prompt_cache_ttl_ms(warm.model, warm.options.cache_retention)
        if ttl_ms is None:
            disabled = warm.options.cache_retention == "none"
            self._stop("request disabled prompt caching" if disabled else "cache lifetime unavailable")
            return
        delay_ms = warming_delay_ms(ttl_ms)
        if delay_ms is None:
            self._stop("cache lifetime unavailable")
            return
        self._run = _Run(
            warm=warm,
            is_current=is_current,
            ttl_ms=ttl_ms,
            delay_ms=delay_ms,
            started_at=self.clock.now_ms(),
            signal=AbortSignal(),
        )
        self._schedule(self._run)

    def rebase(self, request: LlmRequest, is_current: Callable[[], bool]) -> None:
        """The conversation ``request`` was sent from was rebuilt as other, equal messages (a deferred
        history built once its first request was written): keep warming that request, now while
        ``is_current()`` holds. Nothing changes when the run in progress warms another request."""
        run = self._run
        if run is not None and run.warm.request is request:
            run.is_current = is_current

    def on_agent_settled(self) -> None:
        """The agent has nothing more to do: ``streaming`` stops; ``idle`` goes on with idle economics."""
        run = self._run
        if run is None:
            return
        if self._mode() == "streaming":
            self._stop("agent run settled")
            return
        run.phase = "idle"
        deadline = run.started_at + MAX_IDLE_WARMING_AGE_MS
        if run.next_warm_at > deadline or self.clock.now_ms() >= deadline:
            self._stop("30-minute idle safety limit reached")

    def on_mode_changed(self) -> None:
        """Apply a changed ``cacheWarming`` setting to the run in progress."""
        run = self._run
        if run is None:
            return
        reason = self._mode_stop_reason(run)
        if reason is not None:
            self._stop(reason)

    def cancel(self) -> None:
        """Stop for good (the session closes): no timer left, a refresh under way aborted."""
        self._stop("inactive")

    async def settled(self) -> None:
        """Return once no refresh is under way (tests, and closing the session)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def _clear_run(self) -> None:
        run = self._run
        if run is None:
            return
        self._run = None
        if run.timer is not None:
            run.timer.cancel()
        run.signal.abort()

    def _stop(self, reason: str, decision: WarmingDecision | None = None, override: bool = False) -> None:
        self._clear_run()
        self._inactive = WarmingStatus("inactive", reason, decision=decision, extension_override=override)

    def _schedule(self, run: _Run) -> None:
        now = self.clock.now_ms()
        run.extension_override = False
        run.next_warm_at = now + run.delay_ms
        # A timer can fire late (a suspended laptop, a busy loop): half of the margin left before the
        # cache expires is kept for that and for sending; a later refresh would write, not warm.
        run.refresh_deadline_at = run.next_warm_at + (run.ttl_ms - run.delay_ms) // 2
        idle = run.phase == "idle"
        deadline = run.started_at + (MAX_IDLE_WARMING_AGE_MS if idle else MAX_WARMING_AGE_MS)
        if run.next_warm_at > deadline or now >= deadline:
            self._stop("30-minute idle safety limit reached" if idle else "one-hour safety limit reached")
            return
        run.timer = self.clock.call_later(run.next_warm_at - now, lambda: self._fire(run))

    def _fire(self, run: _Run) -> None:
        run.timer = None  # refreshing from now on (the status says so)
        task = asyncio.get_running_loop().create_task(self._refresh(run))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- one refresh ------------------------------------------------------------------------------

    async def _refresh(self, run: _Run) -> None:
        if not self._validate(run) or self._deadline_missed(run):
            return
        decision = self._evaluate(run)
        action: str = decision.action
        try:
            action = await self._decide(decision)
        except Exception:  # an extension's failure leaves pi-tui's own decision
            log.exception("cache_warming_decision failed")
        if action not in ("warm", "stop"):
            action = decision.action
        if not self._validate(run) or self._deadline_missed(run):
            return
        override = action != decision.action
        if action == "stop":
            if override:
                reason = "stopped by extension"
            elif decision.economics_available:
                reason = "expected savings below threshold"
            else:
                reason = "cache economics unavailable"
            self._stop(reason, decision, override)
            return
        run.extension_override = override
        try:
            message = await self._send(run)
            if not self._validate(run):  # the conversation moved on (or the session closed) meanwhile
                return
            if message is not None:
                await self._record(message, "extension override" if override else None)
        except Exception:  # best effort: a failed refresh must not touch the run in progress
            log.info("cache refresh failed", exc_info=True)
        if self._run is run:
            self._schedule(run)

    async def _send(self, run: _Run) -> AssistantMessage | None:
        """Send the request again with a one-token cap; the answer, or None when it failed or was aborted."""
        warm = run.warm
        options = dataclasses.replace(
            warm.options, max_tokens=1, max_retries=0, signal=run.signal, after_write=None
        )
        final: AssistantMessage | None = None
        async for event in warm.send(warm.model, warm.request, options):
            if isinstance(event, Done):
                final = event.message
            elif isinstance(event, Error):
                final = None
        if final is None or final.stop_reason in ("error", "aborted"):
            return None
        return final

    def _deadline_missed(self, run: _Run) -> bool:
        if self.clock.now_ms() <= run.refresh_deadline_at:
            return False
        self._stop("cache refresh deadline missed")
        return True

    def _validate(self, run: _Run) -> bool:
        if self._run is not run:
            return False
        reason = self._mode_stop_reason(run)
        if reason is None and not run.is_current():
            reason = "conversation context changed"
        if reason is None:
            return True
        self._stop(reason)
        return False

    def _mode_stop_reason(self, run: _Run) -> str | None:
        mode = self._mode()
        if mode == "off":
            return "cache warming disabled"
        if mode == "streaming" and run.phase == "idle":
            return "agent run settled"
        return None

    def _evaluate(self, run: _Run) -> WarmingDecision:
        model = run.warm.model
        tokens = self._last_prompt_tokens()
        hit = _price(model, cache_read=tokens)
        miss = (
            _price(model, cache_write=tokens) if model.cost.cache_write > 0 else _price(model, input=tokens)
        )
        warm_cost = _price(model, cache_read=tokens, output=1)
        miss_cost = max(0.0, miss - hit)
        probability = IDLE_CONTINUATION_PROBABILITY if run.phase == "idle" else 1.0
        savings = probability * miss_cost - warm_cost
        return WarmingDecision(
            phase=run.phase,
            warm_cost=warm_cost,
            miss_cost=miss_cost,
            continuation_probability=probability,
            expected_savings=savings,
            economics_available=tokens > 0 and (hit > 0 or miss > 0),
            action="warm" if savings >= MINIMUM_EXPECTED_SAVINGS else "stop",
        )


# --- words ---------------------------------------------------------------------------------------


def _dollars(value: float) -> str:
    return f"-${abs(value):.3f}" if value < 0 else f"${value:.3f}"


def _economics(decision: WarmingDecision) -> str:
    if not decision.economics_available:
        return "cache economics unavailable"
    percent = round(decision.continuation_probability * 100)
    chance = f"{percent}% continuation probability"
    if decision.phase == "streaming":
        chance += " while agent is running"
    compare = ">=" if decision.action == "warm" else "<"
    return f"{chance}, expected savings {_dollars(decision.expected_savings)} {compare} ${MINIMUM_EXPECTED_SAVINGS:.3f}"


def _decision_time(next_warm_at: float | None, now: float) -> str:
    if next_warm_at is None or next_warm_at <= now:
        return "Decision now"
    remaining = -int(-(next_warm_at - now) // 1000)  # whole seconds, rounded up
    hours, remaining = divmod(remaining, 3600)
    minutes, seconds = divmod(remaining, 60)
    parts = [f"{hours}h"] if hours else []
    if minutes:
        parts.append(f"{minutes}m")
    if seconds or not parts:
        parts.append(f"{seconds}s")
    return "Decision in " + " ".join(parts)


def format_warming_status(status: WarmingStatus, now: float) -> str:
    """The ``/session`` status line, as pi words it (``now`` in ms, on the warmer's clock)."""
    decision = status.decision
    if decision is None or (
        status.state == "inactive" and not decision.economics_available and not status.extension_override
    ):
        return f"Inactive ({status.reason or 'unknown reason'})"
    if status.extension_override:
        details = f"extension override, {_economics(decision)}"
    else:
        details = f"{_economics(decision)} -> {decision.action}"
    if status.state == "inactive":
        return f"Stopped ({details})"
    if status.state == "refreshing":
        return f"Warming cache ({details})"
    return f"{_decision_time(status.next_warm_at, now)} ({details})"


def format_warming_usage(cost_total: float, note: str | None) -> str:
    """The chat's line for a refresh: ``Cache warmed: $0.0123`` (at least three decimals, no trailing zeros
    beyond them), with its note in brackets."""
    text = f"{cost_total:.6f}"
    whole, _, decimals = text.partition(".")
    decimals = decimals[:3] + decimals[3:].rstrip("0")
    suffix = f" ({note})" if note else ""
    return f"Cache warmed{suffix}: ${whole}.{decimals}"


def warming_rows(warmer: CacheWarmer) -> list[tuple[str, str]]:
    """What ``/session`` says about cache warming, as (label, value) rows: the mode, the status line and,
    when there are economics to show, what a miss would cost more than a cache read and what a refresh
    costs."""
    status = warmer.status
    rows = [
        ("Cache warming", warmer.mode),
        ("Warming status", format_warming_status(status, warmer.clock.now_ms())),
    ]
    decision = status.decision
    if decision is not None and decision.economics_available:
        rows.append(("Cache miss penalty", f"${decision.miss_cost:.3f}"))
        rows.append(("Refresh cost", f"${decision.warm_cost:.3f}"))
    return rows
