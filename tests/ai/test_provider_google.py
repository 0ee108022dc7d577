from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pi_tui.ai.errors import is_context_overflow, is_retryable_error
from pi_tui.ai.providers._common import MessageBuilder
from pi_tui.ai.providers._google_stream import Reader
from pi_tui.ai.providers.google import stream_google
from pi_tui.ai.stream import Error, LlmRequest, StreamEvent, StreamOptions, TextDelta
from pi_tui.ai.types import (
    AssistantMessage,
    ImageContent,
    LlmMessage,
    Model,
    ModelCost,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)
from pi_tui.testing import FakeLLM, Fault, Reply, text, thinking, tool_call

from .provider_streams import PIXEL, abort_a_slow_answer, collect, serve_checked

KEY = "gemini-test-key"
LEVELS = {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None}
READ = ToolDefinition(
    name="read",
    description="Read a file",
    parameters={
        "type": "object",
        "properties": {"path": {"type": "string"}, "limit": {"type": "number"}},
        "required": ["path"],
    },
)
STRICT_READ = ToolDefinition(
    name="read",
    description="Read a file",
    parameters=READ.parameters,
    constrainedSampling={"type": "json_schema", "strict": "prefer"},
)


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    yield from serve_checked(FakeLLM(api_key=KEY))


def _model(fake: FakeLLM, model_id: str = "gemini-3.1-pro-preview", **extra: Any) -> Model:
    assert fake.server is not None
    fields: dict[str, Any] = {
        "id": model_id,
        "api": "google-generative-ai",
        "provider": "google",
        "base_url": fake.server.gemini_base_url,
        "reasoning": True,
        "input": ["text", "image"],
        "max_tokens": 65536,
        "compat": {"thinkingLevelMap": LEVELS} if model_id.startswith("gemini-3") else None,
    }
    fields.update(extra)
    return Model(**fields)


async def _run(
    model: Model, messages: list[LlmMessage], tools: list[ToolDefinition] | None = None, **options: Any
) -> tuple[list[StreamEvent], AssistantMessage]:
    opts = StreamOptions(api_key=KEY, **{"thinking": "medium", **options})
    return await collect(stream_google(model, LlmRequest("You are terse.", messages, tools or []), opts))


async def test_tool_loop_keeps_thought_signatures_and_call_ids_across_turns(fake: FakeLLM) -> None:
    fake.script(
        [
            Reply([thinking("look at the file"), text("Reading it."), tool_call("read", {"path": "a.txt"})]),
            Reply([text("It says hi.")]),
        ]
    )
    model = _model(fake)
    prompt = UserMessage(content="what is in a.txt?")
    _, first = await _run(model, [prompt], [READ])
    assert first.stop_reason == "toolUse"
    thought, said, call = first.content
    assert isinstance(thought, ThinkingContent) and thought.thinking_signature
    assert isinstance(call, ToolCall) and call.thought_signature and call.id == "call_fake_0001"
    result = ToolResultMessage(tool_call_id=call.id, tool_name="read", content=[TextContent(text="hi")])
    _, second = await _run(model, [prompt, first, result], [READ])

    assert second.text() == "It says hi." and second.stop_reason == "stop"
    contents = fake.requests[-1].body["contents"]
    assert contents[1] == {
        "parts": [
            {"text": "look at the file", "thought": True, "thoughtSignature": thought.thinking_signature},
            {"text": "Reading it."},
            {
                "functionCall": {"args": {"path": "a.txt"}, "id": "call_fake_0001", "name": "read"},
                "thoughtSignature": call.thought_signature,
            },
        ],
        "role": "model",
    }
    assert contents[2] == {
        "parts": [
            {"functionResponse": {"name": "read", "response": {"output": "hi"}, "id": "call_fake_0001"}}
        ],
        "role": "user",
    }
    # The answer without calls is signed on a trailing empty part; the signature lands on the text block.
    said_block = second.content[0]
    assert isinstance(said_block, TextContent) and said_block.text_signature


