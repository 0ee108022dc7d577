"""Small helpers the built-in tools share: argument coercion, abort-aware thread offloading, and the
capped listing result of grep, find and ls."""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from pi_tui.agent.tool import ToolError, ToolResult
from pi_tui.ai.stream import AbortSignal
from pi_tui.ai.types import TextContent
from pi_tui.util.json_types import JsonObject

from .truncate import DEFAULT_MAX_BYTES, format_size, truncate_head

__all__ = [
    "ABORTED_MESSAGE",
    "raise_if_aborted",
    "abort_future",
    "run_blocking",
    "finish_in_thread",
    "str_arg",
    "opt_str_arg",
    "opt_int_arg",
    "opt_number_arg",
    "opt_bool_arg",
    "format_number",
    "Notice",
    "listing_result",
]

T = TypeVar("T")

ABORTED_MESSAGE = "Operation aborted"


def raise_if_aborted(signal: AbortSignal | None) -> None:
    if signal is not None and signal.aborted:
        raise ToolError(ABORTED_MESSAGE)


@contextlib.contextmanager
def abort_future(signal: AbortSignal | None) -> Iterator[asyncio.Future[None]]:
    """A future that resolves when ``signal`` fires (never, without a signal).

    Uses a listener that is removed on exit, so waiting on many tool calls leaves nothing
    registered on a long-lived signal.
    """
    loop = asyncio.get_running_loop()
    fired: asyncio.Future[None] = loop.create_future()

    def resolve() -> None:
        if not fired.done():
            fired.set_result(None)

    def on_abort() -> None:
        with contextlib.suppress(RuntimeError):  # the loop is already closed
            loop.call_soon_threadsafe(resolve)

    remove = signal.add_listener(on_abort) if signal is not None else (lambda: None)
    try:
        yield fired
    finally:
        remove()
        fired.cancel()


async def run_blocking(fn: Callable[[], T], signal: AbortSignal | None) -> T:
    """Run blocking ``fn`` in a worker thread; give up with "Operation aborted" when ``signal`` fires.

    The worker is not killed (Python cannot), so ``fn`` should poll ``signal.aborted`` and stop early.
    """
    raise_if_aborted(signal)
    work = asyncio.ensure_future(asyncio.to_thread(fn))
    if signal is None:
        return await work
    with abort_future(signal) as stop:
        racing: set[asyncio.Future[Any]] = {work, stop}
        await asyncio.wait(racing, return_when=asyncio.FIRST_COMPLETED)
    if work.done():
        return work.result()
    # Let the thread finish in the background; swallow whatever it ends with.
    work.add_done_callback(lambda f: f.cancelled() or f.exception())
    raise ToolError(ABORTED_MESSAGE)


async def finish_in_thread(fn: Callable[[], T]) -> T:
    """Run blocking ``fn`` in a worker thread and wait for it even if this task is cancelled.

    File-changing tools hold the file's mutation lock across this call; returning early on
    cancellation would release the lock while the write is still going on.
    """
    work = asyncio.ensure_future(asyncio.to_thread(fn))
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        await asyncio.wait({work})
        raise


def str_arg(params: JsonObject, name: str) -> str:
    value = params.get(name)
    if not isinstance(value, str):
        raise ToolError(f"Invalid arguments: '{name}' must be a string")
    return value


def opt_str_arg(params: JsonObject, name: str) -> str | None:
    return None if params.get(name) is None else str_arg(params, name)


def opt_number_arg(params: JsonObject, name: str) -> float | None:
    """A numeric argument; numeric strings are accepted, as pi's schema validation coerces them."""
    value = params.get(name)
    if value is None:
        return None
    if isinstance(value, bool):
        raise ToolError(f"Invalid arguments: '{name}' must be a number")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            pass
    raise ToolError(f"Invalid arguments: '{name}' must be a number")


def opt_int_arg(params: JsonObject, name: str) -> int | None:
    value = opt_number_arg(params, name)
    if value is None:
        return None
    if not math.isfinite(value):
        raise ToolError(f"Invalid arguments: '{name}' must be a finite number")
    return int(value)


def opt_bool_arg(params: JsonObject, name: str) -> bool:
    value = params.get(name)
    if isinstance(value, str):
        return value.strip().lower() == "true"
    return bool(value)


def format_number(value: float) -> str:
    """A number the way JavaScript prints it: ``2`` rather than ``2.0``, ``0.5`` stays ``0.5``."""
    if math.isfinite(value) and value == int(value):
        return str(int(value))
    return repr(value)


Notice = tuple[str, str, Any]
"""One bracketed note under a listing: ``(text, details key, details value)``."""


def listing_result(
    lines: list[str], *, limit: Notice | None = None, after: tuple[Notice, ...] = ()
) -> ToolResult:
    """grep's, find's and ls's result: the lines cut to pi's 50 KB, then their notices in brackets.

    Notices are joined by ``. `` in pi's order: the result-count ``limit`` (when reached), the byte
    limit (when the output was cut), then ``after``. Each also sets its key in ``details``.
    """
    truncation = truncate_head("\n".join(lines), max_lines=2**53)
    output = truncation.content
    notices: list[Notice] = [limit] if limit is not None else []
    if truncation.truncated:
        notices.append(
            (f"{format_size(DEFAULT_MAX_BYTES)} limit reached", "truncation", truncation.to_dict())
        )
    notices.extend(after)
    if notices:
        output += f"\n\n[{'. '.join(text for text, _, _ in notices)}]"
    details = {key: value for _, key, value in notices}
    return ToolResult(content=[TextContent(text=output)], details=details or None)
