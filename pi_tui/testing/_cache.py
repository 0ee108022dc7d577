"""Prompt-cache simulation (Anthropic explicit/automatic breakpoints, OpenAI automatic prefixes).

Anthropic (llm-apis.md §5.6): the flattened blocks get running prefix hashes ``H[i]`` (seeded with the
API key and model) and cumulative token counts ``T[i]``. For every breakpoint ``b`` the lookup walks
``b, b-1, …, b-19`` for a stored, unexpired hash; the best hit ``h`` gives ``read = T[h]`` and has its
expiry refreshed. Each breakpoint after ``h`` whose prefix reaches the model's minimum is stored with
``now + ttl`` and its tokens count as written (split 5m / 1h by the breakpoint's ttl). Everything
after the last written breakpoint is plain input, so ``input + read + write == total``.

OpenAI: prefixes are stored at every 128-token boundary from 1024 up (plus unrounded explicit
``prompt_cache_breakpoint`` ends), keyed by API key, model and ``prompt_cache_key``; ``cached`` is
the longest stored boundary matching the current prompt.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass

from pi_tui.util.json_types import JsonObject

from ._records import CacheUsage
from ._tokens import CHARS_PER_TOKEN, Segment

__all__ = ["FakeClock", "PromptCache", "TTL_SECONDS", "LOOKBACK_BLOCKS"]

TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
LOOKBACK_BLOCKS = 20


class FakeClock:
    """A clock that only moves when told to; the cache TTLs run on it.

    Args:
        start: the initial time in seconds.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        return self.now()

    def now(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> float:
        """Move the clock forward and return the new time."""
        if seconds < 0:
            raise ValueError("a clock only moves forward")
        with self._lock:
            self._now += seconds
            return self._now


@dataclass(slots=True)
class _Entry:
    expires_at: float
    ttl: float


def ttl_of(cache_control: JsonObject | None) -> str:
    ttl = (cache_control or {}).get("ttl") or "5m"
    return ttl if ttl in TTL_SECONDS else "5m"


class PromptCache:
    """The store of cached prefix hashes, shared by every API the fake serves."""

    def __init__(self) -> None:
        self._entries: dict[bytes, _Entry] = {}

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def _live(self, digest: bytes, now: float) -> _Entry | None:
        entry = self._entries.get(digest)
        if entry is None:
            return None
        if entry.expires_at <= now:
            del self._entries[digest]
            return None
        return entry

    # -- Anthropic ------------------------------------------------------------------------------

    def anthropic(
        self,
        segments: list[Segment],
        *,
        key_id: str,
        model: str,
        automatic: JsonObject | None,
        min_tokens: int,
        now: float,
    ) -> CacheUsage:
        """Simulate one Messages request and update the store."""
        running = hashlib.sha256(f"anthropic\0{key_id}\0{model}".encode())
        hashes: list[bytes] = []
        cumulative: list[int] = []
        total = 0
        for seg in segments:
            running.update(seg.prefix_bytes())
            running.update(seg.text.encode())
            hashes.append(running.digest())
            total += seg.tokens
            cumulative.append(total)

        points = breakpoints(segments, automatic)
        hit: int | None = None
        for b, _ in points:
            for j in range(b, max(-1, b - LOOKBACK_BLOCKS), -1):
                if self._live(hashes[j], now) is not None:
                    hit = j if hit is None else max(hit, j)
                    break
        read = 0
        if hit is not None:
            entry = self._entries[hashes[hit]]
            entry.expires_at = now + entry.ttl
            read = cumulative[hit]

        written_to = read
        by_ttl = {"5m": 0, "1h": 0}
        for b, ttl in points:
            if (hit is not None and b <= hit) or cumulative[b] < min_tokens:
                continue
            seconds = TTL_SECONDS[ttl]
            self._entries[hashes[b]] = _Entry(now + seconds, seconds)
            by_ttl[ttl] += cumulative[b] - written_to
            written_to = cumulative[b]
        write = written_to - read
        return CacheUsage(
            input=total - read - write,
            cache_read=read,
            cache_write=write,
            total=total,
            cache_write_5m=by_ttl["5m"],
            cache_write_1h=by_ttl["1h"],
            breakpoints=[b for b, _ in points],
            hit=hit,
            blocks=len(segments),
        )

    # -- OpenAI ---------------------------------------------------------------------------------

    def openai(
        self,
        segments: list[Segment],
        *,
        key_id: str,
        model: str,
        cache_key: str | None,
        ttl_seconds: float,
        now: float,
        min_tokens: int = 1024,
        step: int = 128,
    ) -> CacheUsage:
        """Simulate one Chat Completions / Responses request and update the store."""
        total = 0
        explicit: set[int] = set()
        for seg in segments:
            total += seg.tokens
            if seg.cache_control is not None:
                explicit.add(total)
        if total < min_tokens:
            return CacheUsage(input=total, total=total, blocks=len(segments))
        bounds = sorted({*range(min_tokens, total + 1, step), *(b for b in explicit if b >= min_tokens)})
        digests = _boundary_digests(segments, bounds, f"openai\0{key_id}\0{model}\0{cache_key or ''}")
        cached = 0
        for bound in reversed(bounds):
            if self._live(digests[bound], now) is not None:
                cached = bound
                break
        for digest in digests.values():
            self._entries[digest] = _Entry(now + ttl_seconds, ttl_seconds)
        return CacheUsage(
            input=total - cached,
            cache_read=cached,
            total=total,
            breakpoints=bounds,
            hit=cached or None,
            blocks=len(segments),
        )


def breakpoints(segments: list[Segment], automatic: JsonObject | None) -> list[tuple[int, str]]:
    """Block indices carrying a breakpoint, with their ttl; the automatic one goes on the last cacheable block."""
    points = [
        (i, ttl_of(seg.cache_control)) for i, seg in enumerate(segments) if seg.cache_control is not None
    ]
    if automatic is not None:
        last = next((i for i in range(len(segments) - 1, -1, -1) if segments[i].cacheable), None)
        if last is not None and all(i != last for i, _ in points):
            points.append((last, ttl_of(automatic)))
            points.sort()
    return points


def _boundary_digests(segments: list[Segment], bounds: list[int], seed: str) -> dict[int, bytes]:
    """Prefix hashes at the given token positions, in one incremental pass over the prompt.

    Within a segment the overhead tokens come first, then the text at 4 chars per token, so the prefix
    at token ``t`` is the header plus ``text[: 4 * (t - start - overhead)]``.
    """
    running = hashlib.sha256(seed.encode())
    digests: dict[int, bytes] = {}
    index = 0
    start = 0
    for seg in segments:
        end = start + seg.tokens
        running.update(seg.prefix_bytes())
        if index < len(bounds) and bounds[index] <= end:
            text = seg.text
            consumed = 0
            while index < len(bounds) and bounds[index] <= end:
                chars = min(len(text), max(0, bounds[index] - start - seg.overhead) * CHARS_PER_TOKEN)
                if chars > consumed:
                    running.update(text[consumed:chars].encode())
                    consumed = chars
                digests[bounds[index]] = running.digest()
                index += 1
            running.update(text[consumed:].encode())
        else:
            running.update(seg.text.encode())
        start = end
    return digests