async def test_request_carries_system_instruction_tools_and_level_thinking(fake: FakeLLM) -> None:
    fake.script([Reply([text("ok")])])
    await _run(_model(fake), [UserMessage(content="hi")], [READ], thinking="high", temperature=0.5)
    body = fake.requests[-1].body
    assert list(body) == ["contents", "systemInstruction", "tools", "generationConfig"]
    assert body["systemInstruction"] == {"parts": [{"text": "You are terse."}], "role": "user"}
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {"name": "read", "description": "Read a file", "parametersJsonSchema": READ.parameters}
            ]
        }
    ]
    assert body["generationConfig"] == {
        "temperature": 0.5,
        "maxOutputTokens": 65536,
        "thinkingConfig": {"includeThoughts": True, "thinkingLevel": "HIGH"},
    }
    assert fake.requests[-1].path == "/v1beta/models/gemini-3.1-pro-preview:streamGenerateContent?alt=sse"
    assert fake.requests[-1].headers["x-goog-api-key"] == "<redacted>"


@pytest.mark.parametrize(
    ("model_id", "level", "expected"),
    [
        ("gemini-2.5-pro", "medium", {"includeThoughts": True, "thinkingBudget": 8192}),
        ("gemini-2.5-pro", "high", {"includeThoughts": True, "thinkingBudget": 32768}),
        ("gemini-2.5-flash-lite", "minimal", {"includeThoughts": True, "thinkingBudget": 512}),
        ("gemini-2.5-flash", "low", {"includeThoughts": True, "thinkingBudget": 2048}),
        ("gemini-2.5-flash", "off", {"thinkingBudget": 0}),
        ("gemini-3.1-pro-preview", "off", {"thinkingLevel": "LOW"}),
        ("gemini-3.1-pro-preview", "xhigh", {"includeThoughts": True, "thinkingLevel": "HIGH"}),
        ("gemma-4-31b-it", "medium", {"includeThoughts": True, "thinkingLevel": "HIGH"}),
        ("gemma-4-31b-it", "off", {"thinkingLevel": "MINIMAL"}),
    ],
)
async def test_thinking_config_follows_pis_levels_and_budgets(
    fake: FakeLLM, model_id: str, level: str, expected: dict[str, Any]
) -> None:
    fake.script([Reply([text("ok")])])
    gemma = {"off": None, "minimal": "MINIMAL", "low": None, "medium": None, "high": "HIGH"}
    extra: dict[str, Any] = {"thinking_level_map": gemma} if model_id.startswith("gemma") else {}
    await _run(_model(fake, model_id, **extra), [UserMessage(content="hi")], thinking=level)
    assert fake.requests[-1].body["generationConfig"]["thinkingConfig"] == expected


async def test_non_reasoning_model_sends_no_thinking_config(fake: FakeLLM) -> None:
    fake.script([Reply([text("ok")])])
    await _run(_model(fake, "gemma-3-27b-it", reasoning=False), [UserMessage(content="hi")])
    assert "thinkingConfig" not in fake.requests[-1].body["generationConfig"]


async def test_strict_tools_on_gemini_3_use_validated_mode_and_strict_schema(fake: FakeLLM) -> None:
    fake.script([Reply([text("ok")]), Reply([text("ok")])])
    await _run(_model(fake), [UserMessage(content="hi")], [STRICT_READ])
    body = fake.requests[-1].body
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "VALIDATED"}}
    schema = body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"]
    assert schema["required"] == ["path", "limit"] and schema["additionalProperties"] is False
    assert schema["properties"]["limit"] == {"anyOf": [{"type": "number"}, {"type": "null"}]}
    assert STRICT_READ.parameters["required"] == ["path"]  # the tool's own schema is untouched

    await _run(_model(fake, "gemini-2.5-flash"), [UserMessage(content="hi")], [STRICT_READ])
    older = fake.requests[-1].body
    assert "toolConfig" not in older
    assert older["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"] == READ.parameters


async def test_another_models_history_is_replayed_as_plain_text_without_signatures(fake: FakeLLM) -> None:
    fake.script([Reply([text("ok")])])
    foreign = AssistantMessage(
        api="anthropic-messages",
        provider="anthropic",
        model="claude-opus-4-6",
        stop_reason="toolUse",
        content=[
            ThinkingContent(thinking="private thought", thinking_signature="c2lnbmVk"),
            TextContent(text="calling", text_signature="c2lnbmVk"),
            ToolCall(id="toolu|01/abc", name="read", arguments={"path": "x"}, thought_signature="c2lnbmVk"),
        ],
    )
    messages: list[LlmMessage] = [
        UserMessage(content="go"),
        foreign,
        ToolResultMessage(tool_call_id="toolu|01/abc", tool_name="read", content=[TextContent(text="x!")]),
        AssistantMessage(api="anthropic-messages", provider="anthropic", model="claude-opus-4-6", content=[]),
        UserMessage(content="now you"),
    ]
    _, answer = await _run(_model(fake), messages, [READ])
    assert answer.stop_reason == "stop"  # Gemini 3 accepts unsigned calls of turns before the last prompt
    contents = fake.requests[-1].body["contents"]
    assert contents[1]["parts"] == [
        {"text": "private thought"},
        {"text": "calling"},
        {"functionCall": {"args": {"path": "x"}, "id": "toolu_01_abc", "name": "read"}},
    ]
    assert contents[2]["parts"][0]["functionResponse"]["id"] == "toolu_01_abc"


