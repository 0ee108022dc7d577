"""Oracle tests: the official SDKs' own stream parsing and pi-tui's wire client agree on every stream.

For each scripted answer or fault, the same request body is posted twice to the fake server: once
through the SDK's client (its transport, SSE decoder, event filtering and error mapping; ``post`` with
the SDK's typed stream class, exactly as the providers used it before the wire client) and once through
`pi_tui.ai.wire` plus the provider's event decoder. The decoded events must be identical, and a failure
must be described and classified the same (status, retryable, context overflow).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from pi_tui.ai import http
from pi_tui.ai.errors import is_context_overflow, is_retryable_error
from pi_tui.ai.providers import anthropic as anthropic_provider
from pi_tui.ai.providers import openai_completions, openai_responses
from pi_tui.ai.providers._common import describe_error
from pi_tui.ai.stream import LlmRequest, StreamOptions
from pi_tui.ai.types import AssistantMessage, Model, UserMessage
from pi_tui.ai.wire import WireClient
from pi_tui.testing import FakeLLM, Fault, Reply, text, thinking, tool_call

from .provider_streams import READ_TOOLS, UNICODE, decode_over_wire

KEY = "oracle-key"

TURNS: dict[str, Callable[[], Reply | Fault]] = {
    "text": lambda: Reply([text("Hello there, this is a plain answer.")]),
    "thinking_text_tool": lambda: Reply(
        [thinking("let me look at it"), text("Reading it now."), tool_call("read", {"path": "a.txt"})]
    ),
    "two_tools_small_chunks": lambda: Reply(
        [tool_call("read", {"path": "first.txt"}), tool_call("read", {"path": "second.txt"})],
        chunk=3,
        interleave_tool_calls=True,
    ),
    "unicode_one_char_chunks": lambda: Reply([text(UNICODE)], chunk=1),
    "ping_and_whole": lambda: Reply([text("pong")], chunk="whole", ping=True),
    "max_tokens": lambda: Reply([text("cut short")], stop_reason="max_tokens"),
    "refusal": lambda: Reply([text("no")], stop_reason="refusal"),
    "invalid_tool_json": lambda: Reply([tool_call("read", '{"path": "a.txt", ')]),
    "usage": lambda: Reply(
        [text("ok")], usage={"input": 120, "output": 7, "cache_read": 30, "cache_write": 5}
    ),
    "rate_limit": lambda: Fault("rate_limit"),
    "overloaded": lambda: Fault("overloaded"),
    "api_error": lambda: Fault("api_error"),
    "auth": lambda: Fault("auth"),
    "request_too_large": lambda: Fault("request_too_large"),
    "context_overflow": lambda: Fault("context_overflow"),
    "stream_error": lambda: Fault(
        "stream_error", after_frames=5, reply=Reply([text("partial answer that breaks")])
    ),
    "truncate": lambda: Fault(
        "truncate", after_frames=4, reply=Reply([text("this answer is cut off early")])
    ),
    "drop": lambda: Fault("drop", after_frames=3),
}

APIS = ["anthropic", "chat", "responses"]
_PROVIDERS: dict[str, Any] = {
    "anthropic": (anthropic_provider, "anthropic-messages", "claude-opus-4-1", "/v1/messages"),
    "chat": (openai_completions, "openai-completions", "gpt-5", "/chat/completions"),
    "responses": (openai_responses, "openai-responses", "gpt-5", "/responses"),
}


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    fake = FakeLLM()
    with fake.serve():
        yield fake


@pytest.fixture
def twin() -> Iterator[FakeLLM]:
    """A second, identical fake: each side gets a fresh server, so generated ids match."""
    fake = FakeLLM()
    with fake.serve():
        yield fake


def _model(fake: FakeLLM, api: str) -> Model:
    assert fake.server is not None
    module, api_name, model_id, _ = _PROVIDERS[api]
    base = fake.server.anthropic_base_url if api == "anthropic" else fake.server.openai_base_url
    return Model(
        id=model_id, api=api_name, provider="oracle", base_url=base, reasoning=True, max_tokens=32_000
    )


def _body(model: Model, api: str) -> dict[str, Any]:
    module = _PROVIDERS[api][0]
    request = LlmRequest("You are terse.", [UserMessage(content="hello")], READ_TOOLS)
    body: dict[str, Any] = module.build_request(model, request, StreamOptions(thinking="low"))
    return body


async def _sdk_events(
    model: Model, api: str, body: dict[str, Any]
) -> tuple[list[dict[str, Any]], BaseException | None]:
    """What the SDK decodes from the stream: its typed events (as JSON) and the exception it raised."""
    path = _PROVIDERS[api][3]
    events: list[dict[str, Any]] = []
    client: Any
    if api == "anthropic":
        client = anthropic.AsyncAnthropic(api_key=KEY, base_url=model.base_url, max_retries=0)
        cast_to: Any = anthropic.types.Message
        stream_cls: Any = anthropic.AsyncStream[anthropic.types.RawMessageStreamEvent]
    else:
        client = openai.AsyncOpenAI(api_key=KEY, base_url=model.base_url, max_retries=0)
        if api == "chat":
            cast_to = openai.types.chat.ChatCompletion
            stream_cls = openai.AsyncStream[openai.types.chat.ChatCompletionChunk]
        else:
            cast_to = openai.types.responses.Response
            stream_cls = openai.AsyncStream[openai.types.responses.ResponseStreamEvent]
    error: BaseException | None = None
    async with client:
        try:
            stream = await client.post(path, body=body, cast_to=cast_to, stream=True, stream_cls=stream_cls)
            async for event in stream:
                events.append(event.to_dict(mode="json"))
        except Exception as exc:  # the oracle's verdict, compared below
            error = exc
    return events, error


async def _wire_events(
    model: Model, api: str, body: dict[str, Any]
) -> tuple[list[dict[str, Any]], BaseException | None]:
    """What pi-tui decodes from the same stream."""
    module, _, _, path = _PROVIDERS[api]
    decode = anthropic_provider.decode_event if api == "anthropic" else openai_completions.decode_event
    assert model.base_url is not None
    base = model.base_url.removesuffix("/v1") if api == "anthropic" else model.base_url
    headers = (
        {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
        if api == "anthropic"
        else {"authorization": f"Bearer {KEY}"}
    )
    client = WireClient(base, headers)
    assert not client.proxied  # pi-tui's own HTTP client, not the httpx2 proxy fallback
    return await decode_over_wire(client, path, body, decode)


def _verdict(exc: BaseException) -> tuple[int | None, bool, bool]:
    message = AssistantMessage(stop_reason="error", error_message=describe_error(exc))
    status = getattr(exc, "status_code", None)
    return (None if status == 200 else status), is_retryable_error(message), is_context_overflow(message)


def _is_transport(exc: BaseException) -> bool:
    return isinstance(exc, httpx2.TransportError | openai.APIConnectionError | http.TransportError)


@pytest.mark.parametrize("case", list(TURNS))
@pytest.mark.parametrize("api", APIS)
async def test_sdk_and_wire_client_decode_the_same_events_and_failures(
    fake: FakeLLM, twin: FakeLLM, api: str, case: str
) -> None:
    body = _body(_model(fake, api), api)
    fake.script([TURNS[case]()])
    twin.script([TURNS[case]()])
    sdk_events, sdk_error = await _sdk_events(_model(fake, api), api, body)
    wire_events, wire_error = await _wire_events(_model(twin, api), api, body)

    assert wire_events == sdk_events
    assert (sdk_error is None) == (wire_error is None), (sdk_error, wire_error)
    if sdk_error is not None and wire_error is not None:
        assert _verdict(wire_error) == _verdict(sdk_error), (
            describe_error(sdk_error),
            describe_error(wire_error),
        )
        if _is_transport(sdk_error):
            assert _is_transport(wire_error), wire_error
        else:
            # HTTP and in-stream errors: the same one-line description, status and provider text.
            assert describe_error(wire_error) == describe_error(sdk_error)
    assert fake.violations == twin.violations == []
    if wire_error is not None and _is_transport(wire_error):
        assert isinstance(wire_error, http.TransportError)  # raised by pi-tui's own client
    fake.assert_script_consumed()
    twin.assert_script_consumed()


@pytest.mark.parametrize("api", APIS)
async def test_the_stream_reader_gives_the_same_message_from_sdk_events_as_from_the_provider(
    fake: FakeLLM, twin: FakeLLM, api: str
) -> None:
    """Feeding the SDK's decoded events to the reader gives what the provider itself returns."""
    module = _PROVIDERS[api][0]
    model = _model(fake, api)
    body = _body(model, api)
    turn = TURNS["thinking_text_tool"]
    fake.script([turn()])
    twin.script([turn()])
    sdk_events, error = await _sdk_events(model, api, body)
    assert error is None
    from pi_tui.ai.providers._common import MessageBuilder

    out = MessageBuilder(model)
    reader = module._Reader(out)
    for event in sdk_events:
        reader.handle(event)
    stop, _ = reader.result()
    via_sdk = out.finish(stop).message  # type: ignore[union-attr]

    stream_fn = {
        "anthropic": anthropic_provider.stream_anthropic,
        "chat": openai_completions.stream_openai_completions,
        "responses": openai_responses.stream_openai_responses,
    }[api]
    request = LlmRequest("You are terse.", [UserMessage(content="hello")], READ_TOOLS)
    options = StreamOptions(api_key=KEY, thinking="low")
    events = [e async for e in stream_fn(_model(twin, api), request, options)]
    ours = events[-1].message  # type: ignore[union-attr]
    assert ours.stop_reason == via_sdk.stop_reason == "toolUse"
    assert _comparable(ours) == _comparable(via_sdk)


def _comparable(message: AssistantMessage) -> dict[str, Any]:
    """The message as JSON without its timestamp; a Responses reasoning item compared as JSON, not text
    (the SDK dumps its fields in model order, the wire client keeps the server's order)."""
    data = message.to_json_dict()
    data.pop("timestamp", None)
    for block in data["content"]:
        signature = block.get("thinkingSignature")
        if isinstance(signature, str) and signature.startswith("{"):
            block["thinkingSignature"] = json.loads(signature)
    return data
