"""The stored history is converted and JSON-encoded once per message, and shared parts never change."""

from __future__ import annotations

import gc
import json
import random
from typing import Any

import pytest

from pi_tui.ai.providers import (
    _bedrock_request,
    _google_request,
    anthropic,
    google,
    mistral,
    openai_completions,
    openai_responses,
)
from pi_tui.ai.providers._wire_cache import ConversionCache, encode_body, json_plain
from pi_tui.ai.stream import LlmRequest, StreamOptions
from pi_tui.ai.types import (
    AssistantMessage,
    ImageContent,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)

MODELS = {
    "anthropic": Model(id="claude-opus-4-1", api="anthropic-messages", provider="anthropic"),
    "chat": Model(id="gpt-5", api="openai-completions", provider="openai"),
    "responses": Model(id="gpt-5", api="openai-responses", provider="openai"),
    "google": Model(id="gemini-3.1-pro-preview", api="google-generative-ai", provider="google"),
    "mistral": Model(id="magistral-medium-latest", api="mistral-conversations", provider="mistral"),
    "bedrock": Model(
        id="us.anthropic.claude-opus-4-6-v1", api="bedrock-converse-stream", provider="amazon-bedrock"
    ),
}
MODULES: dict[str, Any] = {
    "anthropic": anthropic,
    "chat": openai_completions,
    "responses": openai_responses,
    "google": google,
    "mistral": mistral,
    "bedrock": _bedrock_request,
}
FIELDS = {"responses": "input", "google": "contents"}
TOOLS = [ToolDefinition(name="read", description="Read", parameters={"type": "object", "properties": {}})]


def _turns(n: int, model: Model) -> list[Any]:
    messages: list[Any] = [UserMessage(content="read the files")]
    for i in range(n):
        messages.append(
            AssistantMessage(
                content=[
                    TextContent(text=f"step {i} ü"),
                    ToolCall(id=f"call_{i}", name="read", arguments={"i": i}),
                ],
                api=model.api,
                provider=model.provider,
                model=model.id,
                stop_reason="toolUse",
            )
        )
        messages.append(
            ToolResultMessage(
                tool_call_id=f"call_{i}", tool_name="read", content=[TextContent(text=f"data {i}\u2028")]
            )
        )
    return messages


def _fresh_body(api: str, request: LlmRequest) -> dict[str, Any]:
    """The body as built without any cache (an on_payload hook turns the cache off)."""
    options = StreamOptions(on_payload=lambda body: None)
    body: dict[str, Any] = MODULES[api].build_request(MODELS[api], request, options)
    return body


# The encoder each provider's stream sends its body with (Gemini's is shared with Vertex AI).
ENCODERS = {
    "anthropic": anthropic._encode,
    "chat": openai_completions._encode,
    "responses": openai_responses.encode_request,
    "google": _google_request.encode_request,
    "mistral": mistral._encode,
    "bedrock": _bedrock_request.encode_request,
}


def _wire(api: str, body: dict[str, Any]) -> Any:
    """What the provider sends: its own encoder, which splices the cached JSON."""
    return json.loads(ENCODERS[api](body))


@pytest.mark.parametrize("api", list(MODELS))
def test_cached_bodies_equal_fresh_ones_as_the_history_grows(api: str) -> None:
    model = MODELS[api]
    history = _turns(6, model)
    for size in range(1, len(history) + 1):
        request = LlmRequest("You are terse.", history[:size], TOOLS, cache_boundary=size)
        body = MODULES[api].build_request(model, request, StreamOptions())
        assert _wire(api, body) == json.loads(json.dumps(_fresh_body(api, request)))