async def test_older_gemini_gets_no_call_ids_and_tool_images_in_a_separate_turn(fake: FakeLLM) -> None:
    fake.script([Reply([text("ok")])])
    call = AssistantMessage(
        api="google-generative-ai",
        provider="google",
        model="gemini-2.5-flash",
        stop_reason="toolUse",
        content=[ToolCall(id="read_1", name="read", arguments={"path": "p.png"})],
    )
    image = ImageContent(data=PIXEL, mime_type="image/png")
    messages: list[LlmMessage] = [
        UserMessage(content=[TextContent(text="look"), image]),
        call,
        ToolResultMessage(tool_call_id="read_1", tool_name="read", content=[image]),
    ]
    await _run(_model(fake, "gemini-2.5-flash"), messages, [READ])
    contents = fake.requests[-1].body["contents"]
    assert contents[0]["parts"][1] == {"inlineData": {"mimeType": "image/png", "data": PIXEL}}
    assert contents[1]["parts"] == [{"functionCall": {"args": {"path": "p.png"}, "name": "read"}}]
    assert contents[2]["parts"] == [
        {"functionResponse": {"name": "read", "response": {"output": "(see attached image)"}}}
    ]
    assert contents[3]["parts"] == [
        {"text": "Tool result image:"},
        {"inlineData": {"mimeType": "image/png", "data": PIXEL}},
    ]


async def test_gemini_3_nests_tool_images_and_merges_parallel_results(fake: FakeLLM) -> None:
    fake.script(
        [Reply([tool_call("read", {"path": "a"}), tool_call("read", {"path": "b"})]), Reply([text("ok")])]
    )
    model = _model(fake)
    prompt = UserMessage(content="read both")
    _, first = await _run(model, [prompt], [READ])
    calls = first.tool_calls()
    assert [c.id for c in calls] == ["call_fake_0001", "call_fake_0002"]
    assert calls[0].thought_signature and not calls[1].thought_signature
    image = ImageContent(data=PIXEL, mime_type="image/png")
    results = [
        ToolResultMessage(tool_call_id=calls[0].id, tool_name="read", content=[TextContent(text="A")]),
        ToolResultMessage(tool_call_id=calls[1].id, tool_name="read", content=[image], is_error=True),
    ]
    await _run(model, [prompt, first, *results], [READ])
    contents = fake.requests[-1].body["contents"]
    assert len(contents) == 3
    assert contents[2]["parts"] == [
        {"functionResponse": {"name": "read", "response": {"output": "A"}, "id": "call_fake_0001"}},
        {
            "functionResponse": {
                "name": "read",
                "response": {"error": "(see attached image)"},
                "parts": [{"inlineData": {"mimeType": "image/png", "data": PIXEL}}],
                "id": "call_fake_0002",
            }
        },
    ]


async def test_usage_maps_cached_and_thought_tokens_and_prices_the_cache_read(fake: FakeLLM) -> None:
    fake.script(
        [Reply([thinking("t" * 40), text("ok")], usage={"input": 1000, "cache_read": 3000, "output": 50})]
    )
    model = _model(fake, cost=ModelCost(input=2.0, output=12.0, cache_read=0.2))
    _, message = await _run(model, [UserMessage(content="hi")])
    usage = message.usage
    assert (usage.input, usage.cache_read, usage.output, usage.cache_write) == (1000, 3000, 50, 0)
    assert usage.cost.cache_read == pytest.approx(3000 * 0.2 / 1e6)
    assert usage.cost.total == pytest.approx((1000 * 2 + 3000 * 0.2 + 50 * 12) / 1e6)


