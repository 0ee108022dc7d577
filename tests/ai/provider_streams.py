"""Shared set-up of the provider wire tests: a served fake that must end with no rule violations, a
one-pixel PNG for image input, a read tool and a text that is hard to stream (for the oracle tests), and
the collector that drains a provider stream into its events and final message."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator

from pi_tui.ai.stream import AbortSignal, Done, Error, StreamEvent, TextDelta
from pi_tui.ai.types import AssistantMessage, ToolDefinition
from pi_tui.testing import FakeLLM

UNICODE = 'Zeilen\u2028getrennt, emoji \U0001f600, 漢字 and a quote " and \\ backslash\nnew line'
READ_TOOLS = [
    ToolDefinition(
        name="read",
        description="Read a file",
        parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    )
]
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def serve_checked(fake: FakeLLM) -> Iterator[FakeLLM]:
    """Serve ``fake`` for one test (use with ``yield from`` in a fixture); afterwards it must have seen
    no request that breaks its API's rules."""
    with fake.serve():
        yield fake
    assert fake.violations == []


async def collect(stream: AsyncIterator[StreamEvent]) -> tuple[list[StreamEvent], AssistantMessage]:
    """Every event of ``stream`` and the message its last event (``Done`` or ``Error``) carries."""
    events = [event async for event in stream]
    final = events[-1]
    assert isinstance(final, Done | Error)
    return events, final.message if isinstance(final, Done) else final.error


async def abort_at_first_text(
    start: Callable[[AbortSignal], AsyncIterator[StreamEvent]],
) -> list[StreamEvent]:
    """Every event of the stream ``start(signal)`` opens, aborting ``signal`` at its first text delta."""
    signal = AbortSignal()
    events: list[StreamEvent] = []
    async for event in start(signal):
        events.append(event)
        if isinstance(event, TextDelta):
            signal.abort()
    return events