def test_the_moving_anthropic_breakpoint_never_marks_a_shared_block() -> None:
    model = MODELS["anthropic"]
    history = _turns(3, model)
    first = anthropic.build_request(model, LlmRequest("s", history[:3], cache_boundary=3), StreamOptions())
    marked = [b for m in first["messages"] for b in m["content"] if "cache_control" in b]
    assert len(marked) == 1
    second = anthropic.build_request(model, LlmRequest("s", history[:5], cache_boundary=5), StreamOptions())
    # The block marked in the first request comes back unmarked: the marker went on a copy.
    blocks = [b for m in second["messages"] for b in m["content"]]
    assert sum("cache_control" in b for b in blocks) == 1
    assert not any("cache_control" in b for m in first["messages"][:-1] for b in m["content"])
    tool_result = second["messages"][2]["content"][0]
    assert tool_result["type"] == "tool_result" and "cache_control" not in tool_result


def test_parts_are_converted_once_per_message_and_dropped_with_it() -> None:
    cache = ConversionCache()
    calls: list[int] = []
    message = UserMessage(content="hi")

    def convert() -> list[dict[str, Any]]:
        calls.append(1)
        return [{"type": "text", "text": "hi"}]

    first = cache.parts(message, "k", convert)
    assert cache.parts(message, "k", convert) is first
    assert len(calls) == 1
    assert cache.json[id(first[0])] == b'{"type":"text","text":"hi"}'
    cache.parts(message, "other model", convert)  # another conversion key converts again
    assert len(calls) == 2
    del message
    gc.collect()
    assert len(cache) == 0 and cache.json == {}


def test_a_whole_wire_message_is_kept_with_its_json_and_dropped_with_it() -> None:
    cache = ConversionCache()
    message = UserMessage(content=[TextContent(text="hé")])
    calls: list[int] = []

    def convert(source: Any) -> list[dict[str, Any]]:
        calls.append(id(source))
        return [{"type": "text", "text": source.content[0].text}]

    wire = cache.message(message, "k", "user", convert)
    assert wire == {"role": "user", "content": [{"type": "text", "text": "hé"}]}
    assert cache.message(message, "k", "user", convert) is wire and calls == [id(message)]
    assert cache.json[id(wire)] == '{"role":"user","content":[{"type":"text","text":"hé"}]}'.encode()
    assert (
        encode_body({"messages": [wire]}, "messages", cache)
        == b'{"messages":[' + cache.json[id(wire)] + b"]}"
    )
    other = cache.message(message, "another model", "user", convert)  # another key converts again
    assert other is not wire and len(calls) == 2 and id(wire) not in cache.json
    del message
    gc.collect()
    assert len(cache) == 0 and cache.json == {}


def test_encode_body_matches_the_plain_encoder_and_splices_known_parts() -> None:
    block = {"type": "text", "text": 'é\u2028"x"'}
    body = {"model": "m", "messages": [{"role": "user", "content": [block]}, {"role": "x", "n": 1}], "n": 1.5}
    plain = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    assert json.loads(encode_body(body, "messages", ConversionCache())) == json.loads(plain)
    cache = ConversionCache()
    cache.json[id(block)] = b'{"spliced":true}'
    spliced = encode_body(body, "messages", cache).decode()
    assert json.loads(spliced)["messages"][0]["content"] == [{"spliced": True}]
    assert json.loads(encode_body({"messages": []}, "messages", cache)) == {"messages": []}


def _random_history(rng: random.Random, model: Model, size: int) -> list[Any]:
    """Histories with everything `prepare_messages` repairs: failed turns, missing, orphan and
    duplicate tool results, other models' thinking, consecutive same-role messages."""
    other = Model(id="gpt-5", api="openai-responses", provider="openai")
    messages: list[Any] = []
    open_calls: list[str] = []
    for n in range(size):
        roll = rng.random()
        if roll < 0.25:
            messages.append(UserMessage(content=f"user {n}"))
        elif roll < 0.55:
            source = other if rng.random() < 0.2 else model
            # Another model's ids may hold characters a provider renames (Gemini 3 sends ids).
            mark = "|" if source is other else "_"
            calls = [
                ToolCall(id=f"c{n}{mark}{k}", name="read", arguments={"n": n})
                for k in range(rng.randint(0, 2))
            ]
            content: list[Any] = [TextContent(text=f"a{n}")]
            if source is other:
                content.insert(0, ThinkingContent(thinking=f"t{n}", thinking_signature="sig"))
            messages.append(
                AssistantMessage(
                    content=[*content, *calls],
                    api=source.api,
                    provider=source.provider,
                    model=source.id,
                    stop_reason=rng.choice(["toolUse", "toolUse", "stop", "error", "aborted"]),
                )
            )
            open_calls = [c.id for c in calls]
        else:
            call_id = rng.choice([*open_calls, "orphan"]) if open_calls else "orphan"
            result: list[Any] = [TextContent(text=f"r{n}")]
            if rng.random() < 0.2:
                result.append(ImageContent(data="aGk=", mime_type="image/png"))
            messages.append(ToolResultMessage(tool_call_id=call_id, tool_name="read", content=result))
    return messages


