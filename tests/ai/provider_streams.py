"""Shared set-up of the provider wire tests: a served fake that must end with no rule violations, a
one-pixel PNG for image input, a read tool and a text that is hard to stream (for the oracle tests), the
collector that drains a provider stream into its events and final message, and the oracle tests' reading
of a stream through pi-tui's wire client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from pi_tui.ai.providers._common import END_OF_STREAM
from pi_tui.ai.stream import AbortSignal, Done, Error, LlmRequest, StreamEvent, StreamOptions, TextDelta
from pi_tui.ai.types import AssistantMessage, Model, ToolDefinition, UserMessage
from pi_tui.ai.wire import WireClient, encode_body
from pi_tui.testing import FakeLLM, Reply, text

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


async def abort_a_slow_answer(
    fake: FakeLLM,
    stream: Callable[[Model, LlmRequest, StreamOptions], AsyncIterator[StreamEvent]],
    model: Model,
    api_key: str,
) -> list[StreamEvent]:
    """Every event of a slow 200-word answer ``fake`` streams through the provider's ``stream``, aborted
    at its first text delta; the stream must have ended with an ``aborted`` `Error`."""
    fake.script([Reply([text("word " * 200)], frame_delay=0.05)])
    request = LlmRequest("", [UserMessage(content="hi")])
    events = await abort_at_first_text(
        lambda signal: stream(model, request, StreamOptions(api_key=api_key, signal=signal))
    )
    final = events[-1]
    assert isinstance(final, Error) and final.reason == "aborted"
    return events


async def decode_over_wire(
    client: WireClient, path: str, body: dict[str, Any], decode: Callable[[str | None, str, Any], Any]
) -> tuple[list[Any], BaseException | None]:
    """Post ``body`` to ``path`` through pi-tui's wire ``client`` and read the stream with a provider's
    ``decode``, as the oracle tests' pi-tui side: what it decoded (events it skips left out, up to
    `END_OF_STREAM`) and the exception that ended the stream, if any. Closes the client."""
    items: list[Any] = []
    error: BaseException | None = None
    try:
        stream = await client.stream(path, encode_body(body))
        try:
            async for name, data in stream:
                item = decode(name, data, stream)
                if item is END_OF_STREAM:
                    break
                if item is not None:
                    items.append(item)
        finally:
            await stream.close()
    except Exception as exc:  # the verdict the oracle compares with the SDK's
        error = exc
    finally:
        await client.close()
    return items, error
