"""Oracle tests for Gemini: the ``google-genai`` SDK's own stream reading and pi-tui's agree.

For each scripted answer or fault, the body pi-tui builds is posted twice to two identical fakes: once
through the SDK's API client (its transport, its SSE reading, its in-stream error detection and its
error mapping; ``async_request_streamed`` is what ``generate_content_stream`` calls) and once through
`pi_tui.ai.wire` plus our chunk decoder. The decoded chunks must be identical and valid
``GenerateContentResponse`` objects for the SDK, and a failure must carry the same status.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from pi_tui.ai.providers._google_request import build_request
from pi_tui.ai.providers._google_stream import decode_event
from pi_tui.ai.stream import LlmRequest, StreamOptions
from pi_tui.ai.types import Model, UserMessage
from pi_tui.ai.wire import WireClient
from pi_tui.testing import FakeLLM, Fault, Reply, text, thinking, tool_call

from .provider_streams import READ_TOOLS, UNICODE, decode_over_wire, serve_checked

KEY = "oracle-key"
MODEL = "gemini-3.1-pro-preview"
PATH = f"models/{MODEL}:streamGenerateContent?alt=sse"

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
    "refusal": lambda: Reply([text("no")], stop_reason="refusal"),
    "usage_with_cache": lambda: Reply([text("ok")], usage={"input": 120, "output": 7, "cache_read": 30}),
    "rate_limit": lambda: Fault("rate_limit"),
    "overloaded": lambda: Fault("overloaded"),
    "api_error": lambda: Fault("api_error"),
    "auth": lambda: Fault("auth"),
    "context_overflow": lambda: Fault("context_overflow"),
    "stream_error": lambda: Fault(
        "stream_error", after_frames=3, reply=Reply([text("partial answer that breaks")])
    ),
    "truncate": lambda: Fault(
        "truncate", after_frames=2, reply=Reply([text("this answer is cut off early")])
    ),
}


def _serve() -> Iterator[FakeLLM]:
    yield from serve_checked(FakeLLM(api_key=KEY))


fake = pytest.fixture(_serve)
twin = pytest.fixture(_serve)


def _body(fake: FakeLLM) -> dict[str, Any]:
    assert fake.server is not None
    model = Model(id=MODEL, api="google-generative-ai", provider="google", reasoning=True, max_tokens=8192)
    request = LlmRequest("You are terse.", [UserMessage(content="hello")], READ_TOOLS)
    return build_request(model, request, StreamOptions(thinking="low"))


async def _sdk_chunks(
    fake: FakeLLM, body: dict[str, Any]
) -> tuple[list[dict[str, Any]], BaseException | None]:
    assert fake.server is not None
    client = genai.Client(
        api_key=KEY, http_options=genai_types.HttpOptions(base_url=fake.server.url, api_version="v1beta")
    )
    chunks: list[dict[str, Any]] = []
    error: BaseException | None = None
    try:
        stream = await client.aio._api_client.async_request_streamed("post", PATH, body)
        async for response in stream:
            chunks.append(json.loads(response.body))
    except Exception as exc:  # the oracle's verdict, compared below
        error = exc
    finally:
        await client.aio.aclose()
    return chunks, error


async def _wire_chunks(
    fake: FakeLLM, body: dict[str, Any]
) -> tuple[list[dict[str, Any]], BaseException | None]:
    assert fake.server is not None
    client = WireClient(fake.server.gemini_base_url, {"x-goog-api-key": KEY})
    return await decode_over_wire(client, f"/{PATH}", body, decode_event)


@pytest.mark.parametrize("case", list(TURNS))
async def test_sdk_and_wire_client_decode_the_same_gemini_chunks_and_failures(
    fake: FakeLLM, twin: FakeLLM, case: str
) -> None:
    body = _body(fake)
    fake.script([TURNS[case]()])
    twin.script([TURNS[case]()])
    sdk_chunks, sdk_error = await _sdk_chunks(fake, body)
    wire_chunks, wire_error = await _wire_chunks(twin, body)

    assert wire_chunks == sdk_chunks
    for chunk in wire_chunks:  # each is a response the SDK's own type accepts
        genai_types.GenerateContentResponse.model_validate(chunk)
    assert (sdk_error is None) == (wire_error is None), (sdk_error, wire_error)
    if sdk_error is not None:
        assert isinstance(sdk_error, genai_errors.APIError)
        assert getattr(wire_error, "status_code", None) == sdk_error.code
        assert getattr(wire_error, "body", None) == sdk_error.details