async def test_implicit_cache_reads_a_repeated_prefix(fake: FakeLLM) -> None:
    fake.script([Reply([text("one")]), Reply([text("two")])])
    model = _model(fake)
    long_prompt = UserMessage(content="context " * 3000)
    _, first = await _run(model, [long_prompt])
    _, second = await _run(model, [long_prompt, first, UserMessage(content="and again")])
    assert first.usage.cache_read == 0
    assert second.usage.cache_read > 5000
    assert second.usage.input + second.usage.cache_read == fake.requests[-1].prompt_tokens


@pytest.mark.parametrize(
    ("fault", "expected", "retryable"),
    [
        (
            Fault("rate_limit", retry_after_ms=1500),
            "429 RESOURCE_EXHAUSTED: Resource has been exhausted",
            True,
        ),
        (Fault("overloaded"), "503 UNAVAILABLE: The model is overloaded", True),
        (Fault("api_error"), "500 INTERNAL: An internal error has occurred", True),
        (Fault("context_overflow"), "400 INVALID_ARGUMENT: The input token count", False),
    ],
)
async def test_http_errors_keep_googles_status_and_message(
    fake: FakeLLM, fault: Fault, expected: str, retryable: bool
) -> None:
    fake.script([fault])
    _, message = await _run(_model(fake), [UserMessage(content="hi")])
    assert message.stop_reason == "error"
    assert (message.error_message or "").startswith(expected)
    assert is_retryable_error(message) is retryable
    if fault.kind == "rate_limit":
        assert "(retry after 1500 ms)" in (message.error_message or "")
    if fault.kind == "context_overflow":
        assert is_context_overflow(message)


async def test_a_wrong_key_says_which_variable_to_check(fake: FakeLLM) -> None:
    events: list[StreamEvent] = []
    async for event in stream_google(
        _model(fake), LlmRequest("", [UserMessage(content="hi")]), StreamOptions(api_key="wrong")
    ):
        events.append(event)
    final = events[-1]
    assert isinstance(final, Error)
    text_ = final.error.error_message or ""
    assert text_.startswith("400 INVALID_ARGUMENT: API key not valid. Please pass a valid API key.")
    assert "GEMINI_API_KEY" in text_


async def test_unknown_model_404_names_the_model_id_to_check(fake: FakeLLM) -> None:
    fake.script(
        [Fault("api_error", status=404, message="models/gemini-9 is not found for API version v1beta")]
    )
    _, message = await _run(_model(fake, "gemini-9"), [UserMessage(content="hi")])
    assert (message.error_message or "").startswith("404 NOT_FOUND: models/gemini-9 is not found")
    assert "check the model id" in (message.error_message or "")


async def test_error_chunk_in_the_stream_ends_with_its_status(fake: FakeLLM) -> None:
    fake.script([Fault("stream_error", after_frames=2, reply=Reply([text("partial answer that breaks")]))])
    events, message = await _run(_model(fake), [UserMessage(content="hi")])
    assert any(isinstance(e, TextDelta) for e in events)
    assert (message.error_message or "").startswith("503 UNAVAILABLE: The model is overloaded")
    assert is_retryable_error(message)


async def test_stream_without_finish_reason_is_an_error(fake: FakeLLM) -> None:
    fake.script([Fault("truncate", after_frames=2, reply=Reply([text("this answer is cut off early")]))])
    _, message = await _run(_model(fake), [UserMessage(content="hi")])
    assert message.stop_reason == "error"
    assert "stream ended without" in (message.error_message or "")


async def test_safety_and_max_tokens_stop_reasons(fake: FakeLLM) -> None:
    fake.script([Reply([text("no")], stop_reason="refusal"), Reply([text("cut")], stop_reason="max_tokens")])
    _, refused = await _run(_model(fake), [UserMessage(content="hi")])
    _, cut = await _run(_model(fake), [UserMessage(content="hi")])
    assert refused.stop_reason == "error" and refused.error_message == "Provider stopped with: SAFETY"
    assert cut.stop_reason == "length"


async def test_abort_ends_the_stream_at_once(fake: FakeLLM) -> None:
    events = await abort_a_slow_answer(fake, stream_google, _model(fake), KEY)
    assert sum(isinstance(e, TextDelta) for e in events) < 10


