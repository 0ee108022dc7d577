"""Provider-level retries of a refused request (``retry.provider.maxRetries``, pi 0.87.1's).

Before any answer streams, a request the server refused with 408, 409, 429 or a 5xx (or an
``x-should-retry: true``), or that never reached it (a connection error), is sent again, up to
``StreamOptions.max_retries`` times (default 0: the agent's own retries handle failures, with their
notices). The wait is what the server asked for (``retry-after-ms``, ``retry-after``), else 0.5 s doubling
up to 8 s, less up to a quarter at random; a wait longer than ``max_retry_delay_ms`` (when that is above 0)
fails at once. pi applies this to Anthropic, OpenAI (Chat Completions and Responses), Azure OpenAI and
Gemini requests; so does pi-tui.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

from ..stream import ProviderError, StreamOptions
from ._common import http_failure

__all__ = ["with_provider_retries"]

T = TypeVar("T")

_MAX_BACKOFF_S = 8.0


def _retryable(exc: BaseException) -> bool:
    failure = http_failure(exc)
    if failure is None:
        return True  # no answer at all (connection refused, reset, timed out): pi's SDKs retry those
    should = failure.header("x-should-retry")
    if should == "true":
        return True
    if should == "false":
        return False
    status = failure.status
    return status is None or status in (408, 409, 429) or status >= 500


def _delay_ms(exc: BaseException, index: int, max_delay_ms: int) -> float:
    failure = http_failure(exc)
    asked = failure.retry_after_ms() if failure is not None else None
    if asked is not None:
        if max_delay_ms > 0 and asked > max_delay_ms:
            raise ProviderError(
                f"Server requested {-(-asked // 1000)}s retry delay (max: {-(-max_delay_ms // 1000)}s). {exc}"
            ) from exc
        return float(asked)
    backoff = min(0.5 * 2**index, _MAX_BACKOFF_S) * 1000
    return backoff * (1 - random.random() * 0.25)


async def with_provider_retries(send: Callable[[], Awaitable[T]], options: StreamOptions) -> T:
    """``send()``, again after a retryable failure, up to ``options.max_retries`` times.

    Raises:
        The last failure, a `ProviderError` when the server asks for a longer wait than allowed, or the
        abort of ``options.signal`` while waiting.
    """
    retries = max(0, options.max_retries)
    index = 0
    while True:
        try:
            return await send()
        except Exception as exc:
            signal = options.signal
            if signal is not None and signal.aborted:
                raise
            if index >= retries or not _retryable(exc):
                raise
            wait = _delay_ms(exc, index, options.max_retry_delay_ms) / 1000
            index += 1
            if signal is not None:
                await signal.sleep(wait)  # raises as soon as the request is aborted
            else:
                await asyncio.sleep(wait)
