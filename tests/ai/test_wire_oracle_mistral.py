"""Oracle tests for Mistral: the ``mistralai`` SDK's own stream reading and pi-tui's agree.

For each scripted answer or fault, the SDK's ``chat.stream_async`` asks one fake, and the body it sent
is posted again to an identical twin through `pi_tui.ai.wire` plus our chunk decoder. Our decoded chunks,
read by the SDK's own ``CompletionChunk`` type, must equal the SDK's (thinking chunks, whole tool calls,
usage with cached tokens, finish reasons), and a failure must carry the same status and body.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from mistralai.client import Mistral
from mistralai.client.errors import MistralError
from mistralai.client.models import CompletionChunk

from pi_tui.ai.providers.mistral import PATH, MistralStreamError, decode_event
from pi_tui.ai.wire import HttpStatusError, WireClient
from pi_tui.testing import FakeLLM, Fault, Reply, text, thinking, tool_call

from .provider_streams import UNICODE, decode_over_wire, serve_checked

KEY = "oracle-key"
MODEL = "magistral-medium-latest"

TURNS: dict[str, Callable[[], Reply | Fault]] = {
    "text": lambda: Reply([text("Hello there, this is a plain answer.")]),
    "thinking_text_tool": lambda: Reply(
        [thinking("let me look at it"), text("Reading it now."), tool_call("read", {"path": "a.txt"})]
    ),
    "two_tools": lambda: Reply(
        [tool_call("read", {"path": "first.txt"}), tool_call("read", {"path": "second.txt"})]
    ),
    "unicode_one_char_chunks": lambda: Reply([text(UNICODE)], chunk=1),
    "max_tokens": lambda: Reply([text("cut short")], stop_reason="max_tokens"),
    "usage_with_cache": lambda: Reply([text("ok")], usage={"input": 120, "output": 7, "cache_read": 30}),
    "rate_limit": lambda: Fault("rate_limit", retry_after_ms=1000),
    "overloaded": lambda: Fault("overloaded"),
    "api_error": lambda: Fault("api_error"),
    "auth": lambda: Fault("auth"),
    "context_overflow": lambda: Fault("context_overflow"),
    "truncate": lambda: Fault(
        "truncate", after_frames=2, reply=Reply([text("this answer is cut off early")])
    ),
}


def _serve() -> Iterator[FakeLLM]:
    yield from serve_checked(FakeLLM(api_key=KEY))


fake = pytest.fixture(_serve)
twin = pytest.fixture(_serve)


def _dump(chunk: CompletionChunk) -> dict[str, Any]:
    dumped: dict[str, Any] = chunk.model_dump(mode="json", by_alias=True)
    return dumped


async def _sdk_chunks(fake: FakeLLM) -> tuple[list[dict[str, Any]], BaseException | None]:
    assert fake.server is not None
    chunks: list[dict[str, Any]] = []
    error: BaseException | None = None
    async with Mistral(api_key=KEY, server_url=fake.server.mistral_base_url) as client:
        try:
            stream = await client.chat.stream_async(
                model=MODEL,
                messages=[
                    {"role": "system", "content": "You are terse."},
                    {"role": "user", "content": "hello"},
                ],
                max_tokens=100,
            )
            async with stream:
                async for event in stream:
                    chunks.append(_dump(event.data))
        except Exception as exc:  # the oracle's verdict, compared below
            error = exc
    return chunks, error


async def _wire_chunks(
    twin: FakeLLM, body: dict[str, Any]
) -> tuple[list[dict[str, Any]], BaseException | None]:
    assert twin.server is not None
    client = WireClient(twin.server.mistral_base_url, {"authorization": f"Bearer {KEY}"})
    chunks, error = await decode_over_wire(client, PATH, body, decode_event)
    return [_dump(CompletionChunk.model_validate(chunk)) for chunk in chunks], error


@pytest.mark.parametrize("case", list(TURNS))
async def test_sdk_and_wire_client_decode_the_same_mistral_chunks_and_failures(
    fake: FakeLLM, twin: FakeLLM, case: str
) -> None:
    fake.script([TURNS[case]()])
    twin.script([TURNS[case]()])
    sdk_chunks, sdk_error = await _sdk_chunks(fake)
    body = fake.requests[0].body
    assert isinstance(body, dict) and body["stream"] is True
    wire_chunks, wire_error = await _wire_chunks(twin, body)

    assert wire_chunks == sdk_chunks
    assert (sdk_error is None) == (wire_error is None), (sdk_error, wire_error)
    if sdk_error is not None:
        assert isinstance(sdk_error, MistralError) and isinstance(wire_error, HttpStatusError)
        assert wire_error.status_code == sdk_error.status_code
        assert wire_error.response.text == sdk_error.body
    if case == "usage_with_cache":
        assert sdk_chunks[-1]["usage"]["prompt_tokens_details"]["cached_tokens"] == 30


async def test_an_error_object_in_place_of_a_chunk_is_refused_by_both(fake: FakeLLM, twin: FakeLLM) -> None:
    """Neither reads an error object sent mid-stream as a chunk: the SDK's type rejects it, we raise."""
    fault = lambda: Fault("stream_error", after_frames=2, reply=Reply([text("partial answer that breaks")]))  # noqa: E731
    fake.script([fault()])
    twin.script([fault()])
    sdk_chunks, sdk_error = await _sdk_chunks(fake)
    wire_chunks, wire_error = await _wire_chunks(twin, fake.requests[0].body)
    assert wire_chunks == sdk_chunks and len(wire_chunks) == 2
    assert sdk_error is not None and isinstance(wire_error, MistralStreamError)
    assert "overloaded" in str(wire_error)