def _plain_wire(api: str, model: Model, request: LlmRequest) -> Any:
    """The body's message list as the plain (non-incremental, uncached) conversion builds it."""
    body = MODULES[api].build_request(model, request, StreamOptions(on_payload=lambda body: None))
    return body[FIELDS.get(api, "messages")]


@pytest.mark.parametrize("api", list(MODELS))
@pytest.mark.parametrize("seed", range(8))
def test_incremental_conversion_equals_the_plain_one(api: str, seed: int) -> None:
    rng = random.Random(seed)
    model = MODELS[api].model_copy(update={"input": ["text", "image"], "reasoning": seed % 2 == 0})
    history = _random_history(rng, model, 60)
    size = 0
    while size < len(history):
        size = min(len(history), size + rng.randint(1, 4))
        if rng.random() < 0.15:
            size = max(0, size - rng.randint(1, 6))  # another branch: not an extension of the memo
        tail = rng.randint(0, 2)  # uncached request-only messages after the cached region
        boundary = None if tail == 0 and rng.random() < 0.5 else size
        messages = history[:size] + [UserMessage(content=f"panel {size}-{k}") for k in range(tail)]
        system = "You are terse." if rng.random() < 0.8 else "Another prompt."
        request = LlmRequest(system, messages, TOOLS, cache_boundary=boundary)
        body = MODULES[api].build_request(model, request, StreamOptions())
        sent = _wire(api, body)[FIELDS.get(api, "messages")]
        assert sent == json.loads(json.dumps(_plain_wire(api, model, request))), (seed, size, boundary)


def test_orjson_writes_every_character_and_plain_value_as_the_stdlib_does() -> None:
    """The ground `encode_body` stands on when it encodes plain messages with orjson."""
    import orjson

    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    values = [everything, 0, -(2**63), 2**64 - 1, True, False, None, [], {}, {"a": [{"b": ""}]}]
    assert orjson.dumps(values) == json.dumps(values, ensure_ascii=False, separators=(",", ":")).encode()
    assert json.dumps(1e-05) != orjson.dumps(1e-05).decode()  # floats differ: never plain


def test_json_plain_admits_strings_booleans_integers_and_nulls_only() -> None:
    assert json_plain({"a": [1, "x", None, True, {"b": []}]})
    assert not json_plain({"a": [1.5]})
    assert not json_plain({1: "int key"})
    assert not json_plain(("a", "tuple"))
    assert not json_plain(float("nan"))