@pytest.mark.parametrize(
    ("status", "message", "check"),
    [
        (
            403,
            "Permission denied: Consumer has been suspended.",
            "check that the key or account may use this API",
        ),
        (401, "Request had invalid authentication credentials.", "check the credentials"),
    ],
)
async def test_403_and_401_name_what_to_check(fake: FakeLLM, status: int, message: str, check: str) -> None:
    fake.script([Fault("api_error", status=status, message=message, retry_after_ms=None)])
    _, answer = await _run(_model(fake), [UserMessage(content="hi")])
    text_ = answer.error_message or ""
    assert text_.startswith(
        f"{status} {'PERMISSION_DENIED' if status == 403 else 'UNAUTHENTICATED'}: {message}"
    )
    assert check in text_ and not is_retryable_error(answer)


async def test_lone_surrogates_are_dropped_and_pairs_joined_as_pi_sends_them(fake: FakeLLM) -> None:
    fake.script([Reply([text("ok")])])
    broken = "half \ud83d emoji and a pair \ud83d\ude00"
    messages: list[LlmMessage] = [
        UserMessage(content=broken),
        AssistantMessage(
            api="google-generative-ai",
            provider="google",
            model="gemini-2.5-flash",
            content=[ToolCall(id="r1", name="read", arguments={})],
            stop_reason="toolUse",
        ),
        ToolResultMessage(tool_call_id="r1", tool_name="read", content=[TextContent(text=broken)]),
    ]
    _, answer = await _run(_model(fake, "gemini-2.5-flash"), messages, [READ])
    assert answer.stop_reason == "stop"
    contents = fake.requests[-1].body["contents"]
    assert contents[0]["parts"][0]["text"] == "half  emoji and a pair \U0001f600"
    assert (
        contents[2]["parts"][0]["functionResponse"]["response"]["output"]
        == "half  emoji and a pair \U0001f600"
    )


def test_a_blocked_prompt_is_an_error_that_is_not_retried() -> None:
    model = Model(id="gemini-3.1-pro-preview", api="google-generative-ai", provider="google")
    reader = Reader(MessageBuilder(model))
    chunk = {
        "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
        "usageMetadata": {"promptTokenCount": 9},
    }
    assert reader.handle(chunk) == []
    stop, text_ = reader.result()
    assert (stop, text_) == ("error", "The provider blocked the prompt: PROHIBITED_CONTENT")
    assert not is_retryable_error(AssistantMessage(stop_reason="error", error_message=text_))


async def test_output_cap_is_cut_to_the_room_the_window_leaves_as_pi_does(fake: FakeLLM) -> None:
    fake.script([Reply([text("ok")]), Reply([text("ok")])])
    roomy = _model(fake)
    await _run(roomy, [UserMessage(content="hi")])
    assert fake.requests[-1].body["generationConfig"]["maxOutputTokens"] == 65536
    tight = _model(fake, context_window=20_000)
    prompt = "x" * 40_000  # pi's estimate: a token per four characters
    await _run(tight, [UserMessage(content=prompt)])
    cap = fake.requests[-1].body["generationConfig"]["maxOutputTokens"]
    estimate = 10_000 + len("You are terse.") // 4
    assert abs(cap - (20_000 - estimate - 4096)) <= 8


def test_a_model_without_image_input_gets_one_placeholder_per_run_of_images() -> None:
    """As pi: adjacent images become one placeholder text, in a prompt and in a tool result."""
    from pi_tui.ai.providers._google_request import build_request

    model = Model(id="gemini-2.5-flash", api="google-generative-ai", provider="google", input=["text"])
    image = ImageContent(data=PIXEL, mime_type="image/png")
    call = ToolCall(id="c1", name="read", arguments={"path": "a.png"})
    messages: list[LlmMessage] = [
        UserMessage(content=[TextContent(text="look"), image, image, TextContent(text="and"), image]),
        AssistantMessage(
            content=[call], stop_reason="toolUse", api=model.api, provider="google", model=model.id
        ),
        ToolResultMessage(tool_call_id="c1", tool_name="read", content=[image, image]),
    ]
    body = build_request(model, LlmRequest("", messages), StreamOptions())
    user, _, result = body["contents"]
    assert [p["text"] for p in user["parts"]] == [
        "look",
        "(image omitted: model does not support images)",
        "and",
        "(image omitted: model does not support images)",
    ]
    response = result["parts"][0]["functionResponse"]["response"]
    assert response == {"output": "(tool image omitted: model does not support images)"}