@pytest.mark.parametrize("api", ["anthropic", "chat", "responses", "google", "mistral", "bedrock"])
def test_float_tool_inputs_in_a_long_history_are_sent_as_the_stdlib_writes_them(api: str) -> None:
    model = MODELS[api]
    field = FIELDS.get(api, "messages")
    history: list[Any] = [UserMessage(content="go")]
    for i in range(150):  # long enough for runs of plain messages around the float ones
        arguments: dict[str, Any] = {"path": f"f{i}.py"}
        content: list[Any] = []
        if i % 37 == 0:
            arguments["tolerance"] = [1e-05, 2.5e-07, 1e16, 0.1][i % 4]
            # a stored Responses reasoning item is replayed as the server's JSON, floats and all
            signature = json.dumps({"type": "reasoning", "id": f"rs_{i}", "summary": [], "score": 1e-05})
            content.append(ThinkingContent(thinking="hm", thinking_signature=signature))
        history.append(
            AssistantMessage(
                content=[*content, ToolCall(id=f"toolu_{i}", name="read", arguments=arguments)],
                api=model.api,
                provider=model.provider,
                model=model.id,
                stop_reason="toolUse",
            )
        )
        history.append(
            ToolResultMessage(tool_call_id=f"toolu_{i}", tool_name="read", content=[TextContent(text="ok")])
        )
    for size in (len(history) - 2, len(history)):  # a first body, then one that reuses its pieces
        request = LlmRequest("s", history[:size], TOOLS, cache_boundary=size)
        sent = ENCODERS[api](MODULES[api].build_request(model, request, StreamOptions()))
        fresh = _fresh_body(api, request)
        # (Mistral's body keeps pi's key order; the others send the history first)
        ordered = fresh if api == "mistral" else {field: fresh[field], **{k: v for k, v in fresh.items() if k != field}}
        assert sent == json.dumps(ordered, ensure_ascii=False, separators=(",", ":")).encode()
        assert b"tolerance" in sent and b"1e-05" in sent


@pytest.mark.parametrize("api", list(MODELS))
@pytest.mark.parametrize("seed", range(3))
def test_a_long_history_converted_in_slices_equals_the_plain_conversion(api: str, seed: int) -> None:
    """The cached region is prepared and converted a slice at a time: tool flows, merged results and
    the breakpoint across slice boundaries come out as one pass makes them."""
    rng = random.Random(seed)
    model = MODELS[api].model_copy(update={"input": ["text", "image"]})
    history = _random_history(rng, model, 1_500)
    for boundary in (len(history), len(history) - 3):
        request = LlmRequest("You are terse.", history, TOOLS, cache_boundary=boundary)
        body = MODULES[api].build_request(model, request, StreamOptions())
        sent = _wire(api, body)[FIELDS.get(api, "messages")]
        assert sent == json.loads(json.dumps(_plain_wire(api, model, request))), (seed, boundary)


def _with_repeated_ids(rng: random.Random, history: list[Any]) -> list[Any]:
    """``history`` with some assistant turns calling one id twice (a broken history can)."""
    out: list[Any] = []
    for message in history:
        calls = message.tool_calls() if isinstance(message, AssistantMessage) else []
        if calls and rng.random() < 0.3:
            message = message.model_copy(update={"content": [*message.content, calls[0]]})
        out.append(message)
    return out


@pytest.mark.parametrize("api", list(MODELS))
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("inputs", [["text", "image"], ["text"]])
def test_a_paired_request_sends_what_the_plain_preparation_sends(
    api: str, seed: int, inputs: list[str]
) -> None:
    """The engine's requests are already paired (`transform_messages`, cached and uncached part each),
    so the provider skips its pairing bookkeeping; what it sends must not change by a byte."""
    from pi_tui.agent.convert import transform_messages

    rng = random.Random(seed)
    model = MODELS[api].model_copy(update={"input": inputs})
    history = _with_repeated_ids(rng, _random_history(rng, model, 400))
    for split in (len(history), len(history) - 5, rng.randint(0, len(history))):
        cached, uncached = transform_messages(history[:split]), transform_messages(history[split:])
        messages = [*cached, *uncached]
        paired = LlmRequest("You are terse.", messages, TOOLS, cache_boundary=len(cached), paired=True)
        plain = LlmRequest("You are terse.", messages, TOOLS, cache_boundary=len(cached))
        for request in (paired, plain, paired):  # the memo kept from one kind must not serve the other
            body = MODULES[api].build_request(model, request, StreamOptions())
            sent = _wire(api, body)[FIELDS.get(api, "messages")]
            assert sent == json.loads(json.dumps(_plain_wire(api, model, plain))), (seed, split)
